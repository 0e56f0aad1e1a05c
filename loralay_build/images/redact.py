"""What a page image must not show: the words the build removed from the body.

The body is `doc.keep(mask)` of the extraction, so the removed words are exactly the
extraction's words missing from that subsequence: every abstract copy, and a dropped
cover page. A dropped cover page is not rendered at all (rather than shipped as a white
page): the `images` config then holds exactly the pages whose words the dataset can
carry, and its `page` values are those of `article_pages`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..records import Box, Document
from ..strip.cover import cover_page


def removed_indices(doc: Document, kept: Document) -> list[int]:
    """Indices of `doc` absent from `kept`, which is `doc.keep(mask)`: a subsequence."""
    j, removed = 0, []
    boxes, kept_boxes = doc.boxes.tolist(), kept.boxes.tolist()
    for i in range(len(doc)):
        if j < len(kept) and (doc.words[i], boxes[i], doc.word_pages[i]) == (
                kept.words[j], kept_boxes[j], kept.word_pages[j]):
            j += 1
        else:
            removed.append(i)
    return removed


@dataclass(slots=True)
class Redaction:
    """The pages to render, in order, and per page the boxes to paint white."""

    pages: list[int]
    boxes: dict[int, list[Box]] = field(default_factory=dict)


def plan_redaction(doc: Document, body: Document, drop_cover: bool) -> Redaction:
    """Every page but a dropped cover; every removed word's box on the pages kept."""
    cover = drop_cover and cover_page(doc)
    pages = [p.number for p in doc.pages if not (cover and p.number == 1)]
    out = Redaction(pages)
    for i in removed_indices(doc, body):
        x0, y0, x1, y1 = doc.boxes[i].tolist()
        out.boxes.setdefault(doc.word_pages[i], []).append((x0, y0, x1, y1))
    return out
