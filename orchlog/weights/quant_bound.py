"""How far a block-quantized weight may sit from the numbers it was quantized from, element by element.

A Q8_0 block stores 32 values as q * d (q an int8, d an f16 scale): quantizing x rounded x / d to the nearest
q, so |x - q d| is at most half a step, d / 2, plus what rounding d itself to f16 moved every q d by
(|q| d 2^-11). The same holds for the other simple block types, each with its own step and range:

| type | block | value | |x - value| at most |
|---|---|---|---|
| q8_0 | d (f16), 32 int8 | q d, q in [-127, 127] | d/2 + 127 d 2^-11 |
| q4_0 | d, 16 bytes of nibbles | (q - 8) d, q in [0, 15] | d + 8 d 2^-11 (*) |
| q5_0 | d, 4 high bits, 16 bytes | (q - 16) d, q in [0, 31] | d + 16 d 2^-11 (*) |
| q4_1 | d, m (f16), nibbles | q d + m, q in [0, 15] | d/2 + 15 d 2^-11 + m 2^-11 |
| q5_1 | d, m, high bits, nibbles | q d + m, q in [0, 31] | d/2 + 31 d 2^-11 + m 2^-11 |

(*) d is the block's signed extreme over -8 (-16): the element opposite it maps to q = 16 (32), clamped to
15 (31), a whole step off.

(all times 1 + 2^-10, and 2^-20 of the value for the f32 arithmetic of the quantizer). A weight of one of
these types read from a GGUF file is within its bound of the checkpoint it was made from at every element,
however large the bound is next to a fixed tolerance; one element beyond it means the file was not made from
that checkpoint. K-quants and the i-quants choose their scales by search and store them in sub-blocks: they
have no bound here, and keep the tolerance file's rule (docs/weights.md).
"""

from __future__ import annotations

import numpy as np

# type -> (bytes per block, elements per block, has a min, the largest |q| the scale multiplies, rounding
# error in steps)
BLOCKS = {
    "q8_0": (34, 32, False, 127, 0.5),
    "q4_0": (18, 32, False, 8, 1.0),
    "q5_0": (22, 32, False, 16, 1.0),
    "q4_1": (20, 32, True, 15, 0.5),
    "q5_1": (24, 32, True, 31, 0.5),
}
F16_ROUNDING = 2.0**-11
SLACK = 1 + 2.0**-10


def bound(raw: np.ndarray, kind: str, values: np.ndarray) -> np.ndarray | None:
    """Per element of the dequantized `values` (flat, in file order), the largest distance from the number it
    was quantized from; None for a type without a bound, or bytes that are not whole blocks of it."""
    if kind not in BLOCKS:
        return None
    size, per, has_min, q_max, steps = BLOCKS[kind]
    data = np.ascontiguousarray(raw, dtype=np.uint8).reshape(-1)
    if data.size % size or data.size // size * per != values.size:
        return None
    blocks = data.reshape(-1, size)
    d = np.abs(blocks[:, 0:2].copy().view(np.float16).astype(np.float64).reshape(-1))
    step = d * (steps + q_max * F16_ROUNDING)
    if has_min:
        step = step + np.abs(blocks[:, 2:4].copy().view(np.float16).astype(np.float64).reshape(-1)) * F16_ROUNDING
    per_element = np.repeat(step, per) * SLACK
    out: np.ndarray = per_element + np.abs(values.reshape(-1).astype(np.float64)) * 2.0**-20
    return out
