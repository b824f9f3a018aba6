#!/usr/bin/env bash
# Emitter benchmarks, each figure beside a baseline measured in the same run:
# the Rust crate's (native/rust/benches/emitter.rs), then the C++ logger's
# when its bench binary is built (ORCH_LOG_CPP_BENCH, or the default path
# below). Both print Markdown table rows; docs/rust.md records the figures.
#   benchmarks/emitters.sh            # about 30 s of measuring per emitter
#   benchmarks/emitters.sh --quick    # a smoke run
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/.cache/cargo-target}" CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-2}"

echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "### Rust ($(rustc --version | cut -d' ' -f1-2))"
(cd native/rust && cargo bench --quiet --locked --bench emitter --features orch_logging -- "$@")

cpp_bench="${ORCH_LOG_CPP_BENCH:-.cache/cmake-bench/benchmarks/orchlog_bench}"
echo
if [ -x "$cpp_bench" ]; then
  echo "### C++"
  "$cpp_bench" "$@"
else
  echo "(C++ logger bench not found at $cpp_bench; set ORCH_LOG_CPP_BENCH to run it beside these figures)"
fi
