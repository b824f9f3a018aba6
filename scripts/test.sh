#!/usr/bin/env bash
# The whole test suite: codegen freshness, lint and format checks, type checks (mypy),
# Python (pytest), Rust (cargo: every feature combination, and again at the crate's
# rust-version), C++ (ctest: a plain build, and one under AddressSanitizer and
# UndefinedBehaviorSanitizer), and the Python extensions (the JSONL parser, the frame
# decoder, the emitter bindings) under the same sanitizers, fed hostile input by the
# Python tests that reach them (asan-python: about 4 minutes on two cores, half of it
# the build).
# Extra arguments go to the python stage's pytest, e.g. `./scripts/test.sh -m "not slow" -x`.
# STAGES="codegen lint types python rust msrv cpp asan asan-python" selects stages (all by default).
# A check that cannot run here (a tool that could not be installed) is named under
# SKIPPED at the end; it never counts as passed.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
./scripts/bootstrap.sh || { echo "test: bootstrap failed" >&2; exit 2; }
export PATH="$ROOT/.venv/bin:$HOME/.cargo/bin:$PATH"
export CARGO_TARGET_DIR="$ROOT/.cache/cargo-target"
export CARGO_BUILD_JOBS=${CARGO_BUILD_JOBS:-2}
STAGES=${STAGES:-"codegen lint types python rust msrv cpp asan asan-python"}
failed=()
skipped=()

stage() {
  local name=$1; shift
  case " $STAGES " in *" $name "*) ;; *) return 0 ;; esac
  echo "=== $name: $*" >&2
  local started=$SECONDS
  "$@"
  local rc=$?
  echo "=== $name: $((SECONDS - started)) s" >&2
  # pytest exits 5 when a selection holds no tests; that is not a failure.
  if [ "$name" = python ] && [ $rc -eq 5 ]; then rc=0; fi
  [ $rc -eq 0 ] || failed+=("$name (exit $rc)")
}

# A check that cannot run: said now, and again in the summary.
skip() {
  echo "=== $1: SKIPPED: $2" >&2
  skipped+=("$1: $2")
}

# Python: ruff's lint rules and formatting; C and C++: clang-format over every
# tracked file but those orchlog codegen writes, which the codegen stage checks
# against the schema instead (scripts/cpp_format.py, which the pre-commit hook
# runs too: tests/test_precommit_config.py holds the two to the same files). The
# lint extra's pinned tools are run through the venv's Python, which finds them
# whether or not their scripts are in .venv/bin.
lint() {
  local rc=0
  python -m ruff check --quiet . || rc=1
  python -m ruff format --check --quiet . || { echo "lint: run 'ruff format .' to fix the formatting" >&2; rc=1; }
  python scripts/cpp_format.py || rc=1
  return $rc
}

# mypy over orchlog/, benchmarks/, examples/ and scripts/ (strict) and tests/ (every body checked);
# the files and options are pyproject.toml's [tool.mypy], the cache .cache/mypy.
types() {
  python -m mypy
}

# The ctest suite, built in build dir $1 with the CMake arguments that follow.
ctest_suite() {
  local dir=$1; shift
  cmake -S . -B "$dir" -G Ninja -DORCHLOG_BUILD_TESTS=ON "$@" >/dev/null &&
    cmake --build "$dir" &&
    ctest --test-dir "$dir" --output-on-failure
}

cpp_tests() {
  ctest_suite .cache/cmake-tests -DCMAKE_BUILD_TYPE=RelWithDebInfo
}

# The same suite under AddressSanitizer (with LeakSanitizer) and UndefinedBehaviorSanitizer;
# the first error found ends the test that made it. Unoptimised: it compiles in less than
# half the time of -O1 and the sanitizers see the same; the tests run in seconds either way.
# test_encode_fp_contract_fast (test_encode's source again, under -O3 -march=native, for
# the FMA check) is left out: it was a quarter of the compile time.
SANITIZE="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
asan_tests() {
  ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1 \
    UBSAN_OPTIONS=print_stacktrace=1 \
    ctest_suite .cache/cmake-asan -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS=$SANITIZE" \
    "-DCMAKE_EXE_LINKER_FLAGS=$SANITIZE" -DORCHLOG_TEST_FP_CONTRACT=OFF
}

