"""Word-per-line renderings of a Document for `loralay extract`.

tsv keeps the original LoRaLay columns (word, x0, y0, x1, y1, page_width,
page_height, page) so old tooling still reads it, then adds line and block ids.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from ..records import Document


def jsonl_lines(doc: Document) -> Iterator[str]:
    for i, text in enumerate(doc.words):
        x0, y0, x1, y1 = doc.boxes[i]
        yield json.dumps({"text": text, "box": [x0, y0, x1, y1], "page": doc.word_pages[i],
                          "line": doc.line_ids[i], "block": doc.block_ids[i]},
                         ensure_ascii=False)


def tsv_lines(doc: Document) -> Iterator[str]:
    for i, text in enumerate(doc.words):
        x0, y0, x1, y1 = doc.boxes[i]
        page = doc.word_pages[i]
        w, h = doc.page_size(page)
        safe = text.replace("\t", " ")
        yield (f"{safe}\t{x0:g}\t{y0:g}\t{x1:g}\t{y1:g}\t{w:g}\t{h:g}\t{page}\t"
               f"{doc.line_ids[i]}\t{doc.block_ids[i]}")


RENDERERS = {"jsonl": jsonl_lines, "tsv": tsv_lines}
