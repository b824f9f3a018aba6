"""The fields the next changes will add, each as the one schema entry it takes, on a copy of the schema.

A request id, a mixture-of-experts expert and its count, a beam and a
speculative-decoding flag are key parts (given per call; one of each integer
width and a bool), `deterministic` is a run field set by a knob of its own, `lane_sums` a digest
(four floats computed over the whole tensor by one function per language) and
`crc_ieee` a frame field (a second checksum, after `data` and before `crc32c`,
in record and header frames). Tests add them to a copy of
schema/orchlog.schema.yaml and check that every generated output carries
them, which is the recipe docs/architecture.md gives.
"""

from __future__ import annotations

import copy
import math
import zlib
from typing import Any

import numpy as np
import yaml

from orchlog.codegen import schema as schema_mod
from orchlog.encoding import dtypes

KEY_PARTS: list[dict[str, Any]] = [
    {
        "name": "request_id",
        "source": "key",
        "type": "i64",
        "min": 0,
        "nullable": True,
        "doc": "The serving request the tensor's tokens belong to.",
        "example": 4242,
    },
    {
        "name": "expert",
        "source": "key",
        "type": "i32",
        "min": 0,
        "nullable": True,
        "doc": "The mixture-of-experts expert that computed the tensor.",
        "example": 1,
    },
    {
        "name": "beam",
        "source": "key",
        "type": "i32",
        "min": 0,
        "nullable": True,
        "doc": "The beam of a beam search the tensor belongs to.",
        "example": 2,
    },
    {
        "name": "num_experts",
        "source": "key",
        "type": "i32",
        "min": 1,
        "nullable": True,
        "doc": "How many experts the router chose from.",
        "example": 8,
    },
    {
        "name": "speculative",
        "source": "key",
        "type": "bool",
        "nullable": True,
        "doc": "The tensor was computed for a speculative (draft) token.",
        "example": True,
    },
]
RUN_FIELD = {
    "name": "deterministic",
    "source": "run",
    "type": "bool",
    "doc": "Whether the run used deterministic kernels only.",
    "example": True,
}
KNOB = {
    "name": "ORCH_LOG_DETERMINISTIC",
    "setting": "deterministic",
    "type": "bool",
    "default": "0",
    "doc": "1 in a run of deterministic kernels.",
}
DIGEST = {
    "name": "lane_sums",
    "source": "digest",
    "type": "floats",
    "length": 4,
    "precision": "f32",
    "doc": "Four lane sums of the finite elements.",
}
FRAME = {
    "name": "crc_ieee",
    "source": "frame",
    "type": "i64",
    "encodings": ["msgpack"],
    "doc": "CRC-32 (IEEE) of the frame's bytes before this key.",
}
NEW_FIELDS = [f["name"] for f in (*KEY_PARTS, RUN_FIELD, DIGEST)]  # the fields every encoding carries


def raw_schema(repo_root) -> dict[str, Any]:
    """The shipped schema with the next fields: each one entry (the knob one more)."""
    raw = yaml.safe_load((repo_root / "schema" / "orchlog.schema.yaml").read_text(encoding="utf-8"))
    raw = copy.deepcopy(raw)
    fields = raw["record"]["fields"]
    names = [f["name"] for f in fields]
    fields[names.index("rank") + 1 : names.index("rank") + 1] = copy.deepcopy(KEY_PARTS)
    names = [f["name"] for f in fields]
    fields.insert(names.index("world_size") + 1, dict(RUN_FIELD))
    names = [f["name"] for f in fields]
    fields.insert(names.index("stats") + 1, dict(DIGEST))
    for frame_fields in (fields, raw["header"]["fields"]):
        names = [f["name"] for f in frame_fields]
        frame_fields.insert(names.index("crc32c"), dict(FRAME))
    raw["env"].append(dict(KNOB))
    return raw


def extended_schema(repo_root) -> schema_mod.Schema:
    return schema_mod.parse(raw_schema(repo_root), repo_root / "schema" / "orchlog.schema.yaml")


def stand_in_functions(patch) -> None:
    """Give the reference encoder the hand-written functions the lane sums and the crc need."""
    from orchlog.encoding import digest, frame

    patch.setattr(digest, "digest_lane_sums", digest_lane_sums, raising=False)
    patch.setattr(frame, "frame_crc_ieee", frame_crc_ieee, raising=False)


def frame_crc_ieee(prefix: bytes) -> int:
    """CRC-32 (IEEE) of a frame's bytes before the key. Twins: CRC_CPP and CRC_RUST."""
    return zlib.crc32(prefix)


def digest_lane_sums(data: bytes | memoryview, dtype: str) -> tuple[float, ...]:
    """Element i of the finite ones adds into lane i % 4, in element order from +0.0; each lane
    is then rounded to f32. Twins: SKETCH_CPP and SKETCH_RUST (f32 tensors only there)."""
    with np.errstate(invalid="ignore", over="ignore"):  # signalling NaNs; lane sums beyond f32
        x = dtypes.to_f64(dtypes.from_bytes(data, dtype), dtype)
        return _rounded_lanes(x)


def _rounded_lanes(x: np.ndarray) -> tuple[float, ...]:
    lanes = [0.0] * 4
    for i, v in enumerate(x.tolist()):
        if math.isfinite(v):
            lanes[i % 4] += v
    return tuple(float(np.float32(v)) for v in lanes)


SKETCH_CPP = """
inline void digest_lane_sums(const DigestPass& pass, std::array<double, 4>& out) {
  double lanes[4] = {0.0, 0.0, 0.0, 0.0};
  const auto* x = static_cast<const float*>(pass.tensor.data);
  for (std::int64_t i = 0; pass.tensor.dtype == DType::f32 && i < pass.size.numel; ++i)
    if (std::isfinite(x[i])) lanes[i % 4] += static_cast<double>(x[i]);
  for (int j = 0; j < 4; ++j) out[j] = static_cast<double>(static_cast<float>(lanes[j]));
}
"""

SKETCH_RUST = """
pub(crate) fn digest_lane_sums(pass: &Pass<'_, '_>) -> [f64; 4] {
    let tensor = pass.tensor;
    let mut lanes = [0.0f64; 4];
    if tensor.dtype() == crate::schema_gen::DType::F32 {
        for (i, b) in tensor.bytes().chunks_exact(4).enumerate() {
            let v = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            if v.is_finite() {
                lanes[i % 4] += f64::from(v);
            }
        }
    }
    lanes.map(|v| f64::from(v as f32))
}
"""

CRC_CPP = """
  void frame_crc_ieee() {
    std::uint32_t c = 0xFFFFFFFFu;
    for (const std::string_view piece : frame_so_far())
      for (const char ch : piece) {
        c ^= static_cast<unsigned char>(ch);
        for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
      }
    key("crc_ieee");
    integer(static_cast<std::int64_t>(c ^ 0xFFFFFFFFu));
  }
"""

CRC_RUST = """
    fn frame_crc_ieee(&mut self) {
        let mut c = 0xFFFF_FFFFu32;
        for piece in self.frame_so_far() {
            for &b in piece.iter() {
                c ^= u32::from(b);
                for _ in 0..8 {
                    c = (c >> 1) ^ (0xEDB8_8320 & 0u32.wrapping_sub(c & 1));
                }
            }
        }
        self.string("crc_ieee");
        self.int(i64::from(c ^ 0xFFFF_FFFF));
    }
"""
