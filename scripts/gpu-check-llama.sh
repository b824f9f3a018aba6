#!/usr/bin/env bash
# orchlog's ggml adapter on llama.cpp's CUDA backend, for a machine with an NVIDIA GPU, nvcc, CMake
# and Ninja, without network and without orchlog installed (docs/llama-cpp.md, "Checking on a CUDA
# machine"). Run in the checkout's root:
#
#   scripts/gpu-check-llama.sh OUT [CARRY]      # CARRY: default .gpu-carry
#
# CARRY is what `.venv/bin/python scripts/gpu_llama_carry.py .gpu-carry` wrote on a machine with
# orchlog: the pinned llama.cpp source cut to a library build, the tiny model, its tokens and the CPU
# reference trace. Steps, each under `timeout`, each printing its seconds:
#   configure  llama.cpp with GGML_CUDA=ON, GGML_CUDA_FA=OFF, CUDA_ARCHS (default 90), and the
#              library-only flags of orchlog/llama/build.py (tests/scripts/test_gpu_check_llama.py
#              checks that they match)
#   build      ninja -j JOBS (default: every core), then install; a rerun resumes an interrupted build
#   driver     orchlog/llama/run_tokens.cpp against that install and native/cpp/include
#   summary    the tokens with --gpu-layers 99, every graph tensor: OUT/gpu-summary.jsonl
#   full       the same in full mode: OUT/gpu-full.bin
#   graft      the same, full mode, grafting one row (the carry's `graft` selector) from the CPU
#              reference: OUT/gpu-graft.bin; no orchlog warning may be printed
#   logits     OUT/gpu-logits.npz (cpu, summary, full, graft: float32, positions x vocabulary; with
#              $PYTHON, default python3, and numpy) and what they say: summary == full bit for bit; the
#              graft left the positions before the grafted token bit-identical; GPU against CPU
# Everything the steps print goes to OUT/gpu-check-llama.log. Builds go to WORK (default
# .cache/gpu-llama, ignored by git). Exit 0 only when every step passed. CUDA=0: the CPU backend only,
# for checking the script itself where there is no GPU.
set -uo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || {
  echo "usage: scripts/gpu-check-llama.sh OUT [CARRY]" >&2
  exit 2
}
mkdir -p "$1"
OUT=$(cd "$1" && pwd)
CARRY=$(cd "${2:-.gpu-carry}" 2>/dev/null && pwd) || {
  echo "gpu-check-llama: no carry folder ${2:-.gpu-carry} (scripts/gpu_llama_carry.py writes it)" >&2
  exit 2
}
WORK=${WORK:-.cache/gpu-llama}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
JOBS=${JOBS:-$(nproc)}
CUDA_ARCHS=${CUDA_ARCHS:-90}
[ -d /usr/local/cuda/bin ] && export PATH="/usr/local/cuda/bin:$PATH"
export GIT_CEILING_DIRECTORIES=$CARRY # llama.cpp's build info is its own ("unknown"), not this checkout's commit
LOG="$OUT/gpu-check-llama.log"
: >"$LOG"
unset ORCH_LOG_FILE ORCH_LOG_MODE ORCH_LOG_SELECT ORCH_LOG_VALUES ORCH_GRAFT_FROM ORCH_GRAFT_SELECT

# orchlog/llama/build.py's CMAKE_FLAGS, the pinned CPU build's (see why each there).
LLAMA_FLAGS=(
  -DCMAKE_BUILD_TYPE=Release
  -DBUILD_SHARED_LIBS=ON
  '-DCMAKE_INSTALL_RPATH=$ORIGIN'
  -DGGML_NATIVE=OFF
  -DGGML_OPENMP=OFF
  -DGGML_BLAS=OFF
  -DGGML_CCACHE=OFF
  -DLLAMA_BUILD_COMMON=OFF
  -DLLAMA_BUILD_TESTS=OFF
  -DLLAMA_BUILD_TOOLS=OFF
  -DLLAMA_BUILD_EXAMPLES=OFF
  -DLLAMA_BUILD_SERVER=OFF
  -DLLAMA_BUILD_APP=OFF
  -DLLAMA_OPENSSL=OFF
)
# CUDA: FlashAttention kernels compiled empty (run_tokens turns flash attention off), one architecture,
# no NCCL (one GPU). CUDA=0 builds the CPU backend alone: the script's own check on a machine without a GPU.
CUDA_FLAGS=(-DGGML_CUDA=ON -DGGML_CUDA_FA=OFF -DGGML_CUDA_NCCL=OFF "-DCMAKE_CUDA_ARCHITECTURES=$CUDA_ARCHS")
[ "${CUDA:-1}" = 0 ] && CUDA_FLAGS=(-DGGML_CUDA=OFF)

