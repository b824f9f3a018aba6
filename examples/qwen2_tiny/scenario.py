"""The token ids every engine runs: one prompt pass, then decode steps.

Decode steps feed fixed tokens rather than each engine's own greedy choice,
so that an engine with a bug still sees the same inputs as the reference and
its records line up with the reference's, token for token.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class ForwardCall:
    """One call into an engine: `step` 0 is the prompt pass, then one per decode step."""

    step: int
    first_position: int
    tokens: tuple[int, ...]

    @property
    def positions(self) -> range:
        return range(self.first_position, self.first_position + len(self.tokens))


@dataclass(frozen=True)
class Scenario:
    prompt: tuple[int, ...]
    decode: tuple[int, ...]

    @property
    def n_positions(self) -> int:
        return len(self.prompt) + len(self.decode)

    def as_one_pass(self) -> Scenario:
        """The same tokens in a single prompt pass: what cached decode steps must reproduce."""
        return Scenario(prompt=self.prompt + self.decode, decode=())

    def calls(self) -> Iterator[ForwardCall]:
        yield ForwardCall(step=0, first_position=0, tokens=self.prompt)
        for i, token in enumerate(self.decode):
            yield ForwardCall(step=i + 1, first_position=len(self.prompt) + i, tokens=(token,))


# Ids spread over the vocabulary, including 0 and the last id; no repeats, so
# that a lookup reading the wrong row cannot land on the right one by chance.
DEFAULT_SCENARIO = Scenario(prompt=(0, 17, 42, 99, 128, 200, 7, 255), decode=(3, 64, 151))
