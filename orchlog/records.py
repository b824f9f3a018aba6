"""`record`: a dataclass whose methods are written the first time it is used.

    @record(frozen=True)
    class Pair:
        a: int
        b: int = 0

Python 3.11 writes a dataclass's __init__, __repr__, __eq__ (and, frozen, __hash__, __setattr__ and
__delattr__) by compiling source for each when the class statement runs: about a millisecond a class on
a 2.45 GHz core, most of a CLI command's start beyond NumPy's import, spent even on the many classes a
command never makes an instance of. `record` leaves the class as written until it is first used: the
first instance (by a call, or by unpickling: a copy starts from an instance) or the first look at its
fields (`dataclasses.fields`, `is_dataclass`, a dataclass subclass) turns it into the dataclass that
`dataclasses.dataclass` with the same options would have made, in place, once, under a lock. Even then
only `__init__` (and a frozen class's `__setattr__` and `__delattr__`) is compiled; `__repr__`, `__eq__` and
`__hash__` are closures over the fields that do what dataclasses' would. Type checkers see a dataclass
(PEP 681).
"""

from __future__ import annotations

import dataclasses
import inspect
import operator
import reprlib
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast, overload

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:  # a mark for type checkers only (typing has it from Python 3.11)

    def dataclass_transform(**_: Any) -> Callable[[Any], Any]:
        return lambda f: f


T = TypeVar("T", bound=type)

_FIELDS = "__dataclass_fields__"
_lock = threading.RLock()


class _Fields:
    """The class attribute `__dataclass_fields__` until the class is processed: reading it processes the class
    (which replaces this attribute with its own) and gives the real fields."""

    def __init__(self, cls: type, options: dict[str, Any]) -> None:
        self.cls, self.options = cls, options
        self.module = sys.modules.get(cls.__module__)  # the module being run, where the class statement is

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        _process(self.cls)
        return self.cls.__dict__[_FIELDS]


_STUBS = ("__init__", "__setstate__")  # what makes an instance: a call, or unpickling (copies start from one)


def _process(cls: type) -> None:
    with _lock:
        fields = cls.__dict__.get(_FIELDS)
        if not isinstance(fields, _Fields):
            return  # processed already (by another thread, or through a subclass)
        for name in (_FIELDS, *_STUBS):
            delattr(cls, name)
        # dataclasses reads the class's module from sys.modules (string annotations naming ClassVar); a module
        # run from a file and taken out again after its classes were made (codegen's tests) is put back meanwhile.
        module = fields.module
        absent = module is not None and sys.modules.get(cls.__module__) is None
        if module is not None and absent:
            sys.modules[cls.__module__] = module
        try:
            _dataclass(cls, fields.options)
        finally:
            if absent:
                del sys.modules[cls.__module__]


class _SignatureDoc:
    """The __doc__ dataclasses gives a class without a docstring (its name and signature), made when it is first
    read rather than while the class is processed: `inspect.signature` was a third of processing the record
    classes a compare makes (30 of its 45 have no docstring; 6 ms for one of them)."""

    def __get__(self, obj: object, owner: type) -> str:
        doc = owner.__name__ + str(inspect.signature(owner)).replace(" -> None", "")
        type.__setattr__(owner, "__doc__", doc)
        return doc


_DOC_LATER = "(the signature, made on first read)"  # truthy: dataclasses keeps a class's own __doc__


def _dataclass(cls: type, options: dict[str, Any]) -> None:
    """`dataclasses.dataclass(cls, **options)`, with __repr__, __eq__ and __hash__ made of closures over the
    fields instead of compiled (they were half of the compiling: a frozen class 1.5 ms, 0.6 ms without them;
    45 classes, 65 ms of a compare; a compiled __init__ is what counts when instances are many), and the
    __doc__ of a class without one made when it is read (_SignatureDoc)."""
    if cls.__dict__.get("__doc__") is not None:
        _dataclass_of(cls, options)
        return
    cls.__doc__ = _DOC_LATER
    try:
        _dataclass_of(cls, options)
    finally:
        type.__setattr__(cls, "__doc__", _SignatureDoc())


