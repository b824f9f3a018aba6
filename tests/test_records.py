"""orchlog.records.record: a dataclass processed on first use behaves as `dataclasses.dataclass` made it at
once, however it is first used (a call, unpickling, a look at its fields, a subclass, racing threads)."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

import pytest

from orchlog import records
from orchlog.records import record

OPTIONS = [{}, {"frozen": True}, {"order": True}, {"eq": False}, {"kw_only": True}, {"frozen": True, "repr": False}]


def _pair(options: dict) -> tuple[Any, Any]:
    """The same class body made by `record` and by `dataclasses.dataclass`."""

    def body(ns: dict) -> None:
        ns["__annotations__"] = {"a": "int", "b": "list[int]", "c": "str"}
        ns["b"] = dataclasses.field(default_factory=lambda: [1], hash=False)
        ns["c"] = "x"

    import types

    lazy = types.new_class("Point", (), {}, body)
    eager = types.new_class("Point", (), {}, body)
    return record(**options)(lazy), dataclasses.dataclass(**options)(eager)


def _processed(cls: type) -> bool:
    return not isinstance(cls.__dict__["__dataclass_fields__"], records._Fields)


def _make(cls: Any, options: dict, a: int) -> Any:
    return cls(a=a) if options.get("kw_only") else cls(a)


@pytest.mark.parametrize("options", OPTIONS)
def test_a_record_is_the_dataclass_it_names_once_used(options):
    lazy, eager = _pair(options)
    assert not _processed(lazy)  # nothing written yet
    x, y = _make(lazy, options, 1), _make(eager, options, 1)
    assert _processed(lazy)
    assert repr(x).split("(")[1:] == repr(y).split("(")[1:]
    assert (x == _make(lazy, options, 1)) == (y == _make(eager, options, 1))
    assert (x == _make(lazy, options, 2)) == (y == _make(eager, options, 2))
    assert (lazy.__hash__ is None) == (eager.__hash__ is None)
    if options.get("frozen") and options.get("eq", True):
        assert hash(x) == hash(_make(lazy, options, 1)) and hash(x) == hash(y)
    assert [(f.name, f.default, f.kw_only) for f in dataclasses.fields(lazy)] == [
        (f.name, f.default, f.kw_only) for f in dataclasses.fields(eager)
    ]
    assert str(inspect.signature(lazy)) == str(inspect.signature(eager))
    assert lazy.__doc__ == eager.__doc__ and x.__doc__ == y.__doc__  # made on first read, the same text
    assert lazy.__match_args__ == eager.__match_args__
    if options.get("order"):
        assert (x < _make(lazy, options, 2)) is True
    if options.get("frozen"):
        with pytest.raises(dataclasses.FrozenInstanceError):
            x.a = 3
    assert x.b == [1] and x.b is not _make(lazy, options, 1).b


def test_its_fields_are_there_before_any_instance():
    lazy, _ = _pair({"frozen": True})
    made = dataclasses.is_dataclass(lazy)  # kept apart: an assert would narrow `lazy` to an instance
    assert made
    assert [f.name for f in dataclasses.fields(lazy)] == ["a", "b", "c"]
    assert lazy(5) == lazy(5)


def test_subclasses_of_a_record_first_made_through_them():
    @record
    class Base:
        a: int
        b: int = 2

    @record
    class Child(Base):
        c: int = 3

    @dataclasses.dataclass
    class Eager(Base):
        d: int = 4

    class Plain(Base):
        def __init__(self) -> None:
            super().__init__(7)

    assert repr(Child(1)) == "test_subclasses_of_a_record_first_made_through_them.<locals>.Child(a=1, b=2, c=3)"
    assert Eager(1).d == 4 and Eager(1) == Eager(1)
    assert Plain().a == 7 and Base(1) == Base(1, 2)


@record(frozen=True)
class Kept:
    a: int
    b: tuple[int, ...] = ()


def test_copies_and_pickles_of_it_in_this_process():
    x = Kept(3, (1, 2))
    assert copy.copy(x) == x and copy.deepcopy(x) == x
    assert pickle.loads(pickle.dumps(x)) == x


def test_an_instance_unpickled_first_makes_the_dataclass():
    """A process that meets the class first in a pickle (a worker given a task) gets a dataclass instance:
    equal by fields, hashed by them, frozen."""
    from orchlog.maps.views import Slice, View

    data = pickle.dumps(View((Slice((0, slice(1, 3)), "[0, 1:3]"),)))
    probe = (
        "import dataclasses, pickle, sys\n"
        "a, b = pickle.loads(sys.stdin.buffer.read()), None\n"
        "b = pickle.loads(pickle.dumps(a))\n"
        "try:\n    a.ops = ()\n    frozen = False\n"
        "except dataclasses.FrozenInstanceError:\n    frozen = True\n"
        "print(a == b, hash(a) == hash(b), frozen, repr(a).startswith('View(ops='))"
    )
    out = subprocess.run([sys.executable, "-c", probe], input=data, capture_output=True, check=True).stdout
    assert out.decode().split() == ["True", "True", "True", "True"]


def test_racing_threads_make_it_once(monkeypatch):
    made = []
    real = dataclasses.dataclass

    def counted(cls, **options):
        made.append(cls)
        return real(cls, **options)

    lazy, _ = _pair({"frozen": True})
    monkeypatch.setattr(dataclasses, "dataclass", counted)
    start, out = threading.Barrier(8), []

    def first_use(i: int) -> None:
        start.wait()
        out.append(lazy(i))

    threads = [threading.Thread(target=first_use, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert made == [lazy] and sorted(x.a for x in out) == list(range(8))


def test_a_class_with_its_own_init_or_slots_is_made_at_once():
    @record
    class Own:
        a: int

        def __init__(self, a: int) -> None:
            self.a = a * 2

    @record(slots=True)  # type: ignore[call-overload]
    class Slotted:
        a: int

    assert _processed(Own) and Own(2).a == 4
    assert vars(Slotted)["__slots__"] == ("a",) and Slotted(1) == Slotted(1)


def test_a_class_of_a_module_taken_out_of_sys_modules_is_still_made(tmp_path):
    """dataclasses looks the class's module up in sys.modules (to tell a ClassVar in a string annotation): a
    module run from a file and removed from there before its class is first used still gets its dataclass."""
    import importlib.util

    path = tmp_path / "made_late.py"
    path.write_text(
        "from __future__ import annotations\n"
        "from typing import ClassVar\n"
        "from orchlog.records import record\n"
        "@record\nclass Late:\n    a: int\n    shared: ClassVar[int] = 3\n"
    )
    spec = importlib.util.spec_from_file_location("made_late", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["made_late"] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules["made_late"]
    late = module.Late(1)
    assert [f.name for f in dataclasses.fields(late)] == ["a"] and late.shared == 3
    assert "made_late" not in sys.modules


def test_every_record_of_orchlog_is_a_dataclass_that_can_be_made():
    """Classes are made on first use, so a class statement that `dataclasses.dataclass` refuses (a field
    without a default after one with, a mutable default) would fail only where it is first used: every
    module-level record of the package is made here."""
    import importlib
    import pathlib

    import orchlog

    root = pathlib.Path(orchlog.__file__).parent
    made = 0
    for path in sorted(root.rglob("*.py")):
        if "@record" not in path.read_text():
            continue
        name = ".".join(path.relative_to(root.parent).with_suffix("").parts).removesuffix(".__init__")
        module = importlib.import_module(name)
        for cls in vars(module).values():
            if isinstance(cls, type) and cls.__module__ == name and "__dataclass_fields__" in cls.__dict__:
                assert dataclasses.fields(cls) is not None
                assert not isinstance(cls.__dict__["__dataclass_fields__"], records._Fields)
                made += 1
    assert made > 100


def _both(body: Callable[[dict], None], **options: Any) -> tuple[Any, Any]:
    import types

    return (
        record(**options)(types.new_class("Made", (), {}, body)),
        dataclasses.dataclass(**options)(types.new_class("Made", (), {}, body)),
    )


@pytest.mark.parametrize("frozen", [False, True])
def test_its_repr_eq_and_hash_are_those_dataclasses_writes(frozen):
    """Written as closures over the fields, not compiled: every field option and edge case as dataclasses has it."""
    nan = float("nan")

    def body(ns: dict) -> None:
        ns["__annotations__"] = {"a": "float", "b": "int", "c": "int", "d": "Any"}
        ns["b"] = dataclasses.field(default=0, compare=False)  # in neither eq nor hash
        ns["c"] = dataclasses.field(default=0, repr=False, hash=False)  # compared, not hashed, not shown
        ns["d"] = None

    lazy, eager = _both(body, frozen=frozen)
    for cls in (lazy, eager):
        x = cls(nan, 1, 2)
        cls.results = (
            repr(x),
            x == cls(nan, 1, 2),  # NaN is not equal to NaN ...
            x == cls(x.a, 9, 2),  # ... but the same NaN object is, as in a tuple; b is not compared
            x == cls(x.a, 1, 3),
            x.__eq__(object()),
            cls.__hash__ is None,
            frozen and hash(cls(1.0, 1, 2)) == hash(cls(1.0, 5, 7)),  # neither b nor c is hashed
            frozen and hash(cls(1.0)) == hash((1.0, None)),
        )
    assert lazy.results == eager.results
    loop = lazy(1.0, d=[])
    loop.d.append(loop)  # a field that holds its own record: shown as ... as dataclasses shows it
    assert repr(loop) == repr(eager(1.0, d=[])).replace("[]", "[...]").replace(
        f"{eager.__qualname__}(", f"{lazy.__qualname__}(", 1
    )


def test_a_class_of_one_field_or_none_and_its_own_methods():
    def one(ns: dict) -> None:
        ns["__annotations__"] = {"a": "float"}

    def own(ns: dict) -> None:
        ns["__annotations__"] = {"a": "int"}
        ns["__eq__"] = lambda self, other: True
        ns["__repr__"] = lambda self: "own"

    nan = float("nan")
    for options in ({}, {"frozen": True}):
        lazy, eager = _both(one, **options)
        assert (lazy(nan) == lazy(nan), lazy.__hash__ is None) == (eager(nan) == eager(nan), eager.__hash__ is None)
        if options:
            assert hash(lazy(2.0)) == hash(eager(2.0)) == hash((2.0,))
        empty_lazy, empty_eager = _both(lambda ns: None, **options)
        assert (empty_lazy() == empty_lazy(), repr(empty_lazy())) == (empty_eager() == empty_eager(), "Made()")
        mine, theirs = _both(own, **options)
        assert (mine(1) == mine(2), repr(mine(1)), mine.__hash__ is None) == (
            theirs(1) == theirs(2),
            "own",
            theirs.__hash__ is None,
        )
        if options:
            assert hash(mine(1)) == hash(theirs(1))
    parent, _ = _both(one, frozen=True)
    child = record(frozen=True)(type("Child", (parent,), {"__annotations__": {"b": "int"}, "b": 0}))
    assert parent(1.0) != child(1.0) and child(1.0, 2) == child(1.0, 2) and repr(child(1.0)) == "Child(a=1.0, b=0)"
