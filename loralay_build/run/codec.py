"""How a processed document was stored in the run state before the columnar payload
(`columns_payload.py`, what the per-document stage writes now), still decoded so that a
resumed build keeps what it stored; and the small summary the corpus-wide steps read
without the words.

Why orjson and zstd: `json.dumps` and level-3 zlib were a fifth of the per-document
stage on one core; orjson writes the same JSON values ~6x faster, and zstd level 1
(Arrow's codec, already a dependency) compresses ~3.5x faster than zlib level 1 and
smaller. A payload is `MAGIC`, the JSON's length (8 bytes, little-endian), then the zstd
frame. A run state written by the earlier encoder (zlib'd JSON, whose first byte is
0x78, never `MAGIC`'s) still decodes, so a resumed build keeps what it stored
(tests/test_codec.py). The columnar payload replaced it because the finish then builds
each Parquet row from Arrow arrays with no Python object per word (docs/performance.md).
"""

from __future__ import annotations

import zlib
from typing import Any

import orjson
import pyarrow as pa

from ..records import ProcessedDoc
from . import columns_payload

MAGIC = b"LZS1"
_ZSTD = pa.Codec("zstd", compression_level=1)


def encode(p: ProcessedDoc) -> bytes:
    body = orjson.dumps(p.to_json())
    return MAGIC + len(body).to_bytes(8, "little") + _ZSTD.compress(body, asbytes=True)


def decode(payload: bytes) -> ProcessedDoc:
    if columns_payload.is_columnar(payload):  # word columns as Arrow (finish2)
        return columns_payload.decode(payload)
    if payload[:4] == MAGIC:
        size = int.from_bytes(payload[4:12], "little")
        body = _ZSTD.decompress(payload[12:], decompressed_size=size, asbytes=True)
    else:  # written before zstd: zlib'd JSON
        body = zlib.decompress(payload)
    return ProcessedDoc.from_json(orjson.loads(body))


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
