#!/usr/bin/env bash
# Every GPU check of orchlog's CUDA path in one go, for a machine with an NVIDIA
# GPU (docs/cpp.md, "CUDA"). CI machines have none; there the same programs
# compile in tests/native/test_cuda_path.py and their GPU tests say SKIPPED.
#
#   ./scripts/gpu-check.sh            # about 2 minutes of compiling, seconds of running
#
# Builds each program with nvcc for this GPU (-arch=native; any warning fails),
# then runs:
#   cuda_log         device tensors read back equal to their host twins, no error left
#   cuda_capture     a logged tensor inside a capture: skipped and counted, the capture
#                    and its replays intact; legacy stream; another thread; a pending error
#   cuda_summary     the device's Summary equals the CPU twin's bit for bit (every record
#                    vector, random tensors of every dtype, 4096x4096 f16), and the records of
#                    device tensors are byte-identical with device summaries and copy-then-hash
#   cuda_graph_ring  a captured step replayed N times writes N records byte-identical to
#                    the eager run's, then the tally (expected N, written N, dropped 0)
#   cuda_overhead    the figures for docs/cpp.md (a Markdown table)
# Logs and traces go to $OUT (default .cache/gpu-check); exit 0 only when every check passed.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-.cache/gpu-check}
mkdir -p "$OUT"
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
build() { # NAME SOURCE
  "$NVCC" -std=c++17 -O2 -arch=native -DORCH_LOGGING -Xcompiler=-Wall,-Wextra -Inative/cpp/include \
    -Inative/cpp/tests "-DORCHLOG_VECTORS_DIR=\"$PWD/schema/vectors\"" "$2" -o "$OUT/$1" "${link[@]}" \
    >"$OUT/$1.build.log" 2>&1
  local rc=$?
  if [ $rc -ne 0 ] || grep -qi warning "$OUT/$1.build.log"; then
    echo "FAIL $1: does not build without warnings" >&2
    cat "$OUT/$1.build.log" >&2
    failed+=("$1 (build)")
    return 1
  fi
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

build cuda_log tests/native/programs/cuda_log.cu &&
  ORCH_LOG_FILE=trace.jsonl check cuda_log "device tensors logged; error left: cudaSuccess"
build cuda_capture tests/native/programs/cuda_capture.cu &&
  ALLOW_WARNINGS=1 ORCH_LOG_FILE=trace.jsonl check cuda_capture "captures: OK"
build cuda_summary tests/native/programs/cuda_summary.cu && check cuda_summary "summaries: OK" .
build cuda_graph_ring tests/native/programs/cuda_graph_ring.cu && check cuda_graph_ring "graph ring: OK" .
if build cuda_overhead benchmarks/cuda_overhead.cu; then
  (cd "$OUT" && mkdir -p overhead && ./cuda_overhead overhead) | tee "$OUT/figures.md"
  [ "${PIPESTATUS[0]}" -eq 0 ] || failed+=("cuda_overhead")
fi

if [ ${#failed[@]} -gt 0 ]; then
  echo "gpu-check: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "gpu-check: every check passed; figures in $OUT/figures.md"
