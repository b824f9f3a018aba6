"""The C ABI (orchlog/orchlog.h, liborchlog_c) through cffi: the vectors byte
for byte, and logging that a C engine would do."""

from __future__ import annotations

import subprocess
import sys

from orchlog import schema_gen
from orchlog.read.paths import open_trace
from tests.conftest import load_vectors
from tests.native import build
from tests.native.conftest import c_declarations
from tests.vectors_io import meta_from_json

# The key parts orchlog_named_parts holds: bit i of `given` (ORCHLOG_PART_<NAME>) is the i-th.
NAMED_PARTS = [p for p in schema_gen.KEY_PARTS if p not in schema_gen.POSITIONAL_KEY_PARTS]


def _meta(ffi, meta: dict, keep: list):
    entries = ffi.new("orchlog_meta[]", max(len(meta), 1))
    for i, (key, value) in enumerate(meta.items()):
        k = ffi.new("char[]", key.encode())
        keep.append(k)
        entries[i].key = k
        if isinstance(value, bool):
            entries[i].kind, entries[i].i = 0, int(value)
        elif isinstance(value, int):
            entries[i].kind, entries[i].i = 1, value
        elif isinstance(value, float):
            entries[i].kind, entries[i].f = 2, value
        else:
            s = ffi.new("char[]", value.encode())
            keep.append(s)
            entries[i].kind, entries[i].s = 3, s
    return entries


def _text(ffi, value, keep):
    if value is None:
        return ffi.NULL
    s = ffi.new("char[]", value.encode() if isinstance(value, str) else value)
    keep.append(s)
    return s


def _take(ffi, lib, out) -> bytes:
    data = bytes(ffi.buffer(out.data, out.size))
    lib.orchlog_bytes_free(out)
    return data


def test_every_record_vector_is_reproduced_byte_for_byte(c_abi, record_vectors):
    ffi, lib = c_abi
    for case in record_vectors:
        doc, keep = case["input"], list[object]()
        checkpoint = bytes.fromhex(doc["checkpoint_hex"]) if "checkpoint_hex" in doc else doc["checkpoint"].encode()
        meta = meta_from_json(doc["meta"])
        data = bytes.fromhex(doc["data_hex"])
        shape = ffi.new("int64_t[]", doc["shape"] or [0])
        r = ffi.new("orchlog_record_input*")
        r.checkpoint, r.checkpoint_len = _text(ffi, checkpoint, keep), len(checkpoint)
        r.team = _text(ffi, doc["team"], keep)
        r.key.token_idx = -1 if doc["token_idx"] is None else doc["token_idx"]
        r.key.layer = -1 if doc["layer"] is None else doc["layer"]
        r.key.step = -1 if doc["step"] is None else doc["step"]
        r.key.stage = _text(ffi, doc["stage"], keep)
        r.rank, r.world_size, r.seq = doc["rank"], doc["world_size"], doc["seq"]
        for bit, name in enumerate(NAMED_PARTS):
            if doc.get(name) is not None:
                setattr(r.parts, name, int(doc[name]))
                r.parts.given |= 1 << bit
        for name in schema_gen.CALL_FIELDS:
            value = doc[name]
            setattr(r, name, _text(ffi, value, keep) if isinstance(value, str) or value is None else int(value))
        buf = ffi.from_buffer(data)
        r.data, r.dtype = buf, _text(ffi, doc["dtype"], keep)
        r.shape, r.ndim, r.values = shape, len(doc["shape"]), doc["values"]
        r.meta, r.n_meta = _meta(ffi, meta, keep), len(meta)
        jsonl, frame = ffi.new("orchlog_bytes*"), ffi.new("orchlog_bytes*")
        assert lib.orchlog_encode_record(r, jsonl, frame) == 1, case["name"]
        assert _take(ffi, lib, jsonl) == (case["expected"]["jsonl"] + "\n").encode(), case["name"]
        assert _take(ffi, lib, frame).hex() == case["expected"]["frame_hex"], case["name"]


def test_every_header_vector_is_reproduced_byte_for_byte(c_abi, header_vectors):
    ffi, lib = c_abi
    for case in header_vectors:
        doc, keep = case["input"], list[object]()
        config = meta_from_json(doc["config"])
        h = ffi.new("orchlog_header_input*")
        h.language, h.created, h.team = (_text(ffi, doc[k], keep) for k in ("language", "created", "team"))
        h.model, h.git_commit, h.select = (_text(ffi, doc[k], keep) for k in ("model", "git_commit", "select"))
        h.rank, h.world_size, h.values = doc["rank"], doc["world_size"], doc["values"]
        h.config, h.n_config = _meta(ffi, config, keep), len(config)
        jsonl, frame = ffi.new("orchlog_bytes*"), ffi.new("orchlog_bytes*")
        assert lib.orchlog_encode_header(h, jsonl, frame) == 1
        assert _take(ffi, lib, jsonl) == (case["expected"]["jsonl"] + "\n").encode(), case["name"]
        assert _take(ffi, lib, frame).hex() == case["expected"]["frame_hex"], case["name"]


def test_blake3_of_the_c_abi_reproduces_the_official_vectors(c_abi):
    ffi, lib = c_abi
    out = ffi.new("char[65]")
    for case in load_vectors("blake3_official.json")["cases"]:
        data = bytes(i % 251 for i in range(case["input_len"]))
        lib.orchlog_blake3_hex(data, len(data), out)
        assert ffi.string(out).decode() == case["hash"], case["input_len"]


