"""The house's rules that the code's imports must keep: no import cycle anywhere (imports
inside functions count: a cycle through a lazy import is still one the next change can
close), and the layers of pyproject.toml's import-linter contracts (`make lint` runs them
too, with ruff and mypy)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import grimp

from .conftest import REPO


def strongly_connected(graph: grimp.ImportGraph) -> list[list[str]]:
    """Tarjan's components of more than one module (or a module importing itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(root: str) -> None:
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(graph.find_modules_directly_imported_by(nxt)))))
                    break
                if nxt in on:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        m = stack.pop()
                        on.discard(m)
                        comp.append(m)
                        if m == node:
                            break
                    if len(comp) > 1 or node in graph.find_modules_directly_imported_by(node):
                        found.append(sorted(comp))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def test_no_import_cycle_counting_imports_inside_functions():
    graph = grimp.build_graph("loralay_build", include_external_packages=False)
    assert len(graph.modules) > 100
    assert strongly_connected(graph) == []


def test_a_cycle_is_found_when_there_is_one():
    graph = grimp.ImportGraph()
    for m in ("p", "p.a", "p.b", "p.c"):
        graph.add_module(m)
    graph.add_import(importer="p.a", imported="p.b")
    graph.add_import(importer="p.b", imported="p.c")
    graph.add_import(importer="p.c", imported="p.a")
    assert strongly_connected(graph) == [["p.a", "p.b", "p.c"]]


def test_the_import_contracts_hold():
    script = Path(sys.executable).parent / "lint-imports"  # import-linter's console script
    proc = subprocess.run([str(script), "--no-cache"], cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert re.search(r"Contracts: \d+ kept, 0 broken", proc.stdout), proc.stdout[-2000:]


def _imports_of_the_package_root(path: Path, module: str) -> list[str]:
    """`from <root> import name` where name is not a submodule, and `import loralay_build`:
    imports of the package root itself, which grimp leaves out of its graph (the root's
    lazy API then closes a cycle it does not see: api -> run -> ... -> root -> api)."""
    import ast
    import pkgutil

    import loralay_build

    submodules = {m.name for m in pkgutil.iter_modules(loralay_build.__path__)}
    package = module.rsplit(".", 1)[0] if path.name != "__init__.py" else module
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")
            target = ".".join(base[:len(base) - node.level + 1]) if node.level else node.module
            if node.level and node.module:
                target = f"{target}.{node.module}"
            if target == "loralay_build":
                found += [f"{module}: from {target} import {a.name}" for a in node.names
                          if a.name not in submodules]
        elif isinstance(node, ast.Import):
            found += [f"{module}: import {a.name}" for a in node.names
                      if a.name == "loralay_build"]
    return found


def test_no_module_imports_the_package_root():
    root = REPO / "loralay_build"
    bad = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(REPO).with_suffix("")
        module = ".".join(rel.parts[:-1] if path.name == "__init__.py" else rel.parts)
        if module != "loralay_build":
            bad += _imports_of_the_package_root(path, module)
    assert bad == []


def test_an_import_of_the_root_is_found(tmp_path):
    code = tmp_path / "m.py"
    code.write_text("from .. import __version__\nfrom .. import registry\n")
    assert _imports_of_the_package_root(code, "loralay_build.run.m") == [
        "loralay_build.run.m: from loralay_build import __version__"]


def _layered_modules() -> set[str]:
    import tomllib

    contracts = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]
    (layers,) = [c["layers"] for c in contracts["contracts"] if c["type"] == "layers"]
    return {m.strip() for layer in layers for m in re.split(r"[|:]", layer)}


def test_every_package_and_module_is_in_a_layer():
    """A module outside every layer escapes the order (the layers contract once named 5 of
    run/'s 21 modules, which let `show` reach up into the per-document steps)."""
    import pkgutil

    import loralay_build

    named = _layered_modules()
    top = {f"loralay_build.{m.name}" for m in pkgutil.iter_modules(loralay_build.__path__)}
    top.discard("loralay_build.run")  # a folder of commands and executors, each named
    run = {f"loralay_build.run.{m.name}"
           for m in pkgutil.iter_modules([str(REPO / "loralay_build" / "run")])}
    assert sorted((top | run) - named) == []
    assert sorted(named - top - run) == []


def test_no_cycle_between_packages():
    """Modules collapsed to their top-level package (run/'s to each module): the pipelines,
    the machinery and the stages import one another one way only."""
    graph = grimp.build_graph("loralay_build", include_external_packages=False)
    packages = grimp.ImportGraph()

    def top(m: str) -> str:
        parts = m.split(".")
        return ".".join(parts[:3] if len(parts) > 2 and parts[1] == "run" else parts[:2])

    for m in graph.modules:
        packages.add_module(top(m))
    for m in graph.modules:
        for i in graph.find_modules_directly_imported_by(m):
            if top(m) != top(i) and top(m) != "loralay_build":  # the root's lazy API
                packages.add_import(importer=top(m), imported=top(i))
    assert strongly_connected(packages) == []


# Test modules allowed to import another: none (every shared helper is in tests/helpers/)
CROSS_IMPORTS_ALLOWED: frozenset[str] = frozenset()
_IMPORT_IN_CODE = re.compile(r"\bfrom tests\.(test_\w+) import|\bimport tests\.(test_\w+)")


def imported_test_modules(path: Path) -> list[str]:
    """The test modules a file of tests/ imports: `from .test_x`, `from . import test_x`,
    `tests.test_x` in any form, and inside a string of code a subprocess runs."""
    import ast

    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = (node.module or "").split(".")
            if node.level == 0 and base[0] == "tests":
                base = base[1:]
            elif node.level != 1:
                continue
            names = [a.name for a in node.names] if not base or base == [""] else []
            found += [m for m in base[:1] + names if m.startswith("test_")]
        elif isinstance(node, ast.Import):
            found += [a.name.split(".")[1] for a in node.names
                      if a.name.startswith("tests.test_")]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found += [a or b for a, b in _IMPORT_IN_CODE.findall(node.value)]
    return sorted(set(found))


def test_no_test_module_imports_another():
    """Shared test code lives in tests/helpers/ (or conftest): a test module's own helpers
    change with its tests alone (issue 42, 4 counted 28 such imports)."""
    tests = REPO / "tests"
    assert all((tests / f"{m}.py").exists() for m in CROSS_IMPORTS_ALLOWED)
    files = [*tests.glob("test_*.py"), tests / "conftest.py", *(tests / "helpers").glob("*.py")]
    bad = {p.stem: imported_test_modules(p) for p in sorted(files)
           if p.stem not in CROSS_IMPORTS_ALLOWED}
    assert {k: v for k, v in bad.items() if v} == {}


def test_an_import_of_a_test_module_is_found(tmp_path):
    code = tmp_path / "test_m.py"
    # `T.` for `tests.`, or this very file would import test_c, test_d and test_f
    code.write_text("from .test_a import x\nfrom . import test_b as b, helpers\n"
                    "from T.test_c import y\nimport T.test_d\nfrom tests import test_e\n"
                    "from .helpers.hal import z\nfrom .conftest import REPO\n"
                    "S = 'from T.test_f import g'\n".replace("T.", "tests."))
    assert imported_test_modules(code) == ["test_a", "test_b", "test_c", "test_d", "test_e",
                                              "test_f"]