# orchlog._native (the emitter bindings) and orchlog._kernels (the JSONL column parser, the
# binary frame decoder, the comparer's kernels), built by CMake as scikit-build builds them,
# but unoptimised, under the sanitizers above and libstdc++'s bounds checks, into a build dir
# of their own (the .venv's release build is left alone). The Python tests that feed them
# traces, hostile ones included, then import them from there: scripts/sanitized_python's
# sitecustomize puts that dir first for every interpreter started, fuzz workers and CLI
# subprocesses too. CPython is not instrumented, so the sanitizers' runtime is preloaded
# (libstdc++ with it, for the interceptor of C++ throws); leak checks are off, since CPython
# keeps objects to the end by design. A report ends the process that made it and is written
# under a log dir, so that one in a subprocess whose stderr a test swallows still fails the
# stage. The address space cannot be capped under ASan (its shadow reserves terabytes):
# max_allocation_size_mb caps each allocation instead (tests/address_space.py). Left out:
# tests that build native programs (the sanitizers' runtime would be preloaded into the
# compilers; the graft corpus's C++ harness is sanitized in the asan stage) and the slow tier.
ASAN_PYTHON_TESTS=(
  tests/read/formats/test_orchlog_frames_native.py tests/read/formats/test_orchlog_frames_hostile.py
  tests/read/formats/test_orchlog_frames.py tests/read/formats/test_orchlog_jsonl_columns.py
  tests/read/formats/test_orchlog_jsonl.py tests/read/formats/test_gzip_cut_short.py
  tests/read/test_validate_integrity.py tests/read/test_readahead.py tests/test_kernels.py
  tests/native/test_native_module.py tests/native/test_emitter_conformance.py tests/native/test_blake3_random.py
  tests/emit
  tests/fuzz/test_mutants.py tests/fuzz/test_regressions.py tests/fuzz/test_properties.py
  tests/fuzz/test_tool_mutants.py tests/fuzz/test_weight_mutants.py
)
asan_python_tests() {
  local dir=.cache/cmake-asan-python compiler runtime logs rc
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DORCHLOG_BUILD_PYTHON=ON -DORCHLOG_INSTALL=OFF \
    "-DPython_EXECUTABLE=$ROOT/.venv/bin/python" "-Dpybind11_DIR=$(python -m pybind11 --cmakedir)" \
    "-DCMAKE_CXX_FLAGS=$SANITIZE -D_GLIBCXX_ASSERTIONS" "-DCMAKE_SHARED_LINKER_FLAGS=$SANITIZE" >/dev/null &&
    cmake --build "$dir" --target _native _kernels || return 1
  compiler=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$dir/CMakeCache.txt")
  runtime=$("$compiler" -print-file-name=libasan.so)
  if [ ! -e "$runtime" ]; then
    skip asan-python "$compiler has no libasan.so to preload into Python (GCC's runtime is expected)"
    return 0
  fi
  logs=$(mktemp -d)
  sanitized() {
    LD_PRELOAD="$runtime $("$compiler" -print-file-name=libstdc++.so.6)" \
      ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:max_allocation_size_mb=1024:log_path=$logs/asan" \
      UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$logs/ubsan" \
      PYTHONPATH="$ROOT/scripts/sanitized_python" ORCHLOG_SANITIZED_EXTENSIONS="$ROOT/$dir" "$@"
  }
  # Where the modules came from: a failed import would otherwise send orchlog.kernels to its NumPy twins.
  sanitized python -c 'import os, sys, orchlog._native as n, orchlog._kernels as k, orchlog.kernels as kk
where = {os.path.dirname(m.__file__) for m in (n, k)}
sys.exit(0 if kk.NATIVE and where == {os.environ["ORCHLOG_SANITIZED_EXTENSIONS"]} else f"asan-python: the extensions came from {where}")' &&
    sanitized python -m pytest -n "${PYTEST_WORKERS:-auto}" --dist loadgroup -m "not slow" -q "${ASAN_PYTHON_TESTS[@]}"
  rc=$?
  if compgen -G "$logs/*" >/dev/null; then
    echo "asan-python: sanitizer reports:" >&2
    cat "$logs"/* >&2
    rc=1
  fi
  rm -rf "$logs"
  return $rc
}

# For stage $1, `cargo ARGS` (the rest) once per combination of the crate's features
# (cargo-hack's powerset, which includes none and all) in each workspace member:
# orch_log! must compile to nothing without orch_logging (the feature-probe member
# proves it), and every feature must build alone. Without cargo-hack: no features
# and all features only, said as a skip.
each_feature_set() {
  local stage_name=$1 command=$2
  shift 2
  if cargo hack --version >/dev/null 2>&1; then
    # `default` names a set of the other features, which the powerset covers already.
    cargo hack "$command" --feature-powerset --exclude-features default "$@"
  else
    skip "$stage_name" "cargo-hack is not installed (scripts/bootstrap.sh installs it): cargo $command ran with no features and with all features, not with each feature alone"
    cargo "$command" "$@" && cargo "$command" --all-features "$@"
  fi
}

# Run in the crate's directory without a subshell, so that skips are counted.
in_crate() {
  cd native/rust || return 1
  "$@"
  local rc=$?
  cd "$ROOT" || return 1
  return $rc
}

rust_tests() {
  cargo fmt --all --check &&
    each_feature_set rust clippy --workspace --all-targets --locked -- -D warnings &&
    each_feature_set rust test --workspace --locked
}

# The crate's declared rust-version: built and tested with that toolchain (rustup's,
# installed by scripts/bootstrap.sh), against the committed Cargo.lock, in a target
# dir of its own.
msrv_tests() {
  local msrv
  msrv=$(sed -n 's/^rust-version = "\(.*\)"/\1/p' "$ROOT/native/rust/Cargo.toml")
  [ -n "$msrv" ] || { echo "msrv: no rust-version in native/rust/Cargo.toml" >&2; return 1; }
  if ! command -v rustup >/dev/null; then
    skip msrv "rustup is not installed: the crate's rust-version $msrv is not verified"
    return 0
  fi
  local toolchain=$msrv
  case $toolchain in *.*.*) ;; *) toolchain=$toolchain.0 ;; esac # 1.85 means 1.85.0
  if ! rustup toolchain list | grep -q "^$toolchain-"; then
    skip msrv "Rust $toolchain is not installed (scripts/bootstrap.sh installs it with rustup): the crate's rust-version $msrv is not verified"
    return 0
  fi
  # Every feature combination compiles (check: no code generated); the tests run once,
  # with every feature (the rust stage runs them in each combination).
  rustup run "$toolchain" rustc --version &&
    CARGO_TARGET_DIR="$ROOT/.cache/cargo-target-msrv" RUSTUP_TOOLCHAIN=$toolchain \
      each_feature_set msrv check --workspace --all-targets --locked &&
    CARGO_TARGET_DIR="$ROOT/.cache/cargo-target-msrv" RUSTUP_TOOLCHAIN=$toolchain \
      cargo test --workspace --all-features --locked
}

stage codegen python -m orchlog.codegen --check
stage lint lint
stage types types
# Parallel (pytest-xdist): PYTEST_WORKERS workers, `auto` (one per CPU) by default; tests that share an
# expensive fixture or a machine-wide resource run in one worker (tests/conftest.py, GROUPS). The slowest
# tests are listed at the end.
stage python python -m pytest -n "${PYTEST_WORKERS:-auto}" --dist loadgroup --durations=15 "$@"
stage rust in_crate rust_tests
stage msrv in_crate msrv_tests
stage cpp cpp_tests
stage asan asan_tests
stage asan-python asan_python_tests

if [ ${#skipped[@]} -gt 0 ]; then
  echo "SKIPPED (not run, so not passed):" >&2
  printf '  %s\n' "${skipped[@]}" >&2
fi
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED: ${failed[*]}" >&2
  exit 1
fi
if [ ${#skipped[@]} -gt 0 ]; then
  echo "the test stages passed, except for the checks SKIPPED above, which did not run" >&2
else
  echo "all test stages passed" >&2
fi
