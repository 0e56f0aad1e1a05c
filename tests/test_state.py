"""The run state at scale: work per new candidate must not grow with the run."""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from loralay_build.records import Candidate
from loralay_build.store.fetch import FetchState


def _candidate(k: int) -> Candidate:
    return Candidate(id=f"doc{k:06d}", source="local", language="en",
                     abstracts={"en": f"abstract {k}"}, pdf_path=f"/pdfs/{k}.pdf")


def _fill(state: FetchState, start: int, stop: int) -> None:
    with state.transaction():
        for k in range(start, stop):
            state.put_candidate(_candidate(k))


def _vm_steps(state: FetchState, c: Candidate) -> int:
    """SQLite virtual-machine instructions spent storing one candidate (deterministic,
    unlike a clock)."""
    steps = 0

    def count() -> int:
        nonlocal steps
        steps += 1
        return 0

    state.db.set_progress_handler(count, 1)
    try:
        state.put_candidate(c)
    finally:
        state.db.set_progress_handler(None, 1)
    return steps


def test_storing_a_candidate_costs_the_same_at_1k_and_at_8k(tmp_path):
    """Regression: the next `seq` was MAX(seq) over an unindexed column, a scan of every
    row per candidate; the fetch of 20k local documents fell to 145 docs/s."""
    with FetchState(tmp_path / "fetch.sqlite") as state:
        _fill(state, 0, 1000)
        small = _vm_steps(state, _candidate(1000))
        _fill(state, 1001, 8000)
        large = _vm_steps(state, _candidate(8000))
        assert large < 1.5 * small, (small, large)
        ids = [c.id for c in state.candidates()]
    assert ids == [f"doc{k:06d}" for k in range(8001)]


def test_a_state_written_before_the_index_gets_it_and_keeps_its_order(tmp_path):
    path = tmp_path / "fetch.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE candidates (id TEXT PRIMARY KEY, seq INTEGER NOT NULL, "
               "body TEXT NOT NULL)")
    with FetchState(tmp_path / "scratch.sqlite") as scratch:  # bodies as the state writes them
        for k in (2, 0, 1):
            scratch.put_candidate(_candidate(k))
        rows = scratch.db.execute("SELECT id, seq, body FROM candidates").fetchall()
    db.executemany("INSERT INTO candidates VALUES (?,?,?)", rows)
    db.commit()
    db.close()
    with FetchState(path) as state:
        plan = state.db.execute("EXPLAIN QUERY PLAN SELECT MAX(seq) FROM candidates").fetchall()
        assert "candidates_seq" in plan[0][-1]
        state.put_candidate(_candidate(3))
        state.put_candidate(_candidate(0))  # an update keeps its place
        assert [c.id for c in state.candidates()] == ["doc000002", "doc000000", "doc000001",
                                                      "doc000003"]


def _open_at_once(kind: str, path: str, barrier, errors) -> None:
    from loralay_build.images.store import ImageStore
    from loralay_build.pdf.fingerprint import PdfChecksums

    opener = {"state": FetchState, "checksums": PdfChecksums, "images": ImageStore}[kind]
    barrier.wait()
    try:
        opener(Path(path)).close()
    except sqlite3.OperationalError as exc:
        errors.put(f"{kind}: {exc}")


@pytest.mark.stress
@pytest.mark.parametrize("kind", ["state", "checksums", "images"])
def test_processes_opening_a_fresh_database_at_once_all_get_in(kind, tmp_path):
    """Two shards started side by side: one stopped with "database is locked" when both
    turned the new fetch state to WAL at the same moment (CI, test_slurm)."""
    ctx = multiprocessing.get_context("fork")
    errors = ctx.SimpleQueue()
    for round_ in range(40):
        barrier = ctx.Barrier(6)
        path = str(tmp_path / f"{kind}-{round_}.sqlite")
        procs = [ctx.Process(target=_open_at_once, args=(kind, path, barrier, errors))
                 for _ in range(6)]
        for proc in procs:
            proc.start()
        for proc in procs:
            proc.join(120)
        assert [proc.exitcode for proc in procs] == [0] * 6
    assert errors.empty(), errors.get()
