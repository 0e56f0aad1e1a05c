"""The run state: work per new candidate must not grow with the run; state files open
side by side; a file of another schema version is refused, an unversioned one stamped."""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from loralay_build.records import Candidate
from loralay_build.store.base import StateVersionError
from loralay_build.store.citesum import CiteSumState
from loralay_build.store.fetch import FetchState
from loralay_build.store.finish import FinishState
from loralay_build.store.shard import ShardState


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


# --- schema versions ---------------------------------------------------------------------

# what every state file was given before versions (be2745c's state.py), and the ledger's
UNVERSIONED_SCHEMA = """
CREATE TABLE IF NOT EXISTS candidates (
    id TEXT PRIMARY KEY, seq INTEGER NOT NULL, body TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS candidates_seq ON candidates (seq);
CREATE TABLE IF NOT EXISTS results (
    doc_id TEXT NOT NULL, stage TEXT NOT NULL, status TEXT NOT NULL,
    failure_class TEXT, message TEXT, duration_s REAL, updated_at REAL,
    PRIMARY KEY (doc_id, stage));
CREATE TABLE IF NOT EXISTS documents (
    id TEXT PRIMARY KEY, summary TEXT NOT NULL, payload BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS checkpoints (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
UNVERSIONED_LEDGER = """
CREATE TABLE IF NOT EXISTS ledger (
    kind TEXT NOT NULL, key TEXT NOT NULL, fingerprint TEXT NOT NULL, failure_class TEXT,
    stage TEXT, message TEXT, limits TEXT NOT NULL, durations TEXT NOT NULL,
    updated_at REAL NOT NULL, PRIMARY KEY (kind, key));
CREATE TABLE IF NOT EXISTS ledger_parts (digest TEXT PRIMARY KEY, body TEXT NOT NULL);
"""
UNVERSIONED_DECISIONS = """
CREATE TABLE IF NOT EXISTS decisions (
    seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, status TEXT NOT NULL,
    split TEXT, shard INTEGER, class TEXT, rule TEXT, message TEXT);
CREATE TABLE IF NOT EXISTS base_decisions (
    seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, status TEXT NOT NULL,
    split TEXT, shard INTEGER, class TEXT, rule TEXT, message TEXT);
"""


def _openers() -> dict[str, Callable[[Path], Any]]:
    from loralay_build.images.store import ImageStore
    from loralay_build.pdf.fingerprint import PdfChecksums

    return {"fetch": FetchState, "shard": ShardState, "finish": FinishState,
            "citesum": CiteSumState, "pdf-checksums": PdfChecksums, "images": ImageStore}


def _version(path: Path) -> int:
    with closing(sqlite3.connect(path)) as db:
        return int(db.execute("PRAGMA user_version").fetchone()[0])


def _stamp(path: Path, version: int) -> None:
    with closing(sqlite3.connect(path)) as db:
        db.execute(f"PRAGMA user_version = {version}")


@pytest.mark.parametrize("kind", ["fetch", "shard", "finish", "citesum", "pdf-checksums",
                                  "images"])
def test_a_state_file_of_a_newer_schema_is_refused_in_one_line_naming_it(kind, tmp_path):
    path = tmp_path / f"{kind}.sqlite"
    _openers()[kind](path).close()
    assert _version(path) == 1  # a new file is written at today's version
    _stamp(path, 7)
    with pytest.raises(StateVersionError) as err:
        _openers()[kind](path)
    line = str(err.value)
    assert "\n" not in line and line.startswith(f"{path}: {kind} state")
    assert "schema version 7" in line and "reads version 1" in line
    assert _version(path) == 7  # left as it was found


def test_an_unversioned_fetch_state_of_todays_tables_is_stamped_and_read_as_before(tmp_path):
    path = tmp_path / "fetch.sqlite"
    with closing(sqlite3.connect(path)) as db:
        db.executescript(UNVERSIONED_SCHEMA)
        db.execute("INSERT INTO candidates VALUES (?,?,?)",
                   ("doc000005", 0, json.dumps(_candidate(5).to_json())))
        db.execute("INSERT INTO checkpoints VALUES ('run.num_shards', '1')")
        db.commit()
    assert _version(path) == 0
    with FetchState.read_only(path) as ro:  # `loralay show` reads it, stamps nothing
        assert [c.id for c in ro.candidates()] == ["doc000005"]
    assert _version(path) == 0
    with FetchState(path) as st:
        assert [c.id for c in st.candidates()] == ["doc000005"]
        assert st.get_checkpoint("run.num_shards") == 1
    assert _version(path) == 1


def test_an_unversioned_shard_and_finish_state_are_stamped_and_keep_their_rows(tmp_path):
    shard, finish = tmp_path / "shard.sqlite", tmp_path / "finish.sqlite"
    with closing(sqlite3.connect(shard)) as db:
        db.executescript(UNVERSIONED_SCHEMA + UNVERSIONED_LEDGER)
        db.execute("INSERT INTO ledger VALUES ('document','d1','[]',NULL,NULL,NULL,'{}',"
                   "'{}',0)")
        db.commit()
    with closing(sqlite3.connect(finish)) as db:
        db.executescript(UNVERSIONED_SCHEMA + UNVERSIONED_DECISIONS)
        db.execute("INSERT INTO decisions VALUES (0,'d1','kept','train',0,NULL,NULL,NULL)")
        # what versions before the decisions record kept of the finish
        db.execute("INSERT INTO results VALUES ('d1','finish','ok',NULL,NULL,NULL,0)")
        db.commit()
    with ShardState(shard) as st:
        assert [e.key for e in st.ledger_table("document").entries()] == ["d1"]
    with FinishState(finish) as st:
        assert st.kept_counts() == {"train": 1} and st.kept_place("d1") == ("train", 0)
        assert st.db.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 0
    assert _version(shard) == _version(finish) == 1


def test_an_unversioned_file_of_other_tables_is_refused_not_misread(tmp_path):
    """An images store given where the fetch state is expected: not today's fetch layout."""
    from loralay_build.images.store import ImageStore

    path = tmp_path / "fetch.sqlite"
    ImageStore(path).close()
    _stamp(path, 0)
    with pytest.raises(StateVersionError, match="fetch state of schema version 0"):
        FetchState(path)
    with closing(sqlite3.connect(path)) as db:  # and a fetch table of other columns
        db.execute("DROP TABLE docs")
        db.execute("DROP TABLE pages")
        db.execute("CREATE TABLE candidates (id TEXT PRIMARY KEY, body TEXT)")
    with pytest.raises(StateVersionError, match="fetch state of schema version 0"):
        FetchState(path)
    with pytest.raises(StateVersionError):
        FetchState.read_only(path)


def test_a_citesum_index_of_a_newer_schema_is_refused(tmp_path):
    from loralay_build.citesum import index

    cand = tmp_path / "candidates.jsonl"
    cand.write_text(json.dumps({"cited_id": "p1"}) + "\n", encoding="utf-8")
    dest = tmp_path / "cited-ids.sqlite"
    index.write_wanted([cand], dest)
    con = index.open_ids(dest)
    assert index.wanted(con, ["p1", "p2"]) == {"p1"}
    con.close()
    _stamp(dest, 3)
    with pytest.raises(StateVersionError, match="cited-ids index state of schema version 3"):
        index.open_ids(dest)
