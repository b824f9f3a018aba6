"""`torch.save` files read without pickle: the opcodes of `data.pkl` walked, never executed.

A `.pt` file is a zip archive of `{archive}/data.pkl` (a pickle) and one raw
storage per tensor under `{archive}/data/{key}`. Unpickling it runs whatever
callables the pickle names, so orchlog does not unpickle: `read_torch_file`
interprets the pickle opcodes itself and accepts only what tensor dumps hold:

- plain values (None, bool, int, float, str, bytes), tuples, lists, dicts
  (and `collections.OrderedDict`);
- tensors: `torch._utils._rebuild_tensor_v2` over a storage named by a
  persistent id `("storage", torch.<T>Storage, key, location, numel)`, also
  wrapped in `_rebuild_parameter` or `_rebuild_from_type_v2` (a Parameter);
- `torch.Size` (a tuple) and `torch.<dtype>` (its name).

Anything else (another global, an object built with NEWOBJ or BUILD, an
extension code) is refused with one line naming it. This was chosen over
`torch.load(weights_only=True)` because orchlog's base install has no
torch, because the accepted set is exactly the one written above (the
restricted unpickler accepts more, and has had escapes), and because every
length the file declares is checked here against the bytes it has: a string,
a storage, a tensor's extent within its storage. Tensors are not read:
each comes back as a `TensorRef` that loads its bytes when asked.
"""

from __future__ import annotations

import math
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from orchlog.encoding import dtypes
from orchlog.read.files import open_file
from orchlog.read.stored_zip import open_stored, read_member
from orchlog.records import record
from orchlog.schema_gen import DTYPE_NUMPY, DTYPE_SIZES

MAX_PICKLE_BYTES = 64 << 20  # data.pkl of a dump holds keys and metadata, not tensors
MAX_STACK = 100_000
MAX_DEPTH = 200  # nesting of lists, dicts and tuples in the result
MAX_DIMS = 64

# torch's storage classes: orchlog dtype, bytes per element, and the dtype the bytes are handed over in.
STORAGES = {
    "FloatStorage": ("f32", 4),
    "DoubleStorage": ("f64", 8),
    "HalfStorage": ("f16", 2),
    "BFloat16Storage": ("bf16", 2),
    "CharStorage": ("i8", 1),
    "ByteStorage": ("u8", 1),
    "BoolStorage": ("u8", 1),  # bool has no orchlog dtype: its bytes are 0 and 1, read as u8
    "IntStorage": ("i32", 4),
    "LongStorage": ("i64", 8),
    "ShortStorage": ("i16", 2),  # widened to i32 when loaded
}
TORCH_DTYPES = {
    "float32": "f32", "float": "f32", "float64": "f64", "double": "f64", "float16": "f16", "half": "f16",
    "bfloat16": "bf16", "int8": "i8", "uint8": "u8", "bool": "u8", "int32": "i32", "int": "i32",
    "int64": "i64", "long": "i64", "int16": "i16", "short": "i16",
}  # fmt: skip


# What zipfile raises for a damaged archive: its own error, a CRC or a name it cannot decode, a cut member,
# a compression it does not know, a KeyError for a member the directory names but the archive lacks.
ZIP_ERRORS = (zipfile.BadZipFile, EOFError, NotImplementedError, RuntimeError, UnicodeDecodeError, KeyError, zlib.error)


class UnsafePickle(ValueError):
    """The pickle holds something other than tensors and plain values, or lies about a length."""


@record(frozen=True)
class Storage:
    dtype: str  # orchlog dtype, or i16
    key: str
    numel: int


@record(frozen=True)
class StoredMember:
    """Where a stored member's bytes are in its archive, as its central directory says: read again without
    parsing the directory (a tool that writes a file per tensor would pay that twice a tensor)."""

    header_offset: int  # of its local header
    size: int
    crc: int


