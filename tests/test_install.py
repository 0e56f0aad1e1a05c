"""The package as a user gets it: a wheel, installed into a clean venv, run from elsewhere.

An editable install hides what the wheel lacks (a default config left out of the package
data, a dependency that happens to be installed beside it, a path computed from the
checkout), so the integration test here builds the wheel, installs it into a new venv with
no access to this environment's packages, and builds the sample dataset from a directory
outside the checkout. The quick test checks that `[project].dependencies` names exactly the
distributions the code imports.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

from .conftest import REPO

PACKAGE = REPO / "loralay_build"
# Not part of a build: copying them would only slow the wheel down or leak stale files.
NOT_SOURCES = {".git", ".venv", "out", "build", "dist", "data", "tests", ".pytest_cache",
               ".ruff_cache"}
# Declared ahead of the code that imports them; empty: every declared name is imported.
DECLARED_AHEAD: set[str] = set()
# Only the sample-corpus generator imports these, lazily; they belong to the `dev` extra.
DEV_ONLY_PACKAGE = PACKAGE / "samples"
# Modules whose other imports are an optional extra's (imported lazily, or only by the
# source, option or command that needs them), with that extra's name (loralay_build/extras.py)
EXTRA_MODULES = {
    PACKAGE / "images" / "detector.py": "detector",
    **{p: "crawl" for p in (PACKAGE / "sources" / "crawl").rglob("*.py")},
    PACKAGE / "sources" / "kit" / "oaipmh.py": "oai",
    PACKAGE / "sources" / "arxiv.py": "arxiv",
    PACKAGE / "rouge.py": "citesum",
    PACKAGE / "sentences.py": "citesum",
    PACKAGE / "citesum" / "sentences.py": "citesum",
    PACKAGE / "write" / "plots.py": "plots",
    PACKAGE / "preview.py": "images",
    PACKAGE / "images" / "render.py": "images",
    PACKAGE / "pdftext" / "ocr.py": "ocr",
}

pytestmark = [pytest.mark.e2e]


def canonical(name: str) -> str:
    """PEP 503 normalisation, so `PyYAML`, `pyyaml` and `py_yaml` compare equal."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_names(requirements: list[str]) -> set[str]:
    return {canonical(re.match(r"[A-Za-z0-9._-]+", r).group()) for r in requirements}


def imported_top_levels(files: list[Path]) -> set[str]:
    """Absolute imports anywhere in the files, lazy ones in functions included."""
    names: set[str] = set()
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return names - set(sys.stdlib_module_names) - {"loralay_build", "__future__"}


def distributions(top_levels: set[str]) -> set[str]:
    mapping = packages_distributions()
    missing = sorted(t for t in top_levels if t not in mapping)
    assert not missing, f"imported but not installed here, cannot map: {missing}"
    return {canonical(d) for t in top_levels for d in mapping[t]}


def project() -> dict:
    tomllib = pytest.importorskip("tomllib", reason="Python 3.11+ reads pyproject.toml")
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_declared_dependencies_are_the_imported_ones():
    files = [p for p in PACKAGE.rglob("*.py")
             if DEV_ONLY_PACKAGE not in p.parents and p not in EXTRA_MODULES]
    imported = distributions(imported_top_levels(files))
    declared = requirement_names(project()["dependencies"])
    assert imported - declared == set(), "imported but not declared"
    assert declared - imported - DECLARED_AHEAD == set(), "declared but never imported"
    dev_only = distributions(imported_top_levels(list(DEV_ONLY_PACKAGE.rglob("*.py"))))
    dev = requirement_names(project()["optional-dependencies"]["dev"])
    assert dev_only - declared - dev == set(), "the sample generator needs these in `dev`"


