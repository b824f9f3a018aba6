#!/usr/bin/env bash
# Make a fresh machine ready to build and test orchlog; cheap when it already is.
#   - Debian packages (compilers, CMake, Ninja, GoogleTest; Chromium, which renders the HTML
#     reports headless in the tests) via apt-get when missing
#   - Rust's rustfmt/clippy components when rustup is there; cargo-hack (the rust
#     stage's feature combinations) and, with rustup, the toolchain of the crate's
#     rust-version (the msrv stage), each cached in ~/.cargo or ~/.rustup; a stage
#     whose tool could not be installed says that it skipped its check
#   - .venv with orchlog installed editable (native extension built by CMake)
#     with the test, e2e, codegen, lint, ray and tools extras (pytest; torch, transformers, gguf for
#     examples/; pyyaml and jinja2 for codegen; ruff, mypy, clang-format, pre-commit;
#     ray for the two-node cluster tests of orchlog.scale; Polygraphy, onnxruntime and msprobe,
#     whose dumps the tests make), reinstalled only when the build inputs change
#   - SGLang's wheel in .cache/wheels, fetched without its dependencies (its dumper runs standalone
#     in the tests: examples/tool_dumps/sglang_dump.py)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
say() { [ -n "${ORCHLOG_QUIET:-}" ] || echo "bootstrap: $*" >&2; }

need_apt=()
command -v g++ >/dev/null || need_apt+=(g++)
command -v make >/dev/null || need_apt+=(make)
command -v jq >/dev/null || need_apt+=(jq)
command -v pkg-config >/dev/null || need_apt+=(pkg-config)
command -v cmake >/dev/null || need_apt+=(cmake)
command -v ninja >/dev/null || need_apt+=(ninja-build)
[ -f /usr/include/gtest/gtest.h ] || need_apt+=(libgtest-dev)
command -v chromium >/dev/null || need_apt+=(chromium)
python3 -c 'import venv, ensurepip' 2>/dev/null || need_apt+=(python3-venv)
# Rust must be at least the crate's rust-version; Debian bookworm's rustc is
# older, its rustc-web/cargo-web (kept current for the browsers) are not.
rust_msrv=$(sed -n 's/^rust-version = "\(.*\)"/\1/p' native/rust/Cargo.toml)
rust_have=$(PATH="$HOME/.cargo/bin:$PATH" rustc --version 2>/dev/null | cut -d' ' -f2)
need_rust=false
[ -n "$rust_have" ] && [ "$(printf '%s\n%s\n' "$rust_msrv" "$rust_have" | sort -V | head -1)" = "$rust_msrv" ] || need_rust=true
if [ ${#need_apt[@]} -gt 0 ] || $need_rust; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  if $need_rust; then
    if apt-cache show rustc-web >/dev/null 2>&1; then need_apt+=(rustc-web cargo-web rust-web-clippy rustfmt)
    else need_apt+=(rustc cargo rust-clippy rustfmt); fi
  fi
  say "installing Debian packages: ${need_apt[*]}"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
export PATH="$HOME/.cargo/bin:$PATH"
if command -v rustup >/dev/null; then
  for comp in rustfmt clippy; do
    rustup component list --installed 2>/dev/null | grep -q "^$comp" || rustup component add "$comp" >/dev/null 2>&1 || true
  done
  # Exactly the rust-version (1.85 means 1.85.0, not the latest 1.85.x).
  msrv_toolchain=$rust_msrv
  case $msrv_toolchain in *.*.*) ;; *) msrv_toolchain=$msrv_toolchain.0 ;; esac
  if ! rustup toolchain list | grep -q "^$msrv_toolchain-"; then
    say "installing Rust $msrv_toolchain (the crate's rust-version) with rustup"
    rustup toolchain install "$msrv_toolchain" --profile minimal >/dev/null 2>&1 ||
      echo "bootstrap: could not install Rust $msrv_toolchain; the msrv stage will skip" >&2
  fi
fi
cargo_hack_version=0.6.46
if command -v cargo >/dev/null && ! cargo hack --version >/dev/null 2>&1; then
  say "installing cargo-hack $cargo_hack_version (cargo install --locked)"
  cargo install --locked --quiet "cargo-hack@$cargo_hack_version" >/dev/null 2>&1 ||
    echo "bootstrap: could not install cargo-hack; the rust stage will run no-features and all-features only, and say so" >&2
fi

if [ ! -x .venv/bin/python ]; then
  say "creating .venv"
  python3 -m venv .venv
fi
PY=.venv/bin/python

# Reinstall only when something the build or the dependency list reads has changed, or a Python
# module was added, moved or removed (the editable install maps each module's file by name).
stamp_now=$( { cat pyproject.toml CMakeLists.txt; find native/cpp native/python -type f \( -name '*.hpp' -o -name '*.h' -o -name '*.cpp' -o -name '*.txt' -o -name '*.in' -o -name '*.inc' \) -print0 2>/dev/null | sort -z | xargs -0 cat; find orchlog -type f -not -path '*/__pycache__/*' | LC_ALL=C sort; } | sha256sum | cut -d' ' -f1)
stamp_file=.cache/install.stamp
if [ "$(cat "$stamp_file" 2>/dev/null)" != "$stamp_now" ] || ! $PY -c 'import orchlog._native' 2>/dev/null; then
  say "installing orchlog into .venv (builds the native extension)"
  mkdir -p .cache
  # A first install brings torch with its CUDA libraries (about 6 GiB in .venv,
  # more while pip unpacks): say so up front rather than fail deep inside pip.
  if ! compgen -G ".venv/lib/python3*/site-packages/torch" >/dev/null; then
    free_kib=$(df -Pk . | awk 'NR==2 {print $4}')
    if [ "${free_kib:-0}" -lt $((8 * 1024 * 1024)) ]; then
      echo "bootstrap: only $((free_kib / 1024 / 1024)) GiB free on $(df -P . | awk 'NR==2 {print $6}'); installing torch needs about 8 GiB: free some space (pip's cache, old build dirs) if the install below fails" >&2
    fi
  fi
  $PY -m pip install -q --upgrade pip >/dev/null
  # Build requirements are installed into the venv so that rebuilds are
  # incremental (no isolated build env) and reuse .cache/skbuild. Each is held
  # below its next major version: a fresh machine gets what the suite last
  # passed with, not a release that changed the build's rules the day before.
  $PY -m pip install -q "scikit-build-core>=0.10,<2" "pybind11>=2.12,<4" "cmake>=3.18,<5" "ninja<2"
  $PY -m pip install -q --no-build-isolation -e ".[test,e2e,codegen,lint,ray,tools]"
  echo "$stamp_now" > "$stamp_file"
fi
sglang_wheel_version=0.5.23
if ! compgen -G ".cache/wheels/sglang-$sglang_wheel_version-*.whl" >/dev/null; then
  say "fetching SGLang $sglang_wheel_version's wheel (its dumper, without its dependencies)"
  mkdir -p .cache/wheels
  $PY -m pip download -q --no-deps --only-binary :all: -d .cache/wheels "sglang==$sglang_wheel_version" >/dev/null
fi
