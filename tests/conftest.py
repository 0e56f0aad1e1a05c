"""Shared fixtures and helpers: the `../shared` folder (skipped cleanly when absent), a
local server, the CLI in a subprocess, and the sample and shared corpus built once per
session.

Tiers (markers, registered in pyproject.toml): a test without a marker is a unit test
(`make test-fast` runs those, in under three minutes); `e2e` runs the whole pipeline or
the CLI in a subprocess; `stress` kills, fuzzes or scales; `perf` measures a ratio;
`needs_shared` reads `../shared` and skips without it; `cluster` submits to a real Slurm.
`make test` runs every tier.
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from loralay_build.records import Candidate, Rejection
from loralay_build.sources import FetchContext, get_fetcher, record_fetch_item
from loralay_build.store.fetch import FetchState

from .fakeserver import FakeServer

REPO = Path(__file__).resolve().parent.parent
# the development tools the tests check (the sample maker, the benches): not in the wheel
sys.path.insert(0, str(REPO / "scripts"))
SHARED = Path(os.environ.get("LORALAY_SHARED", REPO.parent / "shared"))
SAMPLE = REPO / "data" / "sample" / "manifest.jsonl"


def shared_path(*parts: str) -> Path:
    p = SHARED.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"{p} not present (../shared is absent)")
    return p


_SHARED_WORDS = ("shared_path(", "SHARED", "shared_corpus", "built_corpus")


def _reads_shared(item: pytest.Item) -> bool:
    """The test, or a fixture it uses (directly or through others), names ../shared."""
    funcs = [getattr(item, "function", None)]
    info = getattr(item, "_fixtureinfo", None)
    if info is not None:
        funcs += [d.func for defs in info.name2fixturedefs.values() for d in defs]
    return any(_names_shared(func) for func in funcs)


@functools.cache
def _names_shared(func: Any) -> bool:
    """Once per function: a fixture is in the closure of many tests."""
    try:
        source = inspect.getsource(func)
    except (OSError, TypeError):
        return False
    return any(word in source for word in _SHARED_WORDS)


_UNTRACKED = pytest.StashKey[set[str] | None]()


def _untracked_in_checkout() -> set[str] | None:
    """Files in the checkout git neither tracks nor ignores; None outside a git checkout
    (the tests run from an unpacked sdist too)."""
    try:
        proc = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain",
                               "--untracked-files=all"], capture_output=True, text=True,
                              timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    return {line[3:] for line in proc.stdout.splitlines() if line.startswith("?? ")}


def pytest_sessionstart(session: pytest.Session) -> None:
    if not hasattr(session.config, "workerinput"):  # the controller alone, under xdist
        session.config.stash[_UNTRACKED] = _untracked_in_checkout()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A test that writes into the checkout fails the run: a test's files belong in its
    tmp_path (an eval's scores once landed in the repository's root and were committed)."""
    before = session.config.stash.get(_UNTRACKED, None)
    after = _untracked_in_checkout() if before is not None else None
    if before is None or after is None or not after - before:
        return
    written = sorted(after - before)
    print(f"\ntests wrote {len(written)} file(s) into the checkout: {written[:10]}",
          file=sys.stderr)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """`needs_shared` on every test that reads ../shared, so `-m "not needs_shared"` selects
    what runs from the repository alone."""
    for item in items:
        if _reads_shared(item):
            item.add_marker(pytest.mark.needs_shared)


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("needs_shared") and not SHARED.is_dir():
        pytest.skip(f"{SHARED} not present (../shared is absent)")


