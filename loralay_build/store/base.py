"""What every state file shares: how it is opened, its schema version, its transactions.

Why a version in each file (`PRAGMA user_version`): a run folder outlives the tool that
made it, and a file whose tables mean something else to this tool must be refused in one
line, never read as if it were today's. Files written before versions existed (0) whose
tables are the ones this tool still reads are stamped version 1 on first open, so old run
folders keep resuming; any other version is refused, naming the file and both versions.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, TypeVar

from ..atomic import refuse_link
from ..errors import RunMismatch

# the tables every state file had before each kind owned its own (all four in each file)
UNVERSIONED_COMMON = frozenset({"candidates", "results", "documents", "checkpoints"})
S = TypeVar("S", bound="RunState")


class StateVersionError(RunMismatch):
    """A state file of a schema this tool does not read (a newer tool's, or not ours)."""


@dataclass(frozen=True, slots=True)
class FileKind:
    """One kind of state file: its name in messages, its version and its tables."""

    name: str
    version: int
    ddl: tuple[str, ...]  # CREATE ... IF NOT EXISTS statements, one each
    # run once inside the transaction that stamps an unversioned file as version 1
    upgrade_unversioned: Callable[[sqlite3.Connection], None] | None = None
    # what a user does with a file of another version (`--fresh` keeps the checksums)
    remedy: str = "use the loralay-build that wrote it, or start over with --fresh"


def connect_shared(path: Path, kind: FileKind, any_thread: bool = False) -> sqlite3.Connection:
    """A WAL database that processes started at the same moment (shards side by side) may
    all open: turning a new file to WAL takes an exclusive lock for which SQLite calls no
    busy handler, so the loser got "database is locked" at once instead of waiting."""
    db = sqlite3.connect(str(refuse_link(path)), timeout=60, isolation_level=None,
                         check_same_thread=not any_thread)
    try:
        _while_locked(lambda: db.execute("PRAGMA journal_mode=WAL"), 60)
        db.execute("PRAGMA synchronous=NORMAL")
        if user_version(db) != kind.version:
            _while_locked(lambda: _create_or_stamp(db, path, kind), 60)
    except BaseException:
        db.close()
        raise
    return db


def connect_read_only(path: Path, kind: FileKind, any_thread: bool = False
                      ) -> sqlite3.Connection:
    """An existing file opened for reading alone: neither created, nor stamped, nor
    turned to WAL; an unversioned file of today's tables is read as version 1."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None,
                         check_same_thread=not any_thread)
    try:
        found = user_version(db)
        if found != kind.version and not (found == 0 and _tables_match(db, kind)):
            raise version_error(path, kind, found)
    except BaseException:
        db.close()
        raise
    return db


def user_version(db: sqlite3.Connection) -> int:
    return int(db.execute("PRAGMA user_version").fetchone()[0])


def version_error(path: Path, kind: FileKind, found: int) -> StateVersionError:
    return StateVersionError(
        f"{path}: {kind.name} state of schema version {found}, this loralay-build reads "
        f"version {kind.version}; {kind.remedy}")


def _create_or_stamp(db: sqlite3.Connection, path: Path, kind: FileKind) -> None:
    """A new file gets the kind's tables and version; an unversioned one of today's
    tables is stamped (after its upgrade); any other version is refused. In one
    transaction, the version read again inside it: shards open one file side by side."""
    db.execute("BEGIN IMMEDIATE")
    try:
        found = user_version(db)
        if found != kind.version:
            if found != 0 or not _tables_match(db, kind):
                raise version_error(path, kind, found)
            for statement in kind.ddl:
                db.execute(statement)
            if kind.upgrade_unversioned is not None:
                kind.upgrade_unversioned(db)
            db.execute(f"PRAGMA user_version = {int(kind.version)}")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _tables_match(db: sqlite3.Connection, kind: FileKind) -> bool:
    """Every table of the file is the kind's, with the kind's columns, or one of the four
    that every state file had before kinds."""
    expected = _columns(_scratch(kind))
    found = _columns(db)
    return all(cols == expected[name] if name in expected else name in UNVERSIONED_COMMON
               for name, cols in found.items())


def _scratch(kind: FileKind) -> sqlite3.Connection:
    mem = sqlite3.connect(":memory:")
    for statement in kind.ddl:
        mem.execute(statement)
    return mem


def _columns(db: sqlite3.Connection) -> dict[str, tuple[str, ...]]:
    names = [r[0] for r in db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
    return {n: tuple(r[1] for r in db.execute(f"PRAGMA table_info('{n}')")) for n in names}


def _while_locked(step: Callable[[], object], timeout_s: float) -> None:
    deadline, pause = time.monotonic() + timeout_s, 0.005
    while True:
        try:
            step()
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(pause)
            pause = min(2 * pause, 0.2)


class RunState:
    """One open state file of one kind: its connection and its transactions. The kinds
    (`FetchState`, `ShardState`, ...) add the queries of their tables."""

    KIND: ClassVar[FileKind]

    def __init__(self, path: str | Path, any_thread: bool = False) -> None:
        """`any_thread`: the connection may be used from another thread than this one (one
        thread at a time; the finish reads payloads in a read-ahead thread)."""
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = connect_shared(self.path, self.KIND, any_thread=any_thread)

    @classmethod
    def read_only(cls: type[S], path: Path) -> S:
        """An existing state opened for reading alone (`loralay show` on someone's dataset
        must neither create nor change a file there)."""
        self = cls.__new__(cls)
        self.path = Path(path)
        self.db = connect_read_only(self.path, cls.KIND)
        return self

    def close(self) -> None:
        self.db.close()

    def __enter__(self: S) -> S:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def transaction(self) -> Tx:
        return Tx(self.db)


class Tx:
    """`with state.transaction():` groups writes so they land together or not at all."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self.db.execute("COMMIT" if exc_type is None else "ROLLBACK")
