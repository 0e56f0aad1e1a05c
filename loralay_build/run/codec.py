"""How a processed document is stored in the run state between the per-document
stages and the final write: compressed JSON (portable, inspectable with sqlite3 +
zlib), plus a small summary the corpus-wide steps read without the words."""

from __future__ import annotations

import json
import zlib
from typing import Any

from ..records import ProcessedDoc


def encode(p: ProcessedDoc) -> bytes:
    return zlib.compress(json.dumps(p.to_json(), ensure_ascii=False).encode("utf-8"), 3)


def decode(payload: bytes) -> ProcessedDoc:
    return ProcessedDoc.from_json(json.loads(zlib.decompress(payload)))


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
        "words_repaired": p.document.words_repaired,  # ligature codes (extract/glyphs.py)
        "words_unrepaired": p.document.words_unrepaired,  # words still holding U+FFFD
        # a list: an abstract printed twice is matched (and removed) twice
        "matches": [{"language": m.language, "distance": m.distance, "method": m.method,
                     "pages": list(m.pages)} for m in p.matches],
    }
