"""How a processed document is stored in the run state between the per-document
stages and the final write: compressed JSON (portable, inspectable with sqlite3 +
zlib), plus a small summary the corpus-wide steps read without the words.

Why orjson and zlib level 1: `json.dumps` and level-3 zlib were a fifth of the
per-document stage on one core; orjson writes the same JSON values ~6x faster and
level 1 compresses as small on these payloads (3.4 MB for the 18 readable corpus
documents either way). The bytes are still zlib'd JSON, so a run state written by the
earlier encoder decodes unchanged (tests/test_codec.py). Arrow IPC measured a little
faster again but would have made old run states unreadable (docs/performance.md).
"""

from __future__ import annotations

import zlib
from typing import Any

import orjson

from ..records import ProcessedDoc

LEVEL = 1


def encode(p: ProcessedDoc) -> bytes:
    return zlib.compress(orjson.dumps(p.to_json()), LEVEL)


def decode(payload: bytes) -> ProcessedDoc:
    return ProcessedDoc.from_json(orjson.loads(zlib.decompress(payload)))


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
