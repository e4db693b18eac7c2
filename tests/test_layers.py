"""The package's folders show the data flow, and this test keeps them honest: every import of a
``diag`` module points down the layers (or stays in its own folder), and there is no import circle.

    leaves (evidence, hostlist, cache, files, regex_walk, damage, __init__) -> input -> catalog -> scan -> report
        -> diagnosis | slurm | formats | lint (side by side, none imports another) -> api -> fleet
        -> epilog | harness | follow -> commands -> cli

Imports under ``if TYPE_CHECKING:`` are for the type checker only and are not counted.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "diag"

LAYERS = [
    {"diag", "diag.evidence", "diag.hostlist", "diag.cache", "diag.files", "diag.regex_walk", "diag.damage"},
    {"diag.input"},
    {"diag.catalog"},
    {"diag.scan"},
    {"diag.report"},
    {"diag.diagnosis", "diag.slurm", "diag.formats", "diag.lint"},
    {"diag.api"},
    # The fleet sits just under the epilog, which writes its records (--fleet-dir).
    {"diag.fleet"},
    {"diag.epilog", "diag.harness", "diag.follow", "diag.probe"},
    {"diag.commands"},
    {"diag.cli"},
    {"diag.__main__"},
]


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _group(module: str) -> str:
    """The folder (or top-level module) a module belongs to: diag.scan.fold -> diag.scan."""
    parts = module.split(".")
    return ".".join(parts[:2])


def _layer(module: str) -> int:
    group = _group(module)
    for index, members in enumerate(LAYERS):
        if group in members:
            return index
    raise AssertionError(f"{module} belongs to no layer: add its folder to LAYERS in {__file__}")


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    typing_only: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            typing_only |= {id(n) for child in node.body for n in ast.walk(child)}
    found = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "diag":
            for alias in node.names:
                candidate = f"{node.module}.{alias.name}"
                found.add(candidate if (PACKAGE.parent / (candidate.replace(".", "/") + ".py")).exists()
                          or (PACKAGE.parent / candidate.replace(".", "/")).is_dir() else node.module)  # fmt: skip
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "diag"}
    return found


def _graph() -> dict[str, set[str]]:
    graph = {_module_name(p): _imports(p) for p in PACKAGE.rglob("*.py") if "builtin_rules" not in p.parts}
    # diag/__init__.py re-exports diag.api.diagnose lazily, inside a function, so that `import diag`
    # (and --version) stays fast: the one deliberate upward import.
    graph["diag"] = set()
    return graph


def test_every_import_points_down_the_layers():
    wrong = []
    for module, targets in _graph().items():
        for target in targets:
            if _group(target) == _group(module) or target == "diag":
                continue
            if _layer(target) >= _layer(module):
                wrong.append(f"{module} imports {target}")
    assert not wrong, "imports against the layers:\n" + "\n".join(sorted(wrong))


def test_no_import_circle():
    graph = _graph()
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in graph:
                continue
            if state.get(nxt) == 1:
                raise AssertionError("import circle: " + " -> ".join(path[path.index(nxt) :] + [nxt]))
            if nxt not in state:
                visit(nxt)
        path.pop()
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module)


def test_every_subpackage_is_in_the_wheel():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    folders = {_module_name(p) for p in PACKAGE.rglob("__init__.py")}
    assert folders <= listed, f"missing from [tool.setuptools] packages: {sorted(folders - listed)}"