# Logging changes process-wide state, so it runs in a child process with a C-like host.
_LOGGING_CHILD = r"""
import sys, cffi, numpy as np
ffi = cffi.FFI(); ffi.cdef(sys.argv[2]); lib = ffi.dlopen(sys.argv[1])
keep = []
def s(text): keep.append(ffi.new("char[]", text.encode())); return keep[-1]
opts = ffi.new("orchlog_options*"); opts.path = s(sys.argv[3]); opts.team = s("c-engine"); opts.values = s("4")
opts.mode = s("summary"); opts.select = s(""); opts.rank = s("0"); opts.world_size = s("1")
assert lib.orchlog_configure(opts) == 1
x = np.arange(8, dtype=np.float32)
shape = ffi.new("int64_t[]", [2, 4])
key = ffi.new("orchlog_key*", {"token_idx": 3, "layer": 1, "step": 0, "stage": s("rope")})
assert lib.orchlog_log(b"Qcur", ffi.from_buffer(x), b"f32", shape, 2, key) == 1
assert lib.orchlog_log(b"embedding", ffi.from_buffer(x), b"float32", shape, 2, ffi.NULL) == 1
assert lib.orchlog_log(b"bad", ffi.from_buffer(x), b"q4_0", shape, 2, ffi.NULL) == 0
print(lib.orchlog_record_count(), lib.orchlog_error_count())
lib.orchlog_close()
"""


def test_a_c_host_logs_records_that_read_back_with_a_c_producer(c_abi, tmp_path):
    out = tmp_path / "c.jsonl"
    proc = subprocess.run(
        [sys.executable, "-c", _LOGGING_CHILD, str(build.c_library()), c_declarations(), str(out)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["2", "1"]
    assert "unknown dtype 'q4_0'" in proc.stderr
    trace = open_trace(out)
    recs = list(trace)
    assert trace.header is not None
    assert trace.header["producer"]["language"] == "c" and trace.header["team"] == "c-engine"
    assert [(r.checkpoint, r.token_idx, r.layer, r.stage, r.shape) for r in recs] == [
        ("Qcur", 3, 1, "rope", (2, 4)),
        ("embedding", None, None, None, (2, 4)),
    ]
    assert recs[0].values is not None
    assert recs[0].values.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_the_c_header_compiles_as_c99_and_links_against_the_library(tmp_path):
    src = tmp_path / "host.c"
    src.write_text(
        "#include <orchlog/orchlog.h>\n#include <stdio.h>\n"
        "int main(void) { float x[2] = {1, 2}; int64_t shape[1] = {2};\n"
        "  orchlog_key key = {0, ORCHLOG_NONE, ORCHLOG_NONE, NULL};\n"
        '  printf("%d %s\\n", orchlog_log("x", x, "f32", shape, 1, &key), orchlog_version()); return 0; }\n'
    )
    lib = build.c_library()
    exe = tmp_path / "host"
    subprocess.run(
        [
            "gcc",
            "-std=c99",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
            f"-I{build.INCLUDE}",
            str(src),
            str(lib),
            f"-Wl,-rpath,{lib.parent}",
            "-o",
            str(exe),
        ],
        check=True,
    )
    out = subprocess.run([str(exe)], capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"}, check=True)
    assert out.stdout.split() == ["0", "0.1.0"]  # no ORCH_LOG_FILE: nothing written


_GRAFT_CHILD = r"""
import sys, cffi, numpy as np
ffi = cffi.FFI(); ffi.cdef(sys.argv[2]); lib = ffi.dlopen(sys.argv[1])
keep = []
def s(text): keep.append(ffi.new("char[]", text.encode())); return keep[-1]
def run(path, mode, graft_from=None, graft_select=None):
    opts = ffi.new("orchlog_options*"); opts.path = s(path); opts.team = s("c"); opts.values = s("4")
    opts.mode = s(mode); opts.select = s(""); opts.rank = s("0"); opts.world_size = s("1")
    if graft_from: opts.graft_from, opts.graft_select = s(graft_from), s(graft_select)
    assert lib.orchlog_configure(opts) == 1
shape = ffi.new("int64_t[]", [2, 4])
key = ffi.new("orchlog_key*", {"token_idx": 0, "layer": 1, "step": -1, "stage": ffi.NULL})
run(sys.argv[3], "full")
assert lib.orchlog_log(b"attn_norm", ffi.from_buffer(np.arange(8, dtype=np.float32)), b"f32", shape, 2, key) == 1
lib.orchlog_close()
run(sys.argv[4], "summary", sys.argv[3], "checkpoint=attn_norm")
x = np.zeros(8, np.float16)
print(lib.orchlog_graft(b"attn_norm", ffi.from_buffer(x), b"f16", shape, 2, key), x.tolist())
lib.orchlog_close()
"""


def test_a_c_host_grafts_a_selected_tensor_from_a_reference_converting_its_dtype(c_abi, tmp_path):
    ref, out = tmp_path / "ref.bin", tmp_path / "run.jsonl"
    proc = subprocess.run(
        [sys.executable, "-c", _GRAFT_CHILD, str(build.c_library()), c_declarations(), str(ref), str(out)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split(" ", 1) == ["1", f"{[float(i) for i in range(8)]}\n"]
    assert [r.grafted for r in open_trace(out)] == [True]
