"""Word-per-line renderings of a Document for `loralay extract`, as whole byte blobs.

tsv keeps the original LoRaLay columns (word, x0, y0, x1, y1, page_width,
page_height, page) so old tooling still reads it, then adds line and block ids; jsonl
adds each word's block label too.

Why orjson and one blob: `json.dumps` per word was the largest Python cost of
`loralay extract --format jsonl` after parsing (docs/performance.md); orjson writes
the same JSON values (shortest float repr, UTF-8 text) without spaces after separators,
and one call over the whole document costs half of one call per row.
"""

from __future__ import annotations

from collections.abc import Callable

import orjson

from ..group.labels import labels_of
from ..labels import LABELS
from ..records import Document


def jsonl_bytes(doc: Document) -> bytes:
    """One JSON object per word: text, box, page, line, block and its block's label
    (`group/labels.py`)."""
    names = [LABELS[c] for c in labels_of(doc).tolist()]
    rows = [{"text": t, "box": b, "page": p, "line": ln, "block": k, "label": lab}
            for t, b, p, ln, k, lab in zip(doc.words, doc.boxes.tolist(), doc.word_pages,
                                           doc.line_ids, doc.block_ids, names)]
    if not rows:
        return b""
    # one orjson call for the whole document (half the CPU of one call per row, measured):
    # the array's `},{"text":` separators become line breaks; inside a JSON string a quote
    # is always escaped (`\"`), so that byte sequence can only be a separator
    return orjson.dumps(rows)[1:-1].replace(b'},{"text":', b'}\n{"text":') + b"\n"


def tsv_bytes(doc: Document) -> bytes:
    lines = []
    boxes = doc.boxes.tolist()
    for i, text in enumerate(doc.words):
        x0, y0, x1, y1 = boxes[i]
        page = doc.word_pages[i]
        w, h = doc.page_size(page)
        safe = text.replace("\t", " ")
        lines.append(f"{safe}\t{x0:g}\t{y0:g}\t{x1:g}\t{y1:g}\t{w:g}\t{h:g}\t{page}\t"
                     f"{doc.line_ids[i]}\t{doc.block_ids[i]}\n")
    return "".join(lines).encode("utf-8")


RENDERERS: dict[str, Callable[[Document], bytes]] = {"jsonl": jsonl_bytes, "tsv": tsv_bytes}
