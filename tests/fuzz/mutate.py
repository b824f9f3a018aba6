"""Mutants of a trace: the seed's bytes with one to three damages, chosen by a seeded generator.

Plain damage (bit flips, bytes set to boundary values, cuts, deleted,
repeated or inserted ranges) finds what breaks parsers; the format-aware
damages find what survives parsing and breaks what comes after: a JSON
value replaced by one a reader must refuse (1e400, 2**64, a lone surrogate,
nesting 10,000 deep, names that would inject Markdown or terminal escapes),
a msgpack header claiming four billion entries, a gzip stream cut short, a
Parquet footer with flipped bits. The same (seed, number) always gives the
same mutant, so a failure found once can be made again.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import gzip
import io
import pickle
import random
import re
import shutil
import zipfile
import zlib
from pathlib import Path

from tests.fuzz.seeds import Seed

# JSON texts a reader meets in the wild or from an attacker, spliced in where a value stood.
HOSTILE_JSON = [
    b"1e400",
    b"-1e400",
    b"18446744073709551616",
    b"-9223372036854775809",
    b"9223372036854775807",
    b"-1",
    b"0.5",
    b"1.0e308",
    b"null",
    b"true",
    b'""',
    b"[]",
    b"{}",
    b'"NaN"',
    b'"Infinity"',
    b"NaN",
    b"-inf",
    b'"\\ud800"',
    b'"\\u0000"',
    b'"\xff\xfe\xc3"',
    b'"\x1b[31mred\x1b[0m\\u001b]0;title\\u0007"',
    b'"a|b<img src=x onerror=alert(1)>`code`\\nnext"',
    b"[" * 10000 + b"]" * 10000,
    b'{"a":' * 5000 + b"1" + b"}" * 5000,
    b"[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]",
    b'[[1,2],"x",{"y":1}]',
    b'"' + b"x" * 70000 + b'"',
    b'"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdeZ"',
    b'"\xc3\xa9\xe2\x82\xac"',
]
# msgpack headers that claim more than any file holds, and nesting deeper than any reader recurses.
HOSTILE_MSGPACK = [
    b"\xdd\xff\xff\xff\xff",  # array32 of 4G entries
    b"\xdf\xff\xff\xff\xff",  # map32 of 4G entries
    b"\xdb\xff\xff\xff\xff",  # str32 of 4G bytes
    b"\xc6\xff\xff\xff\xff",  # bin32 of 4G bytes
    b"\xc6\x7f\xff\xff\xff",
    b"\xdc\xff\xff",
    b"\x91" * 20000 + b"\xc0",
    b"\x81\xa1a" * 20000 + b"\xc0",
    b"\xcf\xff\xff\xff\xff\xff\xff\xff\xff",  # uint64 max
    b"\xd3\x80\x00\x00\x00\x00\x00\x00\x00",  # int64 min
    b"\xcb\x7f\xf0\x00\x00\x00\x00\x00\x00",  # +inf
    b"\xcb\x7f\xf8\x00\x00\x00\x00\x00\x01",  # NaN
    b"\xc1",  # never used
    b"\xd4\x01\x02",  # fixext, which orchlog never writes
    b"\xa3\xff\xfe\xfd",  # a string that is not UTF-8
    b"\xc0",
    b"\xc3",
]
# Pickle opcodes a tensor dump never holds, and ones that claim more than any file has, spliced into data.pkl.
HOSTILE_PICKLE = [
    b"cos\nsystem\n",  # GLOBAL of a callable that runs a command
    b"cbuiltins\neval\n",
    b"\x8c\x02os\x8c\x06system\x93",  # STACK_GLOBAL
    b"\x81",  # NEWOBJ
    b"b",  # BUILD
    b"R",  # REDUCE of whatever is on the stack
    b"X\xff\xff\xff\x7f",  # BINUNICODE of 2 GiB
    b"\x8d\xff\xff\xff\xff\xff\xff\xff\x7f",  # BINUNICODE8 of 2**63
    b"\x8b\xff\xff\xff\x7f",  # LONG4 of 2 GiB
    b"J\xff\xff\xff\x7f",  # BININT 2**31-1 (a storage numel, an offset, a size)
    b"\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f",  # LONG1 2**63-1
    b"\x8a\x01\xff",  # LONG1 -1
    b"j\xff\xff\xff\x7f",  # LONG_BINGET of a memo never stored
    b"(" * 20000,  # marks
    b"]q\x00h\x00a" * 50,  # a list appended into itself
    b"]" * 200000,  # a stack of 200,000 lists
    b"0",  # POP
    b".",  # an early STOP
]
# Base64 texts a Polygraphy array may be replaced by.
HOSTILE_BASE64 = [b"", b"====", b"k05VTVBZ", b"!!!!", b"k05VTVBZAQB2AHsn" * 3, b"A" * 7, b"\\u0000\\u00ff"]
BOUNDARY_BYTES = [0x00, 0xFF, 0x7F, 0x80, 0x0A, 0x22, 0x7B, 0x7D, 0x5C, 0x1B, 0xC0, 0xDD, 0xDF]
_JSON_VALUE = re.compile(rb'(?<=":)(-?[0-9][0-9.eE+-]*|"(?:[^"\\\n]|\\.)*"|null|true|false|\[[^\[\]\n]*\]|\{\})')
_MSGPACK_KEY = re.compile(rb"[\xa0-\xbf][a-z_0-9]{2,12}")


@dataclasses.dataclass(frozen=True)
class Mutant:
    seed: Seed
    number: int
    path: Path
    reference: Path  # the undamaged seed, the other side of compare
    damages: tuple[str, ...]

    @property
    def name(self) -> str:
        return f"{self.seed.name}-{self.number}"


# ------------------------------------------------------------ byte damage


def _flip(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    if not data:
        return data, "flip(empty)"
    i = rng.randrange(len(data))
    bit = rng.randrange(8)
    return data[:i] + bytes([data[i] ^ (1 << bit)]) + data[i + 1 :], f"flip@{i}.{bit}"


def _set(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    if not data:
        return data, "set(empty)"
    i = rng.randrange(len(data))
    b = rng.choice(BOUNDARY_BYTES)
    return data[:i] + bytes([b]) + data[i + 1 :], f"set@{i}=0x{b:02x}"


def _cut(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    i = rng.randrange(len(data) + 1)
    return data[:i], f"cut@{i}"


def _delete(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    if not data:
        return data, "delete(empty)"
    i = rng.randrange(len(data))
    n = rng.randint(1, min(256, len(data) - i))
    return data[:i] + data[i + n :], f"delete@{i}+{n}"


def _repeat(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    if not data:
        return data, "repeat(empty)"
    i = rng.randrange(len(data))
    n = rng.randint(1, min(4096, len(data) - i))
    j = rng.randrange(len(data) + 1)
    return data[:j] + data[i : i + n] + data[j:], f"repeat@{i}+{n}->{j}"


def _insert(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    j = rng.randrange(len(data) + 1)
    junk = bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
    return data[:j] + junk + data[j:], f"insert@{j}+{len(junk)}"


BYTE_DAMAGE = [_flip, _flip, _set, _cut, _delete, _repeat, _insert]

# ------------------------------------------------------------ format-aware damage


def _json_value(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    spots = list(_JSON_VALUE.finditer(data))
    if not spots:
        return _set(rng, data)
    m = rng.choice(spots)
    k = rng.randrange(len(HOSTILE_JSON))
    return data[: m.start()] + HOSTILE_JSON[k] + data[m.end() :], f"json@{m.start()}=hostile{k}"


def _msgpack_value(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    spots = list(_MSGPACK_KEY.finditer(data))
    if not spots:
        return _set(rng, data)
    m = rng.choice(spots)
    k = rng.randrange(len(HOSTILE_MSGPACK))
    if rng.random() < 0.5:  # replace the value after a key
        at = m.end()
        return data[:at] + HOSTILE_MSGPACK[k] + data[at + 1 :], f"msgpack@{at}=hostile{k}"
    at = m.start()  # or the key itself
    return data[:at] + HOSTILE_MSGPACK[k] + data[m.end() :], f"msgpack-key@{at}=hostile{k}"


def _tail_flip(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    """A flipped bit in the last kilobytes: the Parquet footer, its length or its magic."""
    if len(data) < 16:
        return _flip(rng, data)
    i = len(data) - 1 - rng.randrange(min(len(data), 2048))
    bit = rng.randrange(8)
    return data[:i] + bytes([data[i] ^ (1 << bit)]) + data[i + 1 :], f"tail-flip@{i}.{bit}"


def _torch_pickle(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    """A torch.save archive whose data.pkl got a hostile opcode (or a flipped byte), zipped again as torch does."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            members = [(i, zf.read(i)) for i in zf.infolist()]
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError):
        return _flip(rng, data)
    out = io.BytesIO()
    how = "zip"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zf:
        for info, raw in members:
            if info.filename.endswith("/data.pkl") and raw:
                at = rng.randrange(len(raw))
                if rng.random() < 0.7:
                    k = rng.randrange(len(HOSTILE_PICKLE))
                    raw = raw[:at] + HOSTILE_PICKLE[k] + raw[at + rng.choice((0, 1)) :]
                    how = f"pickle@{at}=hostile{k}"
                else:
                    raw = raw[:at] + bytes([raw[at] ^ (1 << rng.randrange(8))]) + raw[at + 1 :]
                    how = f"pickle-flip@{at}"
            elif "/data/" in info.filename and rng.random() < 0.3:
                raw = raw[: rng.randrange(len(raw) + 1)]  # a storage cut short
                how = f"storage-cut:{info.filename}"
            zf.writestr(info.filename, raw)
    return out.getvalue(), how


