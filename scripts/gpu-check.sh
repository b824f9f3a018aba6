#!/usr/bin/env bash
# Every GPU check of orchlog's CUDA path in one go, for a machine with an NVIDIA
# GPU (docs/cpp.md, "CUDA"). CI machines have none; there the same programs
# compile in tests/native/test_cuda_path.py and their GPU tests say SKIPPED.
#
#   ./scripts/gpu-check.sh            # the programs compile at once (about a minute), seconds of running
#
# Builds every program with nvcc at once for this GPU (-arch=native, or $ARCH; any warning fails),
# then runs:
#   cuda_log         device tensors read back equal to their host twins, no error left
#   cuda_capture     a logged tensor inside a capture: skipped and counted, the capture
#                    and its replays intact; legacy stream; another thread; a pending error
#   cuda_summary     the device's Summary equals the CPU twin's bit for bit (every record
#                    vector, random tensors of every dtype, 4096x4096 f16), and the records of
#                    device tensors are byte-identical with device summaries and copy-then-hash
#   cuda_graph_ring  a captured step replayed N times writes N records byte-identical to
#                    the eager run's, then the tally (expected N, written N, dropped 0)
#   c_cuda_device    liborchlog_c's CUDA entry points from a C engine: device records equal to
#                    their host twins, orchlog_cuda_read, a capture left intact
#   cuda_overhead    the figures for docs/cpp.md (a Markdown table)
# then compute-sanitizer's memcheck and racecheck on the summary and ring kernels where the
# machine allows it (SANITIZE=0 skips them, SANITIZE_RUNS="tool:program ..." picks; a run past 90 s
# says exit 124 and fails nothing).
# Logs and traces go to $OUT (default .cache/gpu-check); exit 0 only when every check passed.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-.cache/gpu-check}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd) # the C library's rpath needs an absolute path
ARCH=${ARCH:--arch=native} # this GPU; ARCH=-arch=sm_90 builds for another where there is none
export SOURCE_DATE_EPOCH=0 # the two traces a check compares have the same header
unset ORCH_LOG_FILE ORCH_LOG_MODE ORCH_LOG_SELECT ORCH_LOG_VALUES

link=()
NVCC=${NVCC:-$(command -v nvcc)}
if [ -z "$NVCC" ]; then # NVIDIA's wheels, as tests/native/test_cuda_path.py installs them
  NVCC=.cache/cuda-toolkit/nvidia/cu13/bin/nvcc
  cudart=$(ls "$PWD"/.cache/cuda-toolkit/nvidia/cu13/lib/libcudart.so.* 2>/dev/null | head -1)
  [ -x "$NVCC" ] && [ -n "$cudart" ] || { echo "gpu-check: no nvcc on PATH and no .cache/cuda-toolkit" >&2; exit 2; }
  link=(-cudart none -Xlinker "$cudart" -Xlinker "-rpath=$(dirname "$cudart")")
fi
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
"$NVCC" --version | tail -2 | tee "$OUT/nvcc.txt"

failed=()
build() { # NAME SOURCE: writes $OUT/NAME.built when it built without a warning
  "$NVCC" -std=c++17 -O2 "$ARCH" -DORCH_LOGGING -Xcompiler=-Wall,-Wextra -Inative/cpp/include \
    -Inative/cpp/tests "-DORCHLOG_VECTORS_DIR=\"$PWD/schema/vectors\"" "$2" -o "$OUT/$1" "${link[@]}" \
    >"$OUT/$1.build.log" 2>&1 && ! grep -qi warning "$OUT/$1.build.log" && touch "$OUT/$1.built"
}
built() { # NAME: whether build NAME succeeded; reports it when not
  [ -e "$OUT/$1.built" ] && return 0
  echo "FAIL $1: does not build without warnings" >&2
  cat "$OUT/$1.build.log" >&2
  failed+=("$1 (build)")
  return 1
}
check() { # NAME EXPECTED-LAST-LINE ARGS...   (ALLOW_WARNINGS=1: orchlog's warnings are expected on stderr)
  local name=$1 expected=$2
  shift 2
  mkdir -p "$OUT/$name.out"
  (cd "$OUT/$name.out" && timeout 600 "../$name" "$@") >"$OUT/$name.log" 2>"$OUT/$name.stderr"
  local rc=$?
  cat "$OUT/$name.log"
  local unexpected
  unexpected=$(if [ "${ALLOW_WARNINGS:-0}" = 1 ]; then grep -v '^orchlog: warning:' "$OUT/$name.stderr"; else cat "$OUT/$name.stderr"; fi)
  if [ $rc -ne 0 ] || [ "$(tail -1 "$OUT/$name.log")" != "$expected" ] || [ -n "$unexpected" ]; then
    echo "FAIL $name (exit $rc)" >&2
    cat "$OUT/$name.stderr" >&2
    failed+=("$name")
  fi
}

