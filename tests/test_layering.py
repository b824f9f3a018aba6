"""The package's import graph has no circle, reading never imports writing, and no module imports one of a
higher layer; an import inside a function (outside the CLI) says why on its line or the line above.

The graph holds every import a module can run: at the top, inside functions, and the packages an import
runs on its way (orchlog.diagnose importing orchlog.compare.pairing.keys runs orchlog/compare/__init__.py
first, which must therefore not import the engine). Only `if TYPE_CHECKING:` blocks are left out, since
they never run.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "orchlog"

# Lowest first. A module belongs to the layer of the longest prefix that names it; it may import its own
# layer and those below. Within a layer, only the absence of circles is asked.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "base",
        (
            "orchlog",
            "orchlog.errors",
            "orchlog.progress",
            "orchlog.lazy",
            "orchlog.records",
            "orchlog.strings",
            "orchlog.safe_text",
            "orchlog.numbers",
            "orchlog.distributions",
            "orchlog.schema_gen",
            "orchlog.knob_values",
            "orchlog.selector",
            "orchlog.shard_dims",
            "orchlog.kernels",
            "orchlog.runinfo",
            "orchlog.bus_error",
            "orchlog.heap",
        ),
    ),
    ("codec", ("orchlog.encoding",)),
    (
        "reading",
        (
            "orchlog.read",
            "orchlog.parquet",  # its writing modules are in the next layer
        ),
    ),
    (
        "writing",
        (
            "orchlog.emit",
            "orchlog.parquet.writer",
            "orchlog.parquet.rows",
            "orchlog.parquet.pieces",
            "orchlog.parquet.packing",
        ),
    ),
    ("maps and tolerances", ("orchlog.maps", "orchlog.tolerances")),
    (
        "compare's steps",
        (
            "orchlog.compare.pairing",
            "orchlog.compare.measuring",
            "orchlog.compare.grading",
            "orchlog.compare.options",
            "orchlog.compare.pairview",
            "orchlog.diagnose.extent",
            "orchlog.diagnose.neighbours",
            "orchlog.diagnose.keeper",
        ),
    ),
    ("diagnosis", ("orchlog.diagnose",)),
    ("compare", ("orchlog.compare",)),
    (
        "commands",
        (
            "orchlog.graft_report",
            "orchlog.weights",
            "orchlog.guardrail",
            "orchlog.scale",
            "orchlog.torch",
            "orchlog.llama",
            "orchlog.codegen",
        ),
    ),
    ("reports", ("orchlog.report",)),
    ("cli", ("orchlog.cli", "orchlog.__main__")),
]
READING, WRITING = ("orchlog.read",), ("orchlog.emit",)


def _modules(root: Path) -> dict[str, Path]:
    out = {}
    for path in (root / "orchlog").rglob("*.py"):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _resolve(modules: dict[str, Path], name: str) -> str | None:
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _with_parents(modules: dict[str, Path], name: str) -> list[str]:
    parts = name.split(".")
    return [m for m in (".".join(parts[:k]) for k in range(1, len(parts) + 1)) if m in modules]


class _Imports(ast.NodeVisitor):
    """(target module, line, inside a function) for every import that can run."""

    def __init__(self, modules: dict[str, Path], module: str) -> None:
        self.modules = modules
        self.base = module if modules[module].name == "__init__.py" else module.rpartition(".")[0]
        self.running = set(_with_parents(modules, module))  # its packages already run when a module runs
        self.found: list[tuple[str, int, bool]] = []
        self.depth = 0

    def visit_If(self, node: ast.If) -> None:
        if isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for child in node.orelse:
                self.visit(child)
            return
        self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef

    def _add(self, name: str, line: int) -> None:
        target = _resolve(self.modules, name)
        if target is not None:
            self.found += [
                (m, line, self.depth > 0) for m in _with_parents(self.modules, target) if m not in self.running
            ]

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name.split(".")[0] == "orchlog":
                self._add(alias.name, node.lineno)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            base = self.base.split(".")
            module = ".".join(base[: len(base) - node.level + 1] + ([node.module] if node.module else []))
        else:
            module = node.module or ""
        if module.split(".")[0] != "orchlog":
            return
        self._add(module, node.lineno)
        for alias in node.names:
            if f"{module}.{alias.name}" in self.modules:
                self._add(f"{module}.{alias.name}", node.lineno)


def _imports(modules: dict[str, Path]) -> dict[str, list[tuple[str, int, bool]]]:
    out = {}
    for module, path in modules.items():
        visitor = _Imports(modules, module)
        visitor.visit(ast.parse(path.read_text(encoding="utf-8")))
        out[module] = visitor.found
    return out


def _under(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


class Graph:
    """The import graph of the orchlog package under `root`, and what the layering asks of it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.modules = _modules(root)
        self.imports = _imports(self.modules)

    def layer(self, module: str) -> int:
        if self.modules[module].name == "__init__.py":
            # A package's own code runs what it imports: it sits as low as those (one whose names load on
            # first use imports nothing but orchlog.lazy, and sits in the base).
            return max((self.layer(t) for t, _, local in self.imports[module] if not local), default=0)
        best, rank = -1, -1
        for k, (_, prefixes) in enumerate(LAYERS):
            for prefix in prefixes:
                if _under(module, (prefix,)) and len(prefix) > best:
                    best, rank = len(prefix), k
        return rank

    def unlayered(self) -> list[str]:
        return [m for m in self.modules if self.layer(m) < 0]

    def circles(self) -> list[list[str]]:
        """Tarjan's strongly connected components of more than one module."""
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        stack: list[str] = []
        on_stack: set[str] = set()
        found: list[list[str]] = []

        def visit(v: str) -> None:
            index[v] = low[v] = len(index)
            stack.append(v)
            on_stack.add(v)
            for w, _, _ in self.imports[v]:
                if w not in index:
                    visit(w)
                    low[v] = min(low[v], low[w])
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    found.append(sorted(component))

        for module in sorted(self.modules):
            if module not in index:
                visit(module)
        return found

    def reach(self, start: str) -> set[str]:
        seen, todo = {start}, [start]
        while todo:
            for w, _, _ in self.imports[todo.pop()]:
                if w not in seen:
                    seen.add(w)
                    todo.append(w)
        return seen

    def reading_to_writing(self) -> dict[str, list[str]]:
        found = {m: sorted(w for w in self.reach(m) if _under(w, WRITING)) for m in self.modules if _under(m, READING)}
        return {m: w for m, w in found.items() if w}

    def upward(self) -> list[str]:
        return [
            f"{self.where(m, line)}: {m} ({LAYERS[self.layer(m)][0]}) imports {t} ({LAYERS[self.layer(t)][0]})"
            for m, targets in self.imports.items()
            for t, line, _ in targets
            if self.layer(t) > self.layer(m)
        ]

    def unexplained_local_imports(self) -> list[str]:
        """Imports inside a function without a comment on their line or the line above. The CLI's commands
        import their libraries inside the function that runs them, so that `orchlog --help` costs next to
        nothing (orchlog/cli/__init__.py says so once for all of them)."""
        out = set()
        for m, targets in self.imports.items():
            if _under(m, ("orchlog.cli",)):
                continue
            lines = self.modules[m].read_text(encoding="utf-8").splitlines()
            for _, line, local in targets:
                here, above = lines[line - 1], lines[line - 2].strip() if line > 1 else ""
                if local and "#" not in here and not above.startswith("#"):
                    out.add(self.where(m, line))
        return sorted(out)

    def where(self, module: str, line: int) -> str:
        return f"{self.modules[module].relative_to(self.root)}:{line}"


