"""How a processed document is stored in the run state between the per-document
stages and the final write: compressed JSON (portable, inspectable with sqlite3 +
zlib), plus a small summary the corpus-wide steps read without the words."""

from __future__ import annotations

import json
import zlib
from typing import Any

from ..records import AbstractMatch, Candidate, Document, Page, ProcessedDoc


def encode(p: ProcessedDoc) -> bytes:
    d = p.document
    body = {
        "candidate": p.candidate.to_json(),
        "pages": [[pg.number, pg.width, pg.height] for pg in d.pages],
        "words": d.words,
        "boxes": [c for box in d.boxes for c in box],
        "word_pages": d.word_pages,
        "line_ids": d.line_ids,
        "block_ids": d.block_ids,
        "dropped_invisible": d.dropped_invisible,
        "matches": [[m.language, m.start, m.end, m.distance, m.method, list(m.pages)]
                    for m in p.matches],
        "language_share": p.language_share,
        "detected_language": p.detected_language,
        "leakage": p.leakage,
    }
    return zlib.compress(json.dumps(body, ensure_ascii=False).encode("utf-8"), 3)


def decode(payload: bytes) -> ProcessedDoc:
    b = json.loads(zlib.decompress(payload))
    flat = b["boxes"]
    doc = Document(
        id=b["candidate"]["id"],
        pages=[Page(int(n), float(w), float(h)) for n, w, h in b["pages"]],
        words=b["words"],
        boxes=[tuple(flat[i:i + 4]) for i in range(0, len(flat), 4)],  # type: ignore[misc]
        word_pages=b["word_pages"],
        line_ids=b["line_ids"],
        block_ids=b["block_ids"],
        dropped_invisible=b["dropped_invisible"],
    )
    matches = [AbstractMatch(lang, s, e, dist, method, tuple(pages))
               for lang, s, e, dist, method, pages in b["matches"]]
    return ProcessedDoc(Candidate.from_json(b["candidate"]), doc, matches,
                        b["language_share"], b["detected_language"], b["leakage"])


def summarize(p: ProcessedDoc) -> dict[str, Any]:
    """What percentiles, splits and the report need, without the words."""
    c = p.candidate
    return {
        "id": c.id,
        "source": c.source,
        "language": c.language,
        "publication_date": c.publication_date,
        "given_split": c.split,
        "pages": p.num_pages,
        "article_words": len(p.document.words),
        "summary_words": p.summary_words,
        "language_share": p.language_share,
        "detected_language": p.detected_language,
        "leakage": p.leakage,
        # a list: an abstract printed twice is matched (and removed) twice
        "matches": [{"language": m.language, "distance": m.distance, "method": m.method,
                     "pages": list(m.pages)} for m in p.matches],
    }