def _dataclass_of(cls: type, options: dict[str, Any]) -> None:
    if options.get("order") or options.get("unsafe_hash"):
        dataclasses.dataclass(cls, **options)  # the comparisons and hashes those need: as dataclasses writes them
        return
    own = {name: name in cls.__dict__ for name in ("__repr__", "__eq__")}
    class_hash = cls.__dict__.get("__hash__", dataclasses.MISSING)
    explicit_hash = not (class_hash is dataclasses.MISSING or (class_hash is None and own["__eq__"]))
    dataclasses.dataclass(cls, **{**options, "repr": False, "eq": False})
    fields = dataclasses.fields(cls)
    if options.get("repr", True) and not own["__repr__"]:
        _put(cls, "__repr__", _repr_of(tuple(f.name for f in fields if f.repr)))
    if options.get("eq", True):
        compared = _values_of(tuple(f.name for f in fields if f.compare))
        if not own["__eq__"]:
            _put(cls, "__eq__", _eq_of(compared))
        if not explicit_hash:  # dataclasses' rule: a frozen class hashes its fields, any other is unhashable
            hashed = _values_of(tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash)))
            _put(cls, "__hash__", _hash_of(hashed) if options.get("frozen") else None)


def _put(cls: type, name: str, method: Callable[..., Any] | None) -> None:
    if method is not None:
        method.__qualname__ = f"{cls.__qualname__}.{name}"
    setattr(cls, name, method)


def _values_of(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The tuple of the fields `names` of an instance (a tuple whatever their number, as dataclasses compares)."""
    if len(names) >= 2:
        return operator.attrgetter(*names)
    if len(names) == 1:
        one = operator.attrgetter(names[0])
        return lambda obj: (one(obj),)
    return lambda obj: ()


def _eq_of(values: Callable[[Any], tuple[Any, ...]]) -> Callable[[Any, Any], Any]:
    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return values(self) == values(other)
        return NotImplemented

    return __eq__


def _hash_of(values: Callable[[Any], tuple[Any, ...]]) -> Callable[[Any], int]:
    def __hash__(self: Any) -> int:
        return hash(values(self))

    return __hash__


def _repr_of(names: tuple[str, ...]) -> Callable[[Any], str]:
    @reprlib.recursive_repr()
    def __repr__(self: Any) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{self.__class__.__qualname__}({shown})"

    return __repr__


def _defer(cls: T, options: dict[str, Any]) -> T:
    if options.get("slots") or any(name in cls.__dict__ for name in _STUBS):  # a new class, or its own: as written
        return cast(T, dataclasses.dataclass(cls, **options))

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        _process(cls)
        cls.__init__(self, *args, **kwargs)  # type: ignore[misc]  # the dataclass's own, from now on called directly

    def __setstate__(self: Any, state: Any) -> None:
        _process(cls)
        setstate = getattr(self, "__setstate__", None)  # the class's own after processing, if it has one
        if setstate is not None:
            setstate(state)
        else:  # what unpickling does without one
            self.__dict__.update(state)

    cls.__init__ = __init__  # type: ignore[misc]
    cls.__setstate__ = __setstate__  # type: ignore[attr-defined]
    setattr(cls, _FIELDS, _Fields(cls, options))
    return cls


@overload
@dataclass_transform(field_specifiers=(dataclasses.field,))
def record(cls: T, /) -> T: ...
@overload
def record(
    *, frozen: bool = False, eq: bool = True, repr: bool = True, order: bool = False, kw_only: bool = False
) -> Callable[[T], T]: ...


def record(cls: T | None = None, /, **options: Any) -> T | Callable[[T], T]:
    """`dataclasses.dataclass`, processed on first use (the module's docstring)."""
    if cls is None:
        return lambda c: _defer(c, options)
    return _defer(cls, options)
