"""`torch.save` dumps of other tools, told apart by what the file holds (orchlog.read.torch_file reads
them without executing the pickle):

- **SGLang dumper** (`DUMPER_ENABLE=1`): one file per dump, `{"value": tensor, "meta": {...}}`; meta has
  `name`, `step`, `rank`, `dump_index`, extra tags such as `layer_id`, `world_rank`, `world_size`,
  `sglang_parallel_info` (tp_rank, tp_size, ...) and `dims` (its shard notation, which becomes the
  record's shard fields). A tensor whose dims name its tokens (`t h`, `b s h` of one sequence) is one
  record per token, positions and token ids from the `positions` and `input_ids` dumped for the same
  step and rank, as orchlog's adapters log them. The hook mode's names `non_intrusive__{module}.output` / `.inputs.{i}` become
  checkpoint `{module}` with stage None / `input` (`input.{name}` for keyword inputs), as orchlog.torch
  logs them.
- **SGLang TensorDumper** (`--debug-tensor-dump-output-folder`): `Pass{NNNNN}.pt`, a dict from module path
  to its output tensor (or a list of them) for one forward pass, under `TP{t}_PP{p}_Rank{n}_pid{pid}/`:
  step = the pass, rank = t.
- **one tensor per file**: vllm-neuron's captures (`prompt_{hash}/step_{N}/{module}_rank{R}.pt`: step N,
  rank R) and msprobe's `dump_tensor_data/*.pt` when read without their dump.json; other names give the
  file's stem as the checkpoint.

The tools' own keys live in file and directory names that their writers fix; those names are parsed
for keys only, never to decide the format.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from orchlog import shard_dims
from orchlog.read.formats import Format, register
from orchlog.read.formats.tool_common import layer_of, tensor_record, token_records, tool_header
from orchlog.read.torch_file import TensorRef, UnsafePickle, is_torch_zip, read_torch_file
from orchlog.read.trace import Location, Trace, TraceRecord

INTRUSIVE_PREFIX = "non_intrusive__"
_PASS = re.compile(r"Pass(\d{1,9})\.pt$")
_RANK_DIR = re.compile(r"TP(\d{1,9})_PP(\d{1,9})_Rank(\d{1,9})_pid\d+$")
_NEURON = re.compile(r"(?P<module>.+)_rank(?P<rank>\d{1,9})\.pt$")
_STEP_DIR = re.compile(r"step_(\d{1,9})$")
_INT_META = ("step", "rank", "dump_index", "layer_id", "world_rank", "world_size")


def _sniff(path: Path, head: bytes) -> bool:
    return is_torch_zip(head)


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**31 else None


def _sglang_name(name: str) -> tuple[str, str | None]:
    """(checkpoint, stage) of a dumper name: hook names are module paths plus what was dumped."""
    if not name.startswith(INTRUSIVE_PREFIX):
        return name, None
    rest = name[len(INTRUSIVE_PREFIX) :]
    module, sep, what = rest.rpartition(".output")
    if sep and (what == "" or re.fullmatch(r"\.\d+", what)):
        return module or rest, None if what in ("", ".0") else f"output{what}"
    m = re.fullmatch(r"(?P<module>.*?)\.?inputs\.(?P<arg>[\w.]+)", rest)
    if m:
        return m["module"] or "model", "input" if m["arg"] == "0" else f"input.{m['arg']}"
    return rest, None


def _meta_scalars(meta: dict[str, Any]) -> dict[str, Any]:
    """The dump's tags a record keeps in its meta (scalars only, as FORMAT.md says a meta holds)."""
    out: dict[str, Any] = {}
    for k, v in meta.items():
        if isinstance(k, str) and isinstance(v, (str, int, float, bool)) and k not in ("name",):
            out[k] = v if not isinstance(v, str) else v[:200]
    return out