ORCHLOG = Graph(ROOT)


def test_every_module_has_a_layer():
    assert ORCHLOG.unlayered() == []


def test_there_is_no_import_circle():
    assert ORCHLOG.circles() == []


def test_reading_never_imports_writing():
    assert ORCHLOG.reading_to_writing() == {}


def test_no_module_imports_a_higher_layer():
    assert ORCHLOG.upward() == []


def test_an_import_inside_a_function_says_why():
    assert ORCHLOG.unexplained_local_imports() == []


def test_each_check_finds_what_it_is_for(tmp_path):
    """A package with a circle hidden in a function, reading that reaches writing through another module,
    an upward import, and an import in a function with no reason: each check names its own."""
    files = {
        "__init__.py": "",
        "errors.py": "def f():\n    from orchlog import strings\n",
        "strings.py": "from orchlog import errors\n",
        "read/__init__.py": "",
        "read/trace.py": "from orchlog.encoding import record\n",
        "encoding/__init__.py": "",
        "encoding/record.py": "# the knob rules\nfrom orchlog.emit import knobs\n",
        "emit/__init__.py": "",
        "emit/knobs.py": "",
        "compare/__init__.py": "from orchlog.compare import engine\n",
        "compare/engine.py": "from orchlog.report import text\n",
        "report/__init__.py": "",
        "report/text.py": "",
    }
    for name, text in files.items():
        path = tmp_path / "orchlog" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    g = Graph(tmp_path)
    assert g.circles() == [["orchlog.errors", "orchlog.strings"]]
    assert g.reading_to_writing() == {"orchlog.read.trace": ["orchlog.emit", "orchlog.emit.knobs"]}
    assert (
        "orchlog/compare/engine.py:1: orchlog.compare.engine (compare) imports orchlog.report.text (reports)"
        in g.upward()
    )
    assert (
        "orchlog/encoding/record.py:2: orchlog.encoding.record (codec) imports orchlog.emit.knobs (writing)"
        in g.upward()
    )
    assert g.unexplained_local_imports() == ["orchlog/errors.py:2"]