_BASE64_ARRAY = re.compile(rb'"array": "([A-Za-z0-9+/=]*)"')


def _base64_array(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    """A Polygraphy array's base64 replaced, cut, or re-encoded around an .npy header that claims too much."""
    spots = list(_BASE64_ARRAY.finditer(data))
    if not spots:
        return _json_value(rng, data)
    m = rng.choice(spots)
    a, b = m.span(1)
    choice = rng.randrange(3)
    if choice == 0:
        k = rng.randrange(len(HOSTILE_BASE64))
        return data[:a] + HOSTILE_BASE64[k] + data[b:], f"base64@{a}=hostile{k}"
    if choice == 1:
        cut = rng.randrange(a, b + 1)
        return data[:cut] + data[b:], f"base64-cut@{cut}"
    try:
        npy = base64.b64decode(data[a:b])
    except (ValueError, binascii.Error):
        return _flip(rng, data)
    header_end = npy.find(b"\n")
    shape = rng.choice([b"(1099511627776,)", b"(-1,)", b"(0, 4)", b"(3, 2**40)", b"()"])
    npy = re.sub(rb"'shape': \([^)]*\)", b"'shape': " + shape, npy[: header_end + 1], count=1) + npy[header_end + 1 :]
    return data[:a] + base64.b64encode(npy) + data[b:], f"npy-shape@{a}={shape.decode()}"


def _safetensors_header(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    """A safetensors file whose header length, or a tensor's offsets, claim more than the file holds."""
    if len(data) < 8 or rng.random() < 0.4:
        n = rng.choice([0, 7, len(data), 2**32, 2**63 - 1])
        return n.to_bytes(8, "little") + data[8:], f"safetensors-length={n}"
    return _json_value(rng, data)


# ------------------------------------------------------------ weight files

HOSTILE_U64 = [2**64 - 1, 2**63, 2**60, 2**40, 2**32 - 1, 2**32, 65536, 0]
HOSTILE_NPY_DESCR = ["'<U8'", "'|O'", "[('a', '<f4'), ('b', '<i4')]", "'|V8'", "'<c8'", "'<M8[s]'", "'|S4'", "'>f4'"]
HOSTILE_NPY_SHAPE = ["(1099511627776,)", "(-1,)", "(4294967296, 4294967296)", "()", "(0,)", "(2**70,)", "('a',)"]
_GGUF_STRING = re.compile(rb"(general\.[a-z_]+|tokenizer\.ggml\.[a-z_]+|qwen2\.[a-z_.]+|model\.[a-z0-9_.]+)")


def _safetensors_length(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    """The header's 8-byte length replaced: past the file, 0, or just short of the JSON."""
    n = rng.choice(
        [0, 1, len(data) - 7, len(data) + 1, 2**63, 2**64 - 1, max(0, int.from_bytes(data[:8], "little") - 1)]
    )
    return n.to_bytes(8, "little") + data[8:], f"safetensors-length={n}"


def _npz_member(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    """The archive rebuilt (its checksums right) with one member made hostile: a .npy header claiming another
    dtype or shape, its data cut, a pickle in its place or beside it, or a name that is no array's."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            members = [(info, z.read(info)) for info in z.infolist()]
    except Exception:  # an archive already damaged past reading (a zip version from the future, ...): plain damage
        return _flip(rng, data)
    i = rng.randrange(len(members))
    info, content = members[i]
    how = rng.choice(["descr", "shape", "fortran", "cut", "pickle", "pickle-beside", "not-npy"])
    name = info.filename
    if how in ("descr", "shape", "fortran") and content[:6] == b"\x93NUMPY" and content[6] == 1:
        size = int.from_bytes(content[8:10], "little")
        header = content[10 : 10 + size].decode("latin1")
        if how == "descr":
            header = re.sub(r"'descr': [^,]*,", f"'descr': {rng.choice(HOSTILE_NPY_DESCR)},", header, count=1)
        elif how == "shape":
            header = re.sub(r"'shape': \([^)]*\)", f"'shape': {rng.choice(HOSTILE_NPY_SHAPE)}", header, count=1)
        else:
            header = header.replace("'fortran_order': False", "'fortran_order': True")
        text = header.rstrip().encode("latin1")
        text += b" " * (-(len(text) + 11) % 64) + b"\n"
        content = content[:8] + len(text).to_bytes(2, "little") + text + content[10 + size :]
    elif how == "cut":
        content = content[: rng.randrange(len(content) + 1)]
    elif how == "pickle":
        content = pickle.dumps({"not": "an array"})
    elif how == "pickle-beside":
        members.append((zipfile.ZipInfo(f"extra{len(members)}.npy"), pickle.dumps([1, 2, 3])))
    else:
        name = name[:-4] + ".pkl" if name.endswith(".npy") else name + ".pkl"
    members[i] = (info, content)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for k, (member, body) in enumerate(members):
            z.writestr(name if k == i else member.filename, body, compress_type=member.compress_type)
    return out.getvalue(), f"npz-{how}@{info.filename}"


def _gguf_number(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    """A count, a length, a type or a dimension overwritten: the header's counts, the length before a key or
    name, or the type and count after one."""
    spots = [8, 16]
    for m in _GGUF_STRING.finditer(data):
        spots += [m.start() - 8, m.end(), m.end() + 4, m.end() + 8]
    at = rng.choice([s for s in spots if 0 <= s <= len(data) - 8] or [8])
    if rng.random() < 0.3:
        value = rng.choice([9, 8, 13, 255, 2**32 - 1]).to_bytes(4, "little")
    else:
        value = rng.choice(HOSTILE_U64).to_bytes(8, "little")
    return data[:at] + value + data[at + len(value) :], f"gguf@{at}={value.hex()}"


def _damage(rng: random.Random, data: bytes, kind: str) -> tuple[bytes, str]:
    if kind == "safetensors" and rng.random() < 0.2:
        return _safetensors_length(rng, data)
    aware = {
        "jsonl": _json_value,
        "json": _json_value,
        "frames": _msgpack_value,
        "parquet": _tail_flip,
        "torch": _torch_pickle,
        "polygraphy": _base64_array,
        "safetensors": _safetensors_header,
        "npz": _npz_member,
        "gguf": _gguf_number,
    }.get(kind)
    if aware is not None and rng.random() < 0.5:
        return aware(rng, data)
    return rng.choice(BYTE_DAMAGE)(rng, data)


def damage_bytes(rng: random.Random, data: bytes, kind: str) -> tuple[bytes, list[str]]:
    """One to three damages; a gzip file is mostly damaged inside (then compressed again), else on the wire."""
    done: list[str] = []
    gz = data[:2] == b"\x1f\x8b"
    if gz and rng.random() < 0.8:
        try:
            inner = gzip.decompress(data)
        except (OSError, EOFError, zlib.error):
            inner = None
        if inner is not None:
            inner, done = damage_bytes(rng, inner, kind)
            out = gzip.compress(inner, mtime=0)
            if rng.random() < 0.3:  # and cut short, as a killed writer leaves it
                out, how = _cut(rng, out)
                done.append(f"gz-{how}")
            return out, ["gunzip"] + done + ["gzip"]
    for _ in range(rng.choice((1, 1, 2, 3))):
        data, how = _damage(rng, data, kind)
        done.append(how)
    return data, done


def _files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*") if p.is_file())


def make_mutant(seed: Seed, number: int, work: Path) -> Mutant:
    """Mutant `number` of `seed`, written under `work`."""
    rng = random.Random(f"{seed.name}/{number}")
    out = work / f"{seed.name}-{number}"
    if seed.path.is_dir():
        shutil.copytree(seed.path, out)
        victim = rng.choice(_files(out))
        kind = _kind_of(victim, seed.kind)
        data, done = damage_bytes(rng, victim.read_bytes(), kind)
        victim.write_bytes(data)
        damages: tuple[str, ...] = (f"{victim.name}:" + ",".join(done),)
    else:
        out = out.with_name(out.name + "".join(seed.path.suffixes[-2:]))
        data, done = damage_bytes(rng, seed.path.read_bytes(), seed.kind)
        out.write_bytes(data)
        damages = tuple(done)
    return Mutant(seed, number, out, seed.path, damages)


def _kind_of(path: Path, default: str) -> str:
    head = path.read_bytes()[:4]
    if head == b"PAR1":
        return "parquet"
    if head == b"PK\x03\x04":
        return "torch"
    if path.suffix == ".safetensors":
        return "safetensors"
    if path.name == "metadata.json":
        return "json"
    if head[:1] in (b"\x82", b"\x83", b"\x84", b"\x85", b"\x86", b"\x87", b"\x88", b"\x89", b"\x8a", b"\xde"):
        return "frames"
    if path.suffix in (".json", ".txt", ".log"):
        return "json"
    return "jsonl" if default in ("dir", "logits-dir") else default
