"""What produced a per-document result, so a rerun redoes exactly the stale ones.

A result depends on four things, each hashed on its own so the rerun can say *why* a
document is redone: the candidate (every field the stages or the dataset read), the
PDF's bytes (sha256), the settings the per-document stages read, and the versions of
loralay-build and Poppler. A result whose four parts equal the current ones is reused;
anything else is redone, and `internal_error` results always are (they are bugs or
missing tools, not facts about the paper).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..records import Candidate
from ..settings import DocumentSettings
from ..state import connect_shared

# the candidate fields that reach a stage or a column; pdf_path is where, not what
CANDIDATE_FIELDS = ("id", "source", "language", "abstracts", "pdf_url", "publication_date",
                    "split", "title")


def _digest(obj: Any) -> str:
    text = json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class InputPrint:
    """The four parts; equal prints mean the stored result is what a fresh run would give."""

    candidate: str
    pdf: str
    settings: str
    versions: str

    def changes(self, old: InputPrint) -> list[str]:
        return [name for name in ("candidate", "pdf", "settings", "versions")
                if getattr(self, name) != getattr(old, name)]


def candidate_print(c: Candidate) -> str:
    d = c.to_json()
    return _digest({k: d[k] for k in CANDIDATE_FIELDS})


def settings_print(s: DocumentSettings) -> tuple[str, str]:
    """The hash of the per-document settings, and their JSON (kept to name changed keys)."""
    body = s.model_dump(mode="json")
    return _digest(body), json.dumps(body, sort_keys=True)


def changed_keys(old_json: str | None, new_json: str) -> list[str]:
    if old_json is None:
        return []
    old, new = json.loads(old_json), json.loads(new_json)
    return sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))


class PdfChecksums:
    """sha256 of PDFs, cached by (path, size, mtime) in a file that `--fresh` keeps, so a
    rerun over 100k unchanged PDFs reads none of them again."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = connect_shared(path, "CREATE TABLE IF NOT EXISTS sums (path TEXT PRIMARY KEY, "
                                 "size INTEGER, mtime_ns INTEGER, sha256 TEXT NOT NULL)")

    def close(self) -> None:
        self.db.close()

    def sha256(self, pdf: str | None) -> str:
        """The file's sha256; "missing" or "not-a-file" when there is nothing to hash."""
        if not pdf:
            return "none"
        try:
            st = os.stat(pdf)
        except OSError:
            return "missing"
        if not stat.S_ISREG(st.st_mode):
            return "not-a-file"
        row = self.db.execute("SELECT size, mtime_ns, sha256 FROM sums WHERE path=?",
                              (pdf,)).fetchone()
        if row and row[0] == st.st_size and row[1] == st.st_mtime_ns:
            return str(row[2])
        digest = _hash_file(pdf)
        self.db.execute("INSERT OR REPLACE INTO sums VALUES (?,?,?,?)",
                        (pdf, st.st_size, st.st_mtime_ns, digest))
        return digest


def _hash_file(path: str) -> str:
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    except OSError:
        return "unreadable"
    return h.hexdigest()


@dataclass
class Plan:
    """Which fetched documents of this shard are (re)done, and why, in one line."""

    settings_digest: str
    settings_json: str  # kept in the state, so a later rerun can name the keys that changed
    tools: str  # tool versions, part of every document's input print
    total: int = 0
    # ids only: a Candidate (abstracts, provenance) held per document to do grew the
    # driver by ~2.8 KB a document, ~0.5 GB at arXiv-Lay's 200k (scripts/bench_scale.py)
    todo: set[str] = field(default_factory=set)
    reasons: Counter[str] = field(default_factory=Counter)

    def line(self) -> str:
        todo = len(self.todo)
        done = self.total - todo
        reasons = self.reasons
        if reasons["new"] == self.total:
            return f"starting: {self.total:,} documents to do"
        if todo == 0:
            return f"resuming: all {self.total:,} documents done; nothing to redo"
        why = ", ".join(f"{n:,} {reason}" for reason, n in reasons.most_common())
        return f"resuming: {done:,} of {self.total:,} done; {todo:,} to do, of which {why}"


def reason_for(changes: list[str], keys: list[str]) -> str:
    """One phrase per kind of change, naming settings keys when settings changed."""
    if "settings" in changes and keys:
        return "because " + ", ".join(f"`{k}`" for k in keys) + " changed"
    labels = {"candidate": "because their metadata changed", "pdf": "because their PDF changed",
              "settings": "because settings changed",
              "versions": "because loralay-build, Poppler or pdfium changed"}
    return labels[changes[0]]
