#!/usr/bin/env bash
# The figures only the GPU machine can give, in one call of a few minutes (docs/scale.md,
# docs/compare.md, docs/cpp.md): that machine is lent for minutes at a time, has 16 cores, an
# Intel Xeon with AVX-512 and an H200, and no network.
#
#   .venv/bin/python scripts/device_carry.py .device-carry   # here, once: wheels and a slim Ray
#   ./scripts/device-figures.sh OUT [CARRY]                  # there, from the checkout's root
#
# In order, each step bounded by `timeout` so that a slow one leaves the others' results:
#   1. the Python extension built with CMake into orchlog/ (no pip: no network; where it does not
#      build, CARRY/extension/*.so if the carry has them), while
#      scripts/gpu-check.sh builds and runs the CUDA checks (its log and figures.md to OUT);
#   2. benchmarks/compare_speed.py rows, 200,000 and 50,000 rows (ROWS), orchlog with AVX-512 and
#      capped to AVX2 in the same turns (the issue's "any x86-64 machine with AVX2"), and `start`
#      (--help and a 1,000-record compare against `python -c pass`);
#   3. in what is left of BUDGET seconds (560), benchmarks/ray_scale.py on 8 ranks at RAY_RECORDS
#      rows a side (2,400,000: a 21 GB trace pair), a two-node local cluster of RAY_CPUS (4) CPUs each,
#      against one process; the guest's memory before and after.
# GPU=0 leaves out the CUDA checks, ROWS= the row sizes; RUNS (5) turns each. Every log and JSON lands
# in OUT: eight files at most, what a call brings back.
# scripts/gpu-check-llama.sh (llama.cpp's CUDA backend, about 220 s) takes a call of its own: its five
# files and this script's eight are more than one call brings back.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: device-figures.sh OUT [CARRY]}
CARRY=${2:-.device-carry}
RAY_RECORDS=${RAY_RECORDS:-2400000}
RAY_CPUS=${RAY_CPUS:-4}
RUNS=${RUNS:-5}
GPU=${GPU:-1}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
say() { echo "[$(date +%T)] $*" | tee -a "$OUT/steps.log"; }
# What the guest holds: its memory grows from a small start as it is used, and a trace pair larger than
# its page cache is read from the virtual disk (docs/scale.md).
memory() { free -m | awk '/^Mem:/ {print "memory: total " $2 " MiB, used " $3 ", cache " $6 ", available " $7}'; }

site=/tmp/orchlog-site
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$site" \
  "$CARRY"/wheels/*.whl || exit 2
tar xJf "$CARRY/ray.tar.xz" -C "$site" || exit 2
export PYTHONPATH="$site:$PWD"
say "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; $(memory)"

gpu_pid=
if [ "$GPU" = 1 ]; then
  (OUT=/tmp/gpu-check SANITIZE_RUNS=${SANITIZE_RUNS:-memcheck:cuda_summary memcheck:cuda_graph_ring racecheck:cuda_log} \
    timeout 300 ./scripts/gpu-check.sh >"$OUT/gpu-check.log" 2>&1
    echo "gpu-check: exit $?" >>"$OUT/gpu-check.log"
    cp /tmp/gpu-check/figures.md "$OUT/gpu-figures.md" 2>/dev/null) &
  gpu_pid=$!
fi

say "building the Python extension"
build=/tmp/orchlog-build
{ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DORCHLOG_BUILD_PYTHON=ON \
  "-Dpybind11_DIR=$(python3 -m pybind11 --cmakedir)" && cmake --build "$build" --target _native _kernels &&
  cp "$build"/_native*.so "$build"/_kernels*.so orchlog/; } >"$build.log" 2>&1 || {
  tail -30 "$build.log"
  say "the extension did not build: taking the carry's ($CARRY/extension, built elsewhere for CPython 3.12)"
  cp "$CARRY"/extension/*.so orchlog/ || exit 1
}
python3 -c 'import orchlog, orchlog._kernels' || exit 1
say "extension built"
if [ -n "$gpu_pid" ]; then
  wait "$gpu_pid"
  say "$(tail -2 "$OUT/gpu-check.log" | tr '\n' ' ')"
fi

for rows in ${ROWS-200000 50000}; do
  say "compare speed, $rows rows"
  timeout 180 python3 benchmarks/compare_speed.py rows --records "$rows" --runs "$RUNS" --isa avx512,avx2 \
    --page-cache written --json "$OUT/rows-$rows.json" >>"$OUT/rows.log" 2>&1
  say "exit $?; $(memory)"
done
say "compare start-up"
timeout 120 python3 benchmarks/compare_speed.py start --runs "$RUNS" --isa avx512,avx2 --json "$OUT/start.json" \
  >>"$OUT/rows.log" 2>&1
say "exit $?"

say "Ray, $RAY_RECORDS rows a side, until ${BUDGET:-560} s into the script; $(memory)"
timeout "$(( ${BUDGET:-560} - SECONDS ))" python3 benchmarks/ray_scale.py --ranks 8 --records "$RAY_RECORDS" --nodes 2 \
  --cpus-per-node "$RAY_CPUS" --runs 3 >"$OUT/ray.log" 2>&1 # its figures are the log's last JSON
say "exit $?; $(memory)"
tail -5 "$OUT/ray.log"