def run(*cmd: str | Path, cwd: Path, timeout: float = 900) -> str:
    """A command in a clean environment: no PYTHONPATH pointing back at the checkout."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    proc = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)
    assert proc.returncode == 0, f"{cmd}\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    return proc.stdout


def copy_sources(dest: Path) -> Path:
    """The checkout minus its data, tests and build leftovers: setuptools builds in place,
    and a stale build/lib of the checkout would end up in the wheel."""
    def ignore(folder: str, names: list[str]) -> set[str]:
        top = Path(folder) == REPO
        return {n for n in names if n == "__pycache__" or n.endswith((".egg-info", ".so"))
                or (top and n in NOT_SOURCES)}
    return Path(shutil.copytree(REPO, dest, ignore=ignore))


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("wheel")
    src = copy_sources(tmp / "src")
    run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", ".", "-w", tmp / "dist",
        cwd=src)
    (built,) = (tmp / "dist").glob("loralay_build-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    """A new venv (no --system-site-packages) with the wheel; pip resolves the declared
    dependencies from the registry, or its cache after the first run."""
    root = tmp_path_factory.mktemp("venv")
    run(sys.executable, "-m", "venv", root / "venv", cwd=root)
    run(root / "venv" / "bin" / "python", "-m", "pip", "install", "-q", wheel, cwd=root)
    return root / "venv"


@pytest.mark.e2e
def test_wheel_ships_the_defaults_and_no_checkout_files(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    configs = {Path(n).name for n in names if n.startswith("loralay_build/configs/")}
    assert {p.name for p in (PACKAGE / "configs").glob("*.yaml")} <= configs
    assert not [n for n in names if n.split("/")[0] in ("tests", "scripts", "data")]
    # the compiled reader of Poppler's output, built from pdftext/_fastread.c
    assert [n for n in names if re.fullmatch(r"loralay_build/pdftext/_fastread\..*\.so", n)]


@pytest.mark.e2e
def test_installed_wheel_builds_the_sample_from_outside_the_checkout(venv, tmp_path):
    bin_ = venv / "bin"
    where = run(bin_ / "python", "-c", "import loralay_build; print(loralay_build.__file__)",
                cwd=tmp_path)
    assert Path(where.strip()).is_relative_to(venv), "the wheel, not the checkout, must run"
    run(bin_ / "python", "-c", "from loralay_build.pdftext import parse; "
        "assert parse.BBoxLayoutParser('x').reader == 'c'", cwd=tmp_path)
    out = tmp_path / "sample"
    run(bin_ / "loralay", "build", "--source", "local", "--manifest",
        REPO / "data" / "sample" / "manifest.jsonl", "--out", out, "--workers", "2",
        cwd=tmp_path)
    load = ("import json, sys; from datasets import load_dataset; "
            "ds = load_dataset(sys.argv[1], cache_dir=sys.argv[2]); "
            "print(json.dumps({s: len(ds[s]) for s in ds}))")
    sizes = json.loads(run(bin_ / "python", "-c", load, out, tmp_path / "cache",
                           cwd=tmp_path))
    assert set(sizes) == {"train", "validation", "test"} and all(sizes.values()), sizes
    # no `plots` extra: the report is written without its pictures, and says how to get them
    plots = json.loads((out / "report.json").read_text())["plots"]
    assert plots == {"files": {}, "error": "matplotlib not installed: pip install "
                                           "'loralay-build[plots]' for the plots"}


def test_the_extras_map_is_the_package_metadata():
    """`extras.EXTRAS` (what a run checks) names the modules of exactly the distributions
    each extra of pyproject.toml installs, and `all` is every one but the detector's."""
    from loralay_build.extras import EXTRAS

    extras = project()["optional-dependencies"]
    mapping = packages_distributions()
    for extra, modules in EXTRAS.items():
        dists = {canonical(d) for m in modules for d in mapping[m]}
        assert dists == requirement_names(extras[extra]), extra
    (everything,) = extras["all"]
    assert everything == f"loralay-build[{','.join(sorted(EXTRAS))}]"


def test_an_extra_s_modules_import_the_extra_and_the_declared_dependencies():
    """Each extra's modules import only the core and that extra (the optional detector:
    rapid-layout and onnxruntime, which a plain install lacks), and together all of it."""
    mapping = packages_distributions()
    declared = requirement_names(project()["dependencies"])
    used: dict[str, set[str]] = {}
    for path, extra in EXTRA_MODULES.items():
        names = imported_top_levels([path])
        wanted = requirement_names(project()["optional-dependencies"][extra])
        outside = {canonical(n) for n in names if n not in mapping}
        inside = {canonical(d) for n in names if n in mapping for d in mapping[n]}
        assert outside <= wanted, (path, outside - wanted)
        assert inside - declared - wanted == set(), (path, inside - declared)
        used.setdefault(extra, set()).update(outside | inside)
    for extra, names in used.items():
        wanted = requirement_names(project()["optional-dependencies"][extra])
        assert wanted <= names, (extra, wanted - names)


def fails(*cmd: str | Path, cwd: Path) -> str:
    """A command expected to refuse: its exit code 2 and the last line of its stderr."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    proc = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 2, f"{cmd}\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    return proc.stderr.strip().splitlines()[-1]


@pytest.mark.e2e
def test_a_plain_install_refuses_what_needs_an_extra_in_one_line(venv, tmp_path):
    """Issue 42, 9: the wheel without extras builds a local corpus (the test above), and
    a source, option or command whose extra is missing says which one, writing nothing."""
    loralay = venv / "bin" / "loralay"
    out = tmp_path / "ks"
    assert fails(loralay, "build", "--source", "koreascience", "--out", out,
                 cwd=tmp_path) == ("loralay: --source koreascience needs the optional `crawl` "
                                   "extra (scrapy, twisted not installed): pip install "
                                   "'loralay-build[crawl]'")
    assert fails(loralay, "build", "--source", "oai", "--out", out, "--dry-run",
                 cwd=tmp_path).endswith("needs the optional `oai` extra (sickle not "
                                        "installed): pip install 'loralay-build[oai]'")
    cfg = tmp_path / "images.yaml"
    cfg.write_text("images: true\n")
    assert fails(loralay, "build", "--source", "local", "--manifest",
                 REPO / "data" / "sample" / "manifest.jsonl", "--out", out, "--config", cfg,
                 cwd=tmp_path).startswith("loralay: `images: true` needs the optional "
                                          "`images` extra")
    assert not out.exists()
    pdf = REPO / "data" / "sample" / "pdf" / "en_twocol_graphs.pdf"
    assert "`loralay show` needs the optional `images` extra" in fails(
        loralay, "show", pdf, cwd=tmp_path)
    assert "`loralay eval` needs the optional `citesum` extra" in fails(
        loralay, "eval", tmp_path, cwd=tmp_path)
