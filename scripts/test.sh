#!/usr/bin/env bash
# The whole test suite: codegen freshness, lint and format checks, type checks (mypy),
# Python (pytest), Rust (cargo: every feature combination, and again at the crate's
# rust-version), C++ (ctest: a plain build, and one under AddressSanitizer and
# UndefinedBehaviorSanitizer).
# Extra arguments go to pytest, e.g. `./scripts/test.sh -m "not slow" -x`.
# STAGES="codegen lint types python rust msrv cpp asan" selects stages (all by default).
# A check that cannot run here (a tool that could not be installed) is named under
# SKIPPED at the end; it never counts as passed.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
./scripts/bootstrap.sh || { echo "test: bootstrap failed" >&2; exit 2; }
export PATH="$ROOT/.venv/bin:$HOME/.cargo/bin:$PATH"
export CARGO_TARGET_DIR="$ROOT/.cache/cargo-target"
export CARGO_BUILD_JOBS=${CARGO_BUILD_JOBS:-2}
STAGES=${STAGES:-"codegen lint types python rust msrv cpp asan"}
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

# Python: ruff's lint rules and formatting; C and C++: clang-format (generated
# files, *_gen.* and orchlog.h, are checked against the schema by the codegen
# stage instead). The lint extra's pinned tools are run through the venv's
# Python, which finds them whether or not their scripts are in .venv/bin.
lint() {
  local rc=0 clang_format
  clang_format=$(python -c 'import clang_format; print(clang_format.get_executable("clang-format"))') || return 1
  python -m ruff check --quiet . || rc=1
  python -m ruff format --check --quiet . || { echo "lint: run 'ruff format .' to fix the formatting" >&2; rc=1; }
  git ls-files -z '*.c' '*.h' '*.cpp' '*.hpp' '*.cu' '*.inc' | grep -zvE '(_gen\.hpp|orchlog/orchlog\.h)$' |
    xargs -0 "$clang_format" --dry-run -Werror ||
    { echo "lint: run 'git ls-files *.cpp *.hpp *.h *.c *.cu *.inc | grep -vE \"(_gen\\.hpp|orchlog/orchlog\\.h)\$\" | xargs clang-format -i' to fix (never the generated files)" >&2; rc=1; }
  return $rc
}

# mypy over orchlog/, strict (configuration in pyproject.toml).
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