def _shard_fields(dims_text: Any, tp_rank: int | None, tp_size: int | None) -> dict[str, Any]:
    """The record's shard fields from SGLang's dims annotation: a tp-split axis, partial sums, or replicated."""
    if not isinstance(dims_text, str) or not tp_size or tp_size <= 1:
        return {}
    try:
        dims = shard_dims.parse(dims_text)
    except ValueError:
        return {}  # a dims string orchlog cannot read leaves the record unannotated (a map can say)
    if dims.replicated:
        return {"shard_partial": False}
    if dims.sections or dims.groups or dims.other:
        return {}  # layouts the record's fields cannot say: a map's [shards] gives them
    if dims.partial:
        return {"shard_partial": True, "num_shards": tp_size, "shard_index": tp_rank}
    if dims.split is not None:
        return {"shard_axis": dims.split, "num_shards": tp_size, "shard_index": tp_rank}
    return {}


def _sglang(trace: Trace, doc: dict[str, Any], where: Location) -> Iterator[TraceRecord]:
    meta = doc["meta"]
    value = doc["value"]
    tensors = [value] if isinstance(value, TensorRef) else []
    if not tensors:
        return  # request ids, sequence lengths as lists: no tensor to compare
    name = meta.get("name")
    if not isinstance(name, str):
        raise ValueError("the dump's meta has no name")
    checkpoint, stage = _sglang_name(name)
    info = next((v for k, v in meta.items() if str(k).endswith("_parallel_info") and isinstance(v, dict)), {})
    tp_rank, tp_size = _int(info.get("tp_rank")), _int(info.get("tp_size"))
    rank = tp_rank if tp_rank is not None else _int(meta.get("rank"))
    layer = _int(meta.get("layer_id"))
    keys = {
        "stage": stage,
        "step": _int(meta.get("step")),
        "rank": rank or 0,
        "world_size": tp_size or 1,
        "layer": layer if layer is not None else layer_of(checkpoint),
        "meta": _meta_scalars(meta),
        # The dumper's counter, in execution order (its file names are not zero-padded: name order is not it).
        "seq": _int(meta.get("dump_index")),
    }
    keys.update(_shard_fields(meta.get("dims"), rank, tp_size))
    if not trace.headers:
        trace.headers.append(
            tool_header(
                "sglang-dumper", "full tensors, one per file, with SGLang's tags", exp=Path(trace.path).parent.name
            )
        )
    record = tensor_record(checkpoint, tensors[0], where, **keys)
    split = _token_split(Path(trace.path).parent, meta, tensors[0], record)
    if split is None:
        yield record
        return
    axis, positions, ids, shard_axis = split
    for row in token_records(record, tensors[0], positions, axis, ids):
        row.shard_axis = shard_axis
        yield row


def _token_split(
    directory: Path, meta: dict[str, Any], ref: TensorRef, record: TraceRecord
) -> tuple[int, list[int], list[int] | None, int | None] | None:
    """How a tensor whose dims name its tokens (`t ...`, or `b s ...` with one sequence) splits into one
    record per token: (axis, positions, token ids, the rows' shard axis), from the `positions` and
    `input_ids` SGLang dumped for the same step and rank; None to keep it whole."""
    if not isinstance(meta.get("dims"), str) or record.checkpoint in AUX_NAMES:
        return None
    try:
        dims = shard_dims.parse(meta["dims"])
    except ValueError:
        return None
    if dims.names[:1] == ("t",) or dims.names[:1] == ("s",):
        axis, removed = 0, 1
    elif dims.names[:2] in (("b", "s"), ("b", "t")) and ref.shape[:1] == (1,):
        axis, removed = 1, 2
    else:
        return None
    step, rank = _int(meta.get("step")), _int(meta.get("rank"))
    if step is None or rank is None or len(ref.shape) <= axis:
        return None
    positions = _aux(str(directory), step, rank, "positions")
    if positions is None or len(positions) != ref.shape[axis]:
        return None
    ids = _aux(str(directory), step, rank, "input_ids")
    shard_axis = record.shard_axis
    if shard_axis is not None:
        if shard_axis < removed:
            return None  # split along the tokens (context parallelism): kept whole
        shard_axis -= removed
    return axis, list(positions), list(ids) if ids is not None and len(ids) == len(positions) else None, shard_axis


