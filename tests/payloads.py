"""Test-only reading of the run state's document payload as Python lists (the package reads
it only as Arrow columns: `pdf/payload.py` `read_columns`)."""

from __future__ import annotations

from loralay_build.pdf.payload import read
from loralay_build.records import WORD_COLUMNS, AbstractMatch, Candidate, Document, ProcessedDoc


def decode(payload: bytes) -> ProcessedDoc:
    """The whole document, as `ProcessedDoc.from_json` would give it."""
    meta, b = read(payload)
    doc = meta["document"]
    doc["words"] = b.column(0).to_pylist()
    doc["boxes"] = b.column(1).flatten().to_numpy()
    for i, key in enumerate(WORD_COLUMNS[2:], start=2):
        doc[key] = b.column(i).to_pylist()
    return ProcessedDoc(Candidate.from_json(meta["candidate"]), Document.from_json(doc),
                        [AbstractMatch.from_json(m) for m in meta["matches"]],
                        meta["language_share"], meta["detected_language"], meta["leakage"])


def fields(p: ProcessedDoc) -> tuple:
    d = p.document
    return (p.candidate, d.id, d.pages, d.words, d.boxes.tolist(), d.word_pages, d.line_ids,
            d.block_ids, d.dropped_invisible, d.words_repaired, d.words_unrepaired,
            p.matches, p.language_share, p.detected_language, p.leakage)