def loralay(*args: str, check: bool = False, env: dict | None = None,
            timeout: float = 900, cwd: Path = REPO) -> subprocess.CompletedProcess:
    """The CLI as a user runs it, in a subprocess; `check`: fail with its stderr."""
    proc = subprocess.run([sys.executable, "-m", "loralay_build.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout, env=env)
    if check and proc.returncode != 0:
        raise AssertionError(f"loralay {' '.join(args)} failed ({proc.returncode}):\n"
                             f"{proc.stderr[-3000:]}")
    return proc


def local_refresh_exited_at(out: Path, manifest: Path, function: str, *extra: str) -> int:
    """`build --source local --refresh` (`build_local`'s), its process ended (`os._exit(9)`,
    as a kill) when the finish calls `function` (`module:name`, e.g.
    `loralay_build.pdf.finish:commit_base`); its exit code."""
    module, name = function.split(":")
    code = (f"import os, sys, importlib; f = importlib.import_module({module!r}); "
            f"setattr(f, {name!r}, lambda *a, **k: os._exit(9)); "
            "from loralay_build.cli import main; sys.argv[0] = 'loralay'; main()")
    return subprocess.run([sys.executable, "-c", code, "build", "--source", "local",
                           "--manifest", str(manifest), "--out", str(out), "--workers", "2",
                           *extra, "--refresh"], cwd=REPO,
                          capture_output=True, text=True).returncode


def local_refresh_killed_when(out: Path, manifest: Path, pattern: str, *extra: str) -> int:
    """`build --source local --refresh`, SIGKILLed (its whole process group) as soon as a
    file matching `pattern` (a glob under `out`, e.g. a `.partial` being written) exists;
    its exit code."""
    proc = subprocess.Popen([sys.executable, "-m", "loralay_build.cli", "build", "--source",
                             "local", "--manifest", str(manifest), "--out", str(out),
                             "--workers", "2", *extra, "--refresh"], cwd=REPO,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    while proc.poll() is None and not any(out.glob(pattern)):
        time.sleep(0.001)
    os.killpg(proc.pid, signal.SIGKILL)
    return proc.wait()


def fetched_ids(out: Path) -> set[str]:
    """The ids a run's fetch stage recorded (`state/fetch.sqlite`)."""
    with sqlite3.connect(out / "state" / "fetch.sqlite") as con:
        return {r[0] for r in con.execute("SELECT doc_id FROM results WHERE stage='fetch'")}


def build_local(manifest: Path, out: Path, *extra: str, check: bool = False,
                env: dict | None = None) -> subprocess.CompletedProcess:
    """`loralay build --source local` of a manifest with two workers."""
    return loralay("build", "--source", "local", "--manifest", str(manifest), "--out",
                   str(out), "--workers", "2", *extra, check=check, env=env)


def config(tmp: Path, **keys: object) -> Path:
    """A `--config` file of these keys (JSON is YAML), under a name of its own in `tmp`."""
    path = tmp / f"config-{len(list(tmp.glob('config-*.yaml')))}.yaml"
    path.write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in keys.items()),
                    encoding="utf-8")
    return path


def shards_by_digest(out: Path) -> dict[str, bytes]:
    """Each data shard's bytes by split and content digest: a refresh that grows a split
    renumbers its carried shards (`-of-00002`), their bytes and digest unchanged."""
    return {f"{p.name.split('-')[0]}-{p.name.rsplit('-', 1)[1]}": p.read_bytes()
            for p in sorted((out / "data").glob("*.parquet"))}


def rows_as_written(out: Path, folder: str = "data") -> list[tuple[str, list[dict]]]:
    """A dataset as written: each file in name order, its rows in file order."""
    return [(p.name, pq.read_table(p).to_pylist())
            for p in sorted((out / folder).glob("*.parquet"))]


@pytest.fixture(scope="session")
def built_sample(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """The committed sample built once (the README's demo); read it, or copy it first."""
    out = tmp_path_factory.mktemp("sample") / "ds"
    return out, build_local(SAMPLE, out, check=True)


@pytest.fixture(scope="session")
def built_corpus(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """../shared's real corpus built once; read it, or copy it first."""
    manifest = shared_path("corpus", "manifest.jsonl")
    out = tmp_path_factory.mktemp("corpus") / "ds"
    return out, build_local(manifest, out, check=True)


def copy_run(src: Path, dest: Path) -> Path:
    """A private copy of a built run folder that a test may change."""
    shutil.copytree(src, dest, symlinks=True)
    return dest


def harvest_source(source: str, cfg: dict, state: FetchState, out: Path, limit: int | None = None,
                   abandon_after: int | None = None) -> list[Candidate | Rejection]:
    """What the driver does with a fetcher; `abandon_after` drops the generator there, as a
    kill would."""
    gen = get_fetcher(source)(FetchContext(source, cfg, state, out, limit))  # type: ignore[arg-type]
    items: list[Candidate | Rejection] = []
    for item in gen:
        record_fetch_item(state, item)
        items.append(item)
        if abandon_after is not None and len(items) >= abandon_after:
            gen.close()
            break
    return items


@pytest.fixture
def shared_corpus() -> list[dict]:
    man = shared_path("corpus", "manifest.jsonl")
    return [json.loads(line) for line in man.read_text().splitlines() if line.strip()]


@pytest.fixture
def fake_server():
    with FakeServer() as srv:
        yield srv


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch):
    """Tests may talk to 127.0.0.1 only: any other address fails loudly."""
    real = socket.socket.connect

    def guarded(self, address):
        host = address[0] if isinstance(address, tuple) else address
        if isinstance(host, str) and not (host.startswith("127.") or host in ("localhost", "::1")
                                          or host.startswith("/")):
            raise RuntimeError(f"test tried to reach {host}: only loopback is allowed")
        return real(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