AUX_NAMES = ("positions", "input_ids", "seq_lens", "req_pool_indices", "rids")
MAX_AUX = 1 << 20


@functools.lru_cache(maxsize=64)
def _aux(directory: str, step: int, rank: int, name: str) -> tuple[int, ...] | None:
    """The ids SGLang's dumper wrote for a step beside its tensors (`positions`, `input_ids`), found by the
    tags its file names carry and checked against the meta inside."""
    for f in sorted(Path(directory).glob(f"step={step}___rank={rank}___*name={name}___*.pt"))[:4]:
        try:
            doc = read_torch_file(f)
        except (UnsafePickle, OSError):
            continue
        if not (
            isinstance(doc, dict) and isinstance(doc.get("meta"), dict) and isinstance(doc.get("value"), TensorRef)
        ):
            continue
        ref = doc["value"]
        if (
            doc["meta"].get("name") != name
            or ref.dtype not in ("i32", "i64")
            or len(ref.shape) != 1
            or ref.numel > MAX_AUX
        ):
            continue
        try:
            return tuple(int(x) for x in ref.array())
        except (OSError, ValueError):
            continue
    return None


def _tensor_dumper(trace: Trace, doc: dict[Any, Any], where: Location) -> Iterator[TraceRecord]:
    path = Path(trace.path)
    step = _PASS.search(path.name)
    ranks = _RANK_DIR.search(path.parent.name)
    if not trace.headers:
        trace.headers.append(
            tool_header("sglang-tensor-dumper", "full tensors of leaf modules, one file per forward pass")
        )
    for key, value in doc.items():
        if not isinstance(key, str):
            continue
        items = value if isinstance(value, list) else [value]
        for k, item in enumerate(items):
            if not isinstance(item, TensorRef):
                continue
            yield tensor_record(
                key,
                item,
                where,
                stage=None if len(items) == 1 or k == 0 else f"output.{k}",
                step=int(step[1]) if step else None,
                rank=int(ranks[1]) if ranks else 0,
                meta={"pp_rank": int(ranks[2])} if ranks else {},
            )


def _one_tensor(trace: Trace, ref: TensorRef, where: Location) -> Iterator[TraceRecord]:
    path = Path(trace.path)
    neuron = _NEURON.match(path.name)
    step = _STEP_DIR.match(path.parent.name)
    if neuron and step:
        if not trace.headers:
            trace.headers.append(tool_header("vllm-neuron", "full tensors, one module's output per file"))
        yield tensor_record(
            neuron["module"],
            ref,
            where,
            step=int(step[1]),
            rank=int(neuron["rank"]),
            meta={"prompt": path.parent.parent.name},
        )
        return
    if not trace.headers:
        trace.headers.append(tool_header("torch.save", "one tensor"))
    yield tensor_record(path.stem, ref, where)


def _records(trace: Trace) -> Iterator[TraceRecord]:
    where = Location(trace.path)
    try:
        doc = read_torch_file(Path(trace.path))
    except UnsafePickle as exc:
        trace.report(where, f"not read: {exc}", fatal=True)
        return
    except OSError as exc:
        trace.report(where, f"cannot read this torch file: {exc}", fatal=True)
        return
    trace.bytes_read = trace.size or 0
    try:
        if isinstance(doc, TensorRef):
            yield from _one_tensor(trace, doc, where)
        elif isinstance(doc, dict) and set(doc) == {"value", "meta"} and isinstance(doc["meta"], dict):
            yield from _sglang(trace, doc, where)
        elif isinstance(doc, dict) and any(isinstance(v, (TensorRef, list)) for v in doc.values()):
            yield from _tensor_dumper(trace, doc, where)
        else:
            trace.report(where, "a torch file holding neither a tensor nor a known tool's dump; skipped")
    except ValueError as exc:
        trace.report(where, f"invalid dump ({exc}); skipped")


def open_torch_dump(path: Path) -> Trace:
    return Trace(str(path), "torch-dump", _records)


register(Format("torch-dump", _sniff, open_torch_dump, priority=21))
