"""A run folder to finish and its summary, shared by the finish and corpus-step tests."""

from __future__ import annotations

import hashlib

from loralay_build.corpus.prints import doc_print
from loralay_build.machinery.ledger import DOCUMENT, Entry, Fingerprint, Ledger
from loralay_build.records import Candidate, DocSummary, Rejection
from loralay_build.runfolder import RunFolder
from loralay_build.sources import record_fetch_item
from loralay_build.store.fetch import FetchState
from loralay_build.store.shard import ShardState

FP = Fingerprint.of(candidate="c", pdf="p", settings="s", versions="v")


def summary(doc_id: str, pages: int, summary_words: int, date: str | None,
            body: str | None = None, license: str = "cc-by-4.0") -> dict:
    """A worker's summary; `body` names the text (the same name: the same words)."""
    words = [f"{body or doc_id}{k}" for k in range(80)]
    return {"id": doc_id, "source": "local", "language": "en", "publication_date": date,
            "given_split": None, "pages": pages, "article_words": 100 * pages,
            "summary_words": summary_words, "language_share": 0.9, "detected_language": "en",
            "leakage": {"en": 0.0}, "words_repaired": 0, "words_unrepaired": 0,
            "label_words": {}, "dropped_by_label": 0, "ocr_pages": 0, "ocr_seconds": 0.0,
            "matches": [], "license": license,
            "print": doc_print(words).to_str(),
            "pdf_sha256": hashlib.sha256(doc_id.encode()).hexdigest()}


def make_run(tmp_path, docs: list[dict], failed: dict[str, str], fetch_drops: list[str]
             ) -> tuple[RunFolder, ShardState]:
    layout = RunFolder(tmp_path / "run")
    with FetchState(layout.fetch_db) as fstate:
        for d in docs:
            record_fetch_item(fstate, Candidate(d["id"], "local", "en", {"en": "a"}))
        for doc_id in failed:
            record_fetch_item(fstate, Candidate(doc_id, "local", "en", {"en": "a"}))
        for doc_id in fetch_drops:
            record_fetch_item(fstate, Rejection(doc_id, "local", "unavailable", "no file"))
    shard = ShardState(layout.shard_db(0, 1))
    ledger = Ledger(shard, DOCUMENT)
    with shard.transaction():
        for d in docs:
            shard.put_document(d["id"], DocSummary.from_json(d), b"")
            ledger.put(Entry(d["id"], FP))
        for doc_id, cls in failed.items():
            ledger.put(Entry(doc_id, FP, cls, "extract", f"it is {cls}"))
    return layout, shard
