"""pyproject's dependency lists against what the code imports: each extra carries what its part needs, no more.

Imports are read from the source (every `import`, lazy ones inside functions too), so a
dependency declared and never imported, or imported and not declared, is found without
running the code that imports it.
"""

from __future__ import annotations

import ast
import importlib.metadata
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "orchlog"
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]

# The parts of orchlog that need an extra, by source path; everything else is the library proper.
CODEGEN = ("codegen/", "schema.py", "cli/codegen.py")
TORCH = ("torch/",)
GGUF = ("weights/gguf_file.py", "weights/gguf_check.py")
RAY = ("scale/ray_runner.py",)


def _part(path: Path) -> str:
    rel = path.relative_to(PACKAGE).as_posix()
    if rel.startswith(CODEGEN):
        return "codegen"
    if rel.startswith(TORCH):
        return "torch"
    if rel.startswith(GGUF):
        return "gguf"
    if rel.startswith(RAY):
        return "ray"
    return "runtime"


def _type_only(node: ast.AST) -> bool:
    """`if TYPE_CHECKING:`: imports for the type checker, never made at run time."""
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
    )


def _imports(path: Path) -> set[str]:
    """Dotted names of every module `path` imports at run time, absolute imports only (orchlog's are all
    absolute); lazy ones inside functions count, those under `if TYPE_CHECKING:` do not."""
    out: set[str] = set()
    todo: list[ast.AST] = [ast.parse(path.read_text(encoding="utf-8"), str(path))]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module)
            out.update(f"{node.module}.{alias.name}" for alias in node.names)
        if _type_only(node):
            todo.extend(getattr(node, "orelse", []))
        else:
            todo.extend(ast.iter_child_nodes(node))
    return out


IMPORTS = {path: _imports(path) for path in sorted(PACKAGE.rglob("*.py"))}


def _third_party(part: str) -> set[str]:
    """The distributions (canonical names) that the `part`'s modules import."""
    to_dist = importlib.metadata.packages_distributions()
    found: set[str] = set()
    for path, names in IMPORTS.items():
        if _part(path) != part:
            continue
        for top in {name.split(".")[0] for name in names}:
            if top in sys.stdlib_module_names or top == "orchlog":
                continue
            found.update(canonicalize_name(d) for d in to_dist.get(top, [top]))
    return found


def _declared(requirements: list[str]) -> set[str]:
    return {canonicalize_name(Requirement(r).name) for r in requirements}


RUNTIME = _declared(PROJECT["dependencies"])
EXTRAS = {name: _declared(reqs) for name, reqs in PROJECT["optional-dependencies"].items()}


def test_the_library_imports_exactly_its_declared_dependencies():
    assert _third_party("runtime") == RUNTIME


def test_code_generation_needs_nothing_beyond_the_codegen_extra():
    needed = _third_party("codegen") - RUNTIME
    assert needed and needed <= EXTRAS["codegen"]
    assert needed == EXTRAS["codegen"], "every package of the codegen extra is imported by the generator"


def test_orchlog_torch_needs_nothing_beyond_the_torch_extra():
    assert _third_party("torch") - RUNTIME <= EXTRAS["torch"]


def test_reading_gguf_needs_nothing_beyond_the_gguf_extra():
    assert _third_party("gguf") - RUNTIME == EXTRAS["gguf"]


def test_the_ray_executor_needs_nothing_beyond_the_ray_extra():
    assert _third_party("ray") - RUNTIME == EXTRAS["ray"]


# The CLI's one door into the torch extra: `orchlog trace hf` imports it inside the command, and says
# what to install when it is missing.
DOORS = {PACKAGE / "cli" / "trace.py": {"orchlog.torch.trace", "orchlog.torch.trace.trace_hf"}}


def test_no_module_of_the_library_imports_the_generator_or_orchlog_torch():
    apart = {("orchlog", "codegen"), ("orchlog", "schema"), ("orchlog", "torch")}
    for path, names in IMPORTS.items():
        if _part(path) == "runtime":
            assert not [n for n in names - DOORS.get(path, set()) if tuple(n.split(".")[:2]) in apart], path


def test_the_pinned_example_versions_lie_in_the_torch_extra_ranges():
    pins = {canonicalize_name(Requirement(r).name): Requirement(r) for r in PROJECT["optional-dependencies"]["e2e"]}
    for text in PROJECT["optional-dependencies"]["torch"]:
        wanted = Requirement(text)
        pin = pins[canonicalize_name(wanted.name)]
        (exact,) = pin.specifier
        assert wanted.specifier.contains(exact.version), (text, str(pin))


def test_the_installed_torch_and_transformers_lie_in_the_torch_extra_ranges():
    for text in PROJECT["optional-dependencies"]["torch"]:
        wanted = Requirement(text)
        try:
            installed = importlib.metadata.version(wanted.name)
        except importlib.metadata.PackageNotFoundError:
            pytest.skip(f"{wanted.name} is not installed")
        assert wanted.specifier.contains(installed, prereleases=True), (text, installed)