failed=()
step() { # NAME SECONDS COMMAND...: runs it under timeout, its output into the log; prints its seconds
  local name=$1 limit=$2 started rc
  shift 2
  started=$(date +%s)
  echo "== $name: $*" >>"$LOG"
  if [ "$(type -t "$1")" = function ]; then # timeout runs programs: the function goes with its definition
    timeout "$limit" bash -c "$(declare -f "$1"); \"\$@\"" "$name" "$@" >>"$LOG" 2>&1
  else
    timeout "$limit" "$@" >>"$LOG" 2>&1
  fi
  rc=$?
  printf '%-10s %4ss  %s\n' "$name" $(($(date +%s) - started)) \
    "$([ $rc -eq 0 ] && echo ok || { [ $rc -eq 124 ] && echo "TIMED OUT after ${limit}s" || echo "FAILED (exit $rc)"; })" |
    tee -a "$LOG"
  [ $rc -eq 0 ] || failed+=("$name")
  return $rc
}
finish() {
  if [ ${#failed[@]} -gt 0 ]; then
    echo "gpu-check-llama: FAILED: ${failed[*]}; the log's last lines:" >&2
    tail -25 "$LOG" >&2
    exit 1
  fi
  echo "gpu-check-llama: every step passed; $OUT holds $(cd "$OUT" && ls | tr '\n' ' ')"
}

command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader | tee -a "$LOG"
command -v nvcc >/dev/null && nvcc --version | tail -2 | tee -a "$LOG"
value() { sed -n "s/^$1 //p" "$CARRY/tokens"; } # the carry's `key value` lines
PROMPT=$(value prompt) DECODE=$(value decode) GRAFT=$(value graft) BLAKE3=$(value model.blake3)
COMMIT=$(value llama.cpp)
BACKEND=$([ "${CUDA:-1}" = 0 ] && echo CPU || echo CUDA)
export OUT CARRY WORK PROMPT DECODE BLAKE3 COMMIT BACKEND

# A build of the source elsewhere (another carry folder) cannot be reconfigured: start it afresh.
cache="$WORK/build/CMakeCache.txt"
[ -f "$cache" ] && ! grep -qx "CMAKE_HOME_DIRECTORY:INTERNAL=$CARRY/llama.cpp" "$cache" && rm -rf "$WORK/build"
step configure 180 cmake -S "$CARRY/llama.cpp" -B "$WORK/build" -G Ninja "${LLAMA_FLAGS[@]}" "${CUDA_FLAGS[@]}" \
  "-DCMAKE_INSTALL_PREFIX=$WORK/install" || finish
step build 420 cmake --build "$WORK/build" --parallel "$JOBS" || finish
step install 60 cmake --install "$WORK/build" || finish
step driver 120 bash -c "cmake -S orchlog/llama -B '$WORK/driver' -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH='$WORK/install' -DORCHLOG_INCLUDE_DIR='$PWD/native/cpp/include' && cmake --build '$WORK/driver'" ||
  finish

export LOGITS="$WORK/logits"
rm -rf "$LOGITS" && mkdir -p "$LOGITS"
run() { # NAME MODE [GRAFT SELECTOR]: run_tokens on the GPU, every graph tensor logged into OUT
  local name=$1 mode=$2 file knobs rc
  [ "$mode" = full ] && file="$OUT/gpu-$name.bin" || file="$OUT/gpu-$name.jsonl"
  rm -f "$file"
  knobs=(ORCH_LOG_FILE="$file" ORCH_LOG_MODE="$mode" ORCH_LOG_TEAM="llama.cpp-${BACKEND,,}")
  [ $# -ge 3 ] && knobs+=(ORCH_GRAFT_FROM="$CARRY/cpu-full.bin" ORCH_GRAFT_SELECT="$3")
  env "${knobs[@]}" "$WORK/driver/run_tokens" "$CARRY/model.gguf" --prompt "$PROMPT" --decode "$DECODE" \
    --gpu-layers 99 --logits "$LOGITS/$name.npy" --config "llama.cpp=pinned $COMMIT $BACKEND" \
    --config "model.blake3=$BLAKE3" 2>"$LOGITS/$name.stderr"
  rc=$?
  cat "$LOGITS/$name.stderr"
  if grep -q '^orchlog: ' "$LOGITS/$name.stderr"; then # a refused graft, a bad knob, a full disk
    echo "orchlog printed a warning or an error"
    return 1
  fi
  return $rc
}
step summary 60 run summary summary
step full 60 run full full
step graft 60 run graft full "$GRAFT"
step logits 60 "${PYTHON:-python3}" - "$CARRY/cpu-logits.npy" "$LOGITS" "$OUT/gpu-logits.npz" "$GRAFT" <<'EOF'
import re, sys
import numpy as np

cpu_path, logits, out, graft = sys.argv[1:]
runs = {name: np.load(f"{logits}/{name}.npy") for name in ("summary", "full", "graft")}
cpu = np.load(cpu_path)
np.savez_compressed(out, cpu=cpu, **runs)
token = int(re.search(r"token=(\d+)", graft)[1])
ok = True
def check(what, good):
    global ok
    ok &= bool(good)
    print(f"{'ok  ' if good else 'FAIL'} {what}")
check("summary and full runs give bit-identical logits", np.array_equal(runs["summary"], runs["full"]))
before = np.array_equal(runs["graft"][:token], runs["full"][:token])
check(f"the graft leaves positions 0-{token - 1} bit-identical", before)
# The CPU row grafted in differs from the GPU's own by rounding, so the later positions move a little
# (zero only if the two rows were bit-identical: `orchlog compare` of the traces tells which).
after = np.abs(runs["graft"][token:] - runs["full"][token:]).max()
print(f"info the graft moved positions {token}- by max |diff| {after:.3g}")
gap = np.abs(runs["full"] - cpu).max()
agree = int(np.sum(runs["full"].argmax(1) == cpu.argmax(1)))
print(f"info GPU against CPU logits: max |diff| {gap:.3g} (largest |logit| {np.abs(cpu).max():.3g}), "
      f"argmax agrees at {agree}/{len(cpu)} positions")
sys.exit(0 if ok else 1)
EOF
sed -n '/^== logits/,$p' "$LOG" | grep -E '^(ok  |FAIL|info) ' # what the logits say, beside the steps' lines
ls -l "$OUT" | tee -a "$LOG"
finish