# liborchlog_c with its CUDA entry points, and a C engine on them (what the Rust crate's feature `cuda` loads).
build_c_abi() {
  local root=() cudart
  [ -n "$(command -v nvcc)" ] || root=("-DCUDAToolkit_ROOT=$PWD/.cache/cuda-toolkit/nvidia/cu13")
  {
    cmake -S . -B "$OUT/c-abi" -G Ninja -DCMAKE_BUILD_TYPE=Release -DORCHLOG_BUILD_C_LIBRARY=ON \
      -DORCHLOG_INSTALL=OFF -DORCHLOG_C_CUDA=ON "${root[@]}" && cmake --build "$OUT/c-abi" --target orchlog_c &&
      cudart=$(sed -n 's/^CUDA_cudart_LIBRARY:FILEPATH=//p' "$OUT/c-abi/CMakeCache.txt") &&
      include=$(dirname "$(sed -n 's/^CUDAToolkit_BIN_DIR:PATH=//p' "$OUT/c-abi/CMakeCache.txt")")/include &&
      gcc -std=c99 -O2 -Wall -Wextra -Werror -pedantic -Inative/cpp/include -isystem "$include" \
        tests/native/programs/c_cuda_device.c -o "$OUT/c_cuda_device" "$OUT/c-abi/native/c/liborchlog_c.so" "$cudart" \
        "-Wl,-rpath,$OUT/c-abi/native/c:$(dirname "$cudart")"
  } >"$OUT/c_cuda_device.build.log" 2>&1 && touch "$OUT/c_cuda_device.built"
}

# Every program at once (nvcc spends minutes on each; the checks run in seconds).
build cuda_log tests/native/programs/cuda_log.cu &
build cuda_capture tests/native/programs/cuda_capture.cu &
build cuda_summary tests/native/programs/cuda_summary.cu &
build cuda_graph_ring tests/native/programs/cuda_graph_ring.cu &
build cuda_overhead benchmarks/cuda_overhead.cu &
build_c_abi &
wait

built cuda_log &&
  ORCH_LOG_FILE=trace.jsonl check cuda_log "device tensors logged; error left: cudaSuccess"
built cuda_capture &&
  ALLOW_WARNINGS=1 ORCH_LOG_FILE=trace.jsonl check cuda_capture "captures: OK"
built cuda_summary && check cuda_summary "summaries: OK" .
built cuda_graph_ring && check cuda_graph_ring "graph ring: OK" .
if built c_cuda_device; then
  ALLOW_WARNINGS=1 ORCH_LOG_FILE=trace.jsonl check c_cuda_device "c abi: OK"
  # Each device record (token 1) must be its host twin's (token 0) but for the token and the sequence number.
  python3 - "$OUT/c_cuda_device.out/trace.jsonl" <<'PY' || failed+=("c_cuda_device (records)")
import json, sys
records = [json.loads(line) for line in open(sys.argv[1]).read().splitlines()[1:]]
twins = {}
for r in records:
    twins.setdefault(r["checkpoint"], {})[r.pop("token_idx")] = r
    r.pop("seq", None)
assert sorted(twins) == ["f16", "f32"], sorted(twins)
for name, pair in twins.items():
    assert pair[0] == pair[1], f"{name}: the device record differs from its host twin"
print(f"c abi records: {len(records)} written, each device record equal to its host twin")
PY
fi
if built cuda_overhead; then
  (cd "$OUT" && mkdir -p overhead && ./cuda_overhead overhead) | tee "$OUT/figures.md"
  [ "${PIPESTATUS[0]}" -eq 0 ] || failed+=("cuda_overhead")
fi

# Out-of-bounds device accesses and races, where the machine lets compute-sanitizer in (it says so when
# not): memcheck on the summaries of every size and on the ring; racecheck, which is slow, on the small
# tensors of cuda_log (their summaries' shared-memory tiles) and on the ring.
if [ "${SANITIZE:-1}" = 1 ] && command -v compute-sanitizer >/dev/null; then
  for run in ${SANITIZE_RUNS:-memcheck:cuda_summary memcheck:cuda_graph_ring racecheck:cuda_log racecheck:cuda_graph_ring}; do
    tool=${run%%:*} name=${run#*:}
    [ -e "$OUT/$name.built" ] || continue
    (cd "$OUT/$name.out" && ORCH_LOG_FILE=sanitized.jsonl timeout 90 compute-sanitizer --tool "$tool" \
      --error-exitcode 3 "../$name" .) >"$OUT/$name.$tool.log" 2>&1
    rc=$?
    echo "compute-sanitizer $tool $name: exit $rc ($(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY|not supported|Error' "$OUT/$name.$tool.log"))"
    [ $rc -eq 3 ] && failed+=("$name ($tool)")
  done
fi

if [ ${#failed[@]} -gt 0 ]; then
  echo "gpu-check: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "gpu-check: every check passed; figures in $OUT/figures.md"