@record(frozen=True)
class TensorRef:
    """A tensor of a torch.save file, not yet read: `load()` gives its bytes, C-contiguous, little-endian."""

    path: str
    member: str  # the storage's name in the zip
    dtype: str  # orchlog dtype of the bytes load() returns
    shape: tuple[int, ...]
    stride: tuple[int, ...]
    offset: int  # in elements of the storage
    stored_dtype: str  # as stored (i16 is handed over as i32)
    stored: StoredMember | None = None  # None: found through the archive's directory when loaded

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.numel * DTYPE_SIZES[self.dtype]

    def __call__(self) -> bytes:
        return self.load()

    def load(self) -> bytes:
        """The tensor's bytes; OSError when the archive no longer gives them (damaged, changed, gone)."""
        size = 2 if self.stored_dtype == "i16" else DTYPE_SIZES[self.stored_dtype]
        raw = self._raw()
        need = (self.offset + _extent(self.shape, self.stride)) * size
        if len(raw) < need:
            raise OSError(f"{self.member} holds {len(raw)} bytes, the tensor needs {need}")
        if self.numel == 0:
            return b""
        np_dtype = "<i2" if self.stored_dtype == "i16" else DTYPE_NUMPY[self.stored_dtype]
        flat = np.frombuffer(raw, dtype=np_dtype, count=len(raw) // size)
        view = np.lib.stride_tricks.as_strided(
            flat[self.offset :], shape=self.shape, strides=[s * size for s in self.stride], writeable=False
        )
        out = np.ascontiguousarray(view)
        if self.stored_dtype == "i16":
            out = out.astype("<i4")
        return out.tobytes()

    def _raw(self) -> bytes:
        """The storage's bytes, checked against the CRC-32 the archive gives them."""
        try:
            if self.stored is not None and (raw := self._read_stored(self.stored)) is not None:
                return raw
            with open_file(Path(self.path)) as f, zipfile.ZipFile(f) as zf:
                info = zf.getinfo(self.member)
                _check_member(info)
                with zf.open(info) as member:
                    return member.read(info.file_size)
        except (*ZIP_ERRORS, ValueError) as exc:
            raise OSError(f"{self.member}: damaged zip archive ({type(exc).__name__}: {exc})") from None

    def _read_stored(self, stored: StoredMember) -> bytes | None:
        with open_file(Path(self.path)) as f:
            return read_member(f.fileno(), stored.header_offset, self.member, stored.size, stored.crc)

    def array(self) -> np.ndarray:
        flat = dtypes.from_bytes(self.load(), self.dtype)
        if self.dtype == "bf16":
            flat = dtypes.widen(flat, "bf16")
        return flat.reshape(self.shape)


def _extent(shape: tuple[int, ...], stride: tuple[int, ...]) -> int:
    """Elements of the storage a tensor reaches: 1 + the largest index (0 when it has no element)."""
    if any(d == 0 for d in shape):
        return 0
    return 1 + sum((d - 1) * s for d, s in zip(shape, stride))


def _check_member(info: zipfile.ZipInfo) -> None:
    if info.compress_type != zipfile.ZIP_STORED:
        raise UnsafePickle(f"{info.filename} is compressed; torch.save stores its members uncompressed")


class _Global:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


class _Mark:
    pass


_MARK = _Mark()
_ALLOWED_CALLS = {
    "torch._utils._rebuild_tensor_v2",
    "torch._utils._rebuild_parameter",
    "torch._utils._rebuild_parameter_with_state",
    "torch._utils._rebuild_from_type_v2",
    "collections.OrderedDict",
    "torch.Size",
}
_TENSOR_TYPES = {"torch.Tensor", "torch.nn.parameter.Parameter"}


def _allowed_global(module: str, name: str) -> _Global:
    full = f"{module}.{name}"
    if full in _ALLOWED_CALLS or full in _TENSOR_TYPES:
        return _Global(full)
    if module == "torch" and (name in STORAGES or name in TORCH_DTYPES):
        return _Global(full)
    raise UnsafePickle(f"the pickle names {full[:80]!r}, which is neither a tensor nor a plain value; not read")


class _Reader:
    """The opcode walk over one data.pkl (protocols 2 to 5, as torch.save writes them)."""

    def __init__(self, data: bytes, path: str, prefix: str, members: dict[str, StoredMember]) -> None:
        self.data, self.pos = data, 0
        self.path, self.prefix, self.members = path, prefix, members
        self.stack: list[Any] = []
        self.marks: list[int] = []
        self.memo: dict[int, Any] = {}

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise UnsafePickle(f"the pickle declares {n} bytes at offset {self.pos}, past its end")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def line(self) -> str:
        end = self.data.find(b"\n", self.pos, self.pos + 256)
        if end < 0:
            raise UnsafePickle(f"a global's name at offset {self.pos} has no end")
        out = self.data[self.pos : end]
        self.pos = end + 1
        try:
            return out.decode("ascii")
        except UnicodeDecodeError:
            raise UnsafePickle(f"a global's name at offset {self.pos} is not ASCII") from None

    def push(self, v: Any) -> None:
        if len(self.stack) >= MAX_STACK:
            raise UnsafePickle(f"the pickle's stack grows past {MAX_STACK} items")
        self.stack.append(v)

    def pop(self) -> Any:
        if not self.stack or (self.marks and len(self.stack) <= self.marks[-1]):
            raise UnsafePickle(f"the pickle pops an empty stack at offset {self.pos}")
        return self.stack.pop()

    def pop_mark(self) -> list[Any]:
        if not self.marks:
            raise UnsafePickle(f"the pickle closes a MARK it never opened, at offset {self.pos}")
        k = self.marks.pop()
        items = self.stack[k:]
        del self.stack[k:]
        return items

    def top(self) -> Any:
        if not self.stack or (self.marks and len(self.stack) <= self.marks[-1]):
            raise UnsafePickle(f"the pickle reads an empty stack at offset {self.pos}")
        return self.stack[-1]

    def run(self) -> Any:
        ops = _OPS
        while True:
            if self.pos >= len(self.data):
                raise UnsafePickle("the pickle ends without STOP")
            op = self.data[self.pos]
            self.pos += 1
            handler = ops.get(op)
            if handler is None:
                raise UnsafePickle(f"pickle opcode 0x{op:02x} at offset {self.pos - 1} is not one tensor dumps use")
            if handler(self):
                if self.marks:
                    raise UnsafePickle("the pickle stops inside a MARK")
                return self.pop()

    # ------------------------------------------------------------ calls

    def persistent(self, pid: Any) -> Storage:
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage" and isinstance(pid[1], _Global)):
            raise UnsafePickle("a persistent id is not a torch storage")
        kind = pid[1].name.removeprefix("torch.")
        if kind not in STORAGES:
            raise UnsafePickle(f"a persistent id names {pid[1].name!r}, not a storage class")
        key, numel = pid[2], pid[4]
        if not isinstance(key, str) or not _int(numel) or numel < 0:
            raise UnsafePickle("a storage's key or length is malformed")
        dtype, size = STORAGES[kind]
        member = f"{self.prefix}data/{key}"
        have = self.members.get(member)
        if have is None:
            raise UnsafePickle(f"storage {key!r} is not in the archive")
        if numel * size > have.size:
            raise UnsafePickle(
                f"storage {key!r} declares {numel} elements of {size} bytes, the archive holds {have.size}"
            )
        return Storage(dtype, key, numel)

    def call(self, fn: Any, args: Any) -> Any:
        if not isinstance(fn, _Global) or fn.name not in _ALLOWED_CALLS or not isinstance(args, tuple):
            raise UnsafePickle(f"the pickle calls {str(fn)[:80]!r}, which is not a tensor rebuild")
        name = fn.name
        if name == "collections.OrderedDict":
            if args:
                raise UnsafePickle("OrderedDict is called with arguments")
            return {}
        if name == "torch.Size":
            if len(args) != 1 or not isinstance(args[0], (tuple, list)) or not all(_int(d) for d in args[0]):
                raise UnsafePickle("torch.Size of something other than integers")
            return tuple(args[0])
        if name == "torch._utils._rebuild_tensor_v2":
            return self.tensor(args)
        if name in ("torch._utils._rebuild_parameter", "torch._utils._rebuild_parameter_with_state"):
            if not args or not isinstance(args[0], TensorRef):
                raise UnsafePickle("a Parameter is rebuilt from something other than a tensor")
            return args[0]
        # _rebuild_from_type_v2(func, type, args, state): a Tensor or a Parameter, rebuilt by func.
        if len(args) != 4 or not isinstance(args[1], _Global) or args[1].name not in _TENSOR_TYPES:
            raise UnsafePickle("_rebuild_from_type_v2 of something other than a tensor")
        if args[3] not in (None, {}) and not isinstance(args[3], dict):
            raise UnsafePickle("a tensor carries Python state")
        return self.call(args[0], args[2])

    def tensor(self, args: tuple[Any, ...]) -> TensorRef:
        if len(args) < 4 or not isinstance(args[0], Storage):
            raise UnsafePickle("_rebuild_tensor_v2 without a storage")
        storage, offset, shape, stride = args[:4]
        if not _int(offset) or offset < 0:
            raise UnsafePickle(f"a tensor's storage offset {offset!r} is not a count")
        if not isinstance(shape, tuple) or not isinstance(stride, tuple) or len(shape) != len(stride):
            raise UnsafePickle("a tensor's size and stride are not tuples of one length")
        if len(shape) > MAX_DIMS or not all(_int(d) and d >= 0 for d in (*shape, *stride)):
            raise UnsafePickle(f"a tensor's size {shape!r:.80} or stride is not non-negative integers")
        if math.prod(shape) and offset + _extent(shape, stride) > storage.numel:
            raise UnsafePickle(
                f"a tensor of size {list(shape)} at offset {offset} reaches past its storage of {storage.numel} elements"
            )
        dtype = "i32" if storage.dtype == "i16" else storage.dtype
        member = f"{self.prefix}data/{storage.key}"
        return TensorRef(self.path, member, dtype, shape, stride, offset, storage.dtype, self.members[member])


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _unicode(r: _Reader, n: int) -> bool:
    try:
        r.push(r.take(n).decode("utf-8", "surrogatepass"))
    except UnicodeDecodeError:
        raise UnsafePickle(f"a string at offset {r.pos} is not UTF-8") from None
    return False


def _memo_get(r: _Reader, key: int) -> bool:
    if key not in r.memo:
        raise UnsafePickle(f"the pickle recalls memo {key}, never stored")
    r.push(r.memo[key])
    return False


def _memo_put(r: _Reader, key: int) -> bool:
    r.memo[key] = r.top()
    return False


def _setitems(r: _Reader, items: list[Any]) -> None:
    d = r.top()
    if not isinstance(d, dict) or len(items) % 2:
        raise UnsafePickle("SETITEMS on something other than a dict")
    for k in range(0, len(items), 2):
        key = items[k]
        if not isinstance(key, (str, int, float, bool, type(None), tuple)):
            raise UnsafePickle("a dict key is not a plain value")
        d[key] = items[k + 1]


def _appends(r: _Reader, items: list[Any]) -> None:
    lst = r.top()
    if not isinstance(lst, list):
        raise UnsafePickle("APPENDS on something other than a list")
    lst.extend(items)


def _global(r: _Reader) -> bool:
    module = r.line()
    r.push(_allowed_global(module, r.line()))
    return False


def _stack_global(r: _Reader) -> bool:
    name, module = r.pop(), r.pop()
    if not isinstance(name, str) or not isinstance(module, str):
        raise UnsafePickle("STACK_GLOBAL of something other than two strings")
    r.push(_allowed_global(module, name))
    return False


def _reduce(r: _Reader) -> bool:
    args = r.pop()
    r.push(r.call(r.pop(), args))
    return False


def _mark(r: _Reader) -> bool:
    r.marks.append(len(r.stack))
    return False


def _unpack(fmt: str, size: int) -> Any:
    unpack_from = struct.Struct(fmt).unpack_from

    # An opcode's argument, read in place: no slice of the pickle made for it (most opcodes have one).
    def read(r: _Reader) -> Any:
        pos = r.pos
        if pos + size > len(r.data):
            raise UnsafePickle(f"the pickle declares {size} bytes at offset {pos}, past its end")
        r.pos = pos + size
        return unpack_from(r.data, pos)[0]

    return read


_u2, _u4, _i4, _u8, _f8 = (
    _unpack("<H", 2), _unpack("<I", 4), _unpack("<i", 4), _unpack("<Q", 8), _unpack(">d", 8),
)  # fmt: skip


def _u1(r: _Reader) -> int:
    pos = r.pos
    if pos >= len(r.data):
        raise UnsafePickle(f"the pickle declares 1 byte at offset {pos}, past its end")
    r.pos = pos + 1
    return r.data[pos]


def _binput(r: _Reader) -> bool:
    r.memo[_u1(r)] = r.top()  # the commonest opcode of a dump's pickle: one call fewer than _memo_put
    return False


def _long(r: _Reader, n: int) -> bool:
    if n > 64:  # no key, size or count of a dump needs more than 512 bits
        raise UnsafePickle(f"an integer of {n} bytes")
    r.push(int.from_bytes(r.take(n), "little", signed=True))
    return False


def _tuple_n(n: int) -> Any:
    def op(r: _Reader) -> bool:
        items = [r.pop() for _ in range(n)][::-1]
        r.push(tuple(items))
        return False

    return op


def _push(value: Any) -> Any:
    def op(r: _Reader) -> bool:
        r.push(value() if callable(value) else value)
        return False

    return op


def _proto(r: _Reader) -> bool:
    if _u1(r) > 5:
        raise UnsafePickle("a pickle protocol above 5")
    return False


def _frame(r: _Reader) -> bool:
    _u8(r)  # a length hint for buffered reading: the whole pickle is in memory already
    return False


def _pop(r: _Reader) -> bool:
    r.pop()
    return False


def _pop_mark(r: _Reader) -> bool:
    r.pop_mark()
    return False


def _binpersid(r: _Reader) -> bool:
    r.push(r.persistent(r.pop()))
    return False


def _setitem(r: _Reader) -> bool:
    v = r.pop()
    k = r.pop()
    _setitems(r, [k, v])
    return False


def _append(r: _Reader) -> bool:
    v = r.pop()
    _appends(r, [v])
    return False


def _frozen(r: _Reader) -> bool:
    r.push(frozenset(_hashable(r.pop_mark())))
    return False


def _hashable(items: list[Any]) -> list[Any]:
    if not all(isinstance(x, (str, int, float, bool, type(None))) for x in items):
        raise UnsafePickle("a set of something other than plain values")
    return items


_OPS: dict[int, Any] = {
    0x80: _proto,  # PROTO
    0x95: _frame,  # FRAME
    ord("."): lambda r: True,  # STOP
    ord("("): _mark,
    ord("}"): _push(dict),  # EMPTY_DICT
    ord("]"): _push(list),  # EMPTY_LIST
    ord(")"): _push(()),  # EMPTY_TUPLE
    ord("N"): _push(None),
    0x88: _push(True),  # NEWTRUE
    0x89: _push(False),  # NEWFALSE
    ord("K"): lambda r: r.push(_u1(r)),  # BININT1
    ord("M"): lambda r: r.push(_u2(r)),  # BININT2
    ord("J"): lambda r: r.push(_i4(r)),  # BININT
    0x8A: lambda r: _long(r, _u1(r)),  # LONG1
    0x8B: lambda r: _long(r, _u4(r)),  # LONG4
    ord("G"): lambda r: r.push(_f8(r)),  # BINFLOAT
    ord("X"): lambda r: _unicode(r, _u4(r)),  # BINUNICODE
    0x8C: lambda r: _unicode(r, _u1(r)),  # SHORT_BINUNICODE
    0x8D: lambda r: _unicode(r, _u8(r)),  # BINUNICODE8
    ord("C"): lambda r: r.push(r.take(_u1(r))),  # SHORT_BINBYTES
    ord("B"): lambda r: r.push(r.take(_u4(r))),  # BINBYTES
    0x8E: lambda r: r.push(r.take(_u8(r))),  # BINBYTES8
    ord("t"): lambda r: r.push(tuple(r.pop_mark())),  # TUPLE
    0x85: _tuple_n(1),
    0x86: _tuple_n(2),
    0x87: _tuple_n(3),
    ord("l"): lambda r: r.push(r.pop_mark()),  # LIST
    ord("s"): _setitem,
    ord("u"): lambda r: _setitems(r, r.pop_mark()),  # SETITEMS
    ord("a"): _append,
    ord("e"): lambda r: _appends(r, r.pop_mark()),  # APPENDS
    0x8F: _push(set),  # EMPTY_SET
    0x90: lambda r: _adds(r, r.pop_mark()),  # ADDITEMS
    0x91: _frozen,  # FROZENSET
    ord("q"): _binput,  # BINPUT
    ord("r"): lambda r: _memo_put(r, _u4(r)),  # LONG_BINPUT
    0x94: lambda r: _memo_put(r, len(r.memo)),  # MEMOIZE
    ord("h"): lambda r: _memo_get(r, _u1(r)),  # BINGET
    ord("j"): lambda r: _memo_get(r, _u4(r)),  # LONG_BINGET
    ord("0"): _pop,  # POP
    ord("2"): lambda r: r.push(r.top()),  # DUP
    ord("1"): _pop_mark,  # POP_MARK
    ord("c"): _global,  # GLOBAL
    0x93: _stack_global,  # STACK_GLOBAL
    ord("R"): _reduce,  # REDUCE
    ord("Q"): _binpersid,  # BINPERSID
}


def _dict(r: _Reader) -> bool:
    items = r.pop_mark()
    r.push({})
    _setitems(r, items)
    return False


def _adds(r: _Reader, items: list[Any]) -> bool:
    s = r.top()
    if not isinstance(s, set):
        raise UnsafePickle("ADDITEMS on something other than a set")
    s.update(_hashable(items))
    return False


_OPS[ord("d")] = _dict  # DICT


def _depth_ok(value: Any) -> None:
    """Results nest at most MAX_DEPTH deep (a memo can make a cycle: a list inside itself)."""
    stack, seen = [(value, 1)], 0
    while stack:
        item, level = stack.pop()
        if isinstance(item, (list, tuple, dict)):
            seen += 1
            if level > MAX_DEPTH or seen > MAX_STACK:
                raise UnsafePickle(
                    f"the pickle nests deeper than {MAX_DEPTH} levels, or holds more than {MAX_STACK} containers"
                )
            stack.extend((x, level + 1) for x in (item.values() if isinstance(item, dict) else item))


def is_torch_zip(head: bytes) -> bool:
    """Whether a file's first bytes are a zip archive whose first member is a torch.save pickle."""
    if not head.startswith(b"PK\x03\x04") or len(head) < 30:
        return False
    name_len = int.from_bytes(head[26:28], "little")
    name = head[30 : 30 + name_len]
    return name.endswith(b"/data.pkl") and name.count(b"/") == 1


def read_torch_file(path: Path) -> Any:
    """The object a torch.save file holds, with TensorRefs for its tensors; UnsafePickle (a ValueError)
    when it holds anything else, OSError when the archive cannot be read."""
    try:
        with open_file(path) as f:
            found = _read_stored_archive(f.fileno())
            if found is None:  # anything unusual: zipfile reads it, and says what is wrong
                with zipfile.ZipFile(f) as zf:
                    found = _read_archive(zf)
    except UnsafePickle:
        raise
    except (*ZIP_ERRORS, ValueError) as exc:  # zipfile's ValueError: an offset past what the OS can seek to
        raise OSError(f"damaged zip archive ({type(exc).__name__}: {exc})") from None
    prefix, data, members = found
    value = _Reader(data, str(path), prefix, members).run()
    _depth_ok(value)
    return value


_Contents = tuple[str, bytes, dict[str, StoredMember]]  # the pickle's folder, data.pkl, the stored members


def _read_archive(zf: zipfile.ZipFile) -> _Contents:
    infos = zf.infolist()
    pkl = [i for i in infos if _is_pickle(i.filename)]
    if len(pkl) != 1:
        raise UnsafePickle("not a torch.save archive: no single {archive}/data.pkl")
    prefix = pkl[0].filename[: -len("data.pkl")]
    if pkl[0].file_size > MAX_PICKLE_BYTES:
        raise UnsafePickle(f"data.pkl declares {pkl[0].file_size} bytes, more than a dump's pickle holds")
    order = f"{prefix}byteorder"
    if order in zf.namelist() and not _little_endian(zf.read(order)):
        raise UnsafePickle("the archive's tensors are big-endian; orchlog reads little-endian torch files")
    _check_member(pkl[0])
    members = {
        i.filename: StoredMember(i.header_offset, i.file_size, i.CRC)
        for i in infos
        if i.compress_type == zipfile.ZIP_STORED
    }
    return prefix, zf.read(pkl[0]), members


def _read_stored_archive(fd: int) -> _Contents | None:
    """What _read_archive gives, for an archive laid out as torch.save writes it (stored_zip); None for
    any other, and for one whose reading would raise (zipfile then raises it)."""
    archive = open_stored(fd)
    if archive is None:
        return None
    pkl = [e for e in archive.entries if _is_pickle(e.name)]
    if len(pkl) != 1 or pkl[0].size > MAX_PICKLE_BYTES:
        return None
    prefix = pkl[0].name[: -len("data.pkl")]
    by_name = {e.name: e for e in archive.entries}  # the last of a name, as zipfile's getinfo
    if (order := by_name.get(f"{prefix}byteorder")) is not None:
        raw = archive.read(order)
        if raw is None or not _little_endian(raw):
            return None
    data = archive.read(pkl[0])
    if data is None:
        return None
    return prefix, data, {e.name: StoredMember(e.header_offset, e.size, e.crc) for e in archive.entries}


def _is_pickle(name: str) -> bool:
    return name.endswith("/data.pkl") and name.count("/") == 1


def _little_endian(byteorder: bytes) -> bool:
    return byteorder[:16].strip() in (b"little", b"")
