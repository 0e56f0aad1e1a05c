"""VILA's inputs from a built dataset: page records, I-VILA text and H-VILA groups.

VILA (allenai/VILA) trains on `{train,dev,test}-token.json`, one JSON object
`{"data": [page, ...], "labels": {...}, "files": [...]}` loaded with
`load_dataset("json", data_files=..., field="data")`. Each page holds `words`, `bbox`,
`labels`, `block_ids`, `line_ids`. What this module reproduces, and where it comes from:
- a word made only of characters in the Unicode categories VILA replaces
  (`constants.UNICODE_CATEGORIES_TO_REPLACE`, the BERT normaliser's: control, format,
  private use, surrogates, combining marks, separators, other symbols) becomes `[UNK]`:
  a tokenizer turns such a word into zero subwords and VILA's word alignment then fails;
- boxes in points follow `predictors.normalize_bbox`: inverted corners swapped, and the page
  rescaled keeping its aspect ratio only when a side exceeds 1000 (the model's 1000x1000
  canvas; embeddings stop at 1024), then truncated to int as S2-VL's `condense_dataset` does;
- block and line ids are renumbered 0, 1, ... on each page (ours are unique in the document);
- `labels` are VILA's S2-VL ids of the words' `article_labels` (`labels.VILA_NAMES`: our
  names capitalised, VILA's own spelling), the token file's `labels` maps names to ids and
  `labels.json` ids to names, as `condense_dataset` writes them;
- I-VILA (`layout_indicator.insert_layout_indicator`) puts the indicator between consecutive
  runs of equal group ids (`itertools.groupby`), never after the last run;
- H-VILA (`hierarchical_modeling`) sees the same runs as groups; chunking pages into 200
  lines or 40 blocks is the model's preprocessing, so groups are written unchunked.
The writing (files, summary) is in `vila_write.py`.
"""

from __future__ import annotations

import itertools
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..labels import label_code

UNK = "[UNK]"
# vila/constants.py UNICODE_CATEGORIES_TO_REPLACE
REPLACED_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cs", "Mn", "Zl", "Zp", "Zs", "So"})
CANVAS = 1000  # vila/constants.py MODEL_PDF_WIDTH, MODEL_PDF_HEIGHT
INDICATORS = {"BLK": "[BLK]", "SEP": "[SEP]"}
GROUPS = ("block", "line")
BBOX_MODES = ("points", "norm1000")


@dataclass(frozen=True, slots=True)
class VilaOptions:
    """`group`: which ids separate I-VILA text and make H-VILA groups; `bbox`: "points"
    (VILA's own coordinates) or "norm1000" (our 0-1000 boxes); `indicator`: BLK or SEP."""

    group: str = "block"
    bbox: str = "points"
    indicator: str = "BLK"

    def __post_init__(self) -> None:
        for name, value, allowed in (("group", self.group, GROUPS),
                                     ("bbox", self.bbox, BBOX_MODES),
                                     ("indicator", self.indicator, tuple(INDICATORS))):
            if value not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, not {value!r}")

    @property
    def token(self) -> str:
        return INDICATORS[self.indicator]


def vila_word(word: str) -> str:
    """`[UNK]` for a word VILA's `replace_unicode_tokens` would replace, else the word."""
    return UNK if all(unicodedata.category(ch) in REPLACED_CATEGORIES for ch in word) else word


def points_box(box: Sequence[float], width: float, height: float) -> list[int]:
    """`normalize_bbox`'s rule: swap inverted corners, rescale keeping the aspect ratio only
    when the page exceeds the 1000-unit canvas (factor of the larger side), then int()."""
    x0, y0, x1, y1 = (float(v) for v in box)
    x0, x1 = min(x0, x1), max(x0, x1)
    y0, y1 = min(y0, y1), max(y0, y1)
    if width > CANVAS or height > CANVAS:
        f = CANVAS / width if width > height else CANVAS / height
        x0, y0, x1, y1 = x0 * f, y0 * f, x1 * f, y1 * f
    return [int(x0), int(y0), int(x1), int(y1)]


def renumber(ids: Sequence[int]) -> list[int]:
    """0, 1, ... in order of first appearance (ids are unique per document, not per page)."""
    rank: dict[int, int] = {}
    return [rank.setdefault(i, len(rank)) for i in ids]


def plain_word(word: str, token: str) -> str:
    """VILA's `clean_text`: a body word spelling the indicator loses its brackets, so every
    indicator in the text is one that was inserted."""
    return word.replace("[", "").replace("]", "") if word in (token, *INDICATORS.values()) \
        else word


def indicator_text(words: Sequence[str], group_ids: Sequence[int], token: str) -> str:
    """Words joined by spaces, `token` between consecutive runs of equal ids, none at the end."""
    parts: list[str] = []
    for k, (_, run) in enumerate(itertools.groupby(zip(group_ids, words), key=lambda t: t[0])):
        if k:
            parts.append(token)
        parts.extend(plain_word(w, token) for _, w in run)
    return " ".join(parts)


def union_box(boxes: Sequence[Sequence[int]]) -> list[int]:
    return [min(b[0] for b in boxes), min(b[1] for b in boxes),
            max(b[2] for b in boxes), max(b[3] for b in boxes)]


def hvila_groups(words: Sequence[str], bbox: Sequence[list[int]], group_ids: Sequence[int]
                 ) -> list[dict[str, Any]]:
    """One entry per run of equal ids, in reading order, numbered like `clean_group_ids`."""
    groups = []
    runs = itertools.groupby(range(len(words)), key=lambda i: group_ids[i])
    for gid, (_, run) in enumerate(runs):
        idx = list(run)
        boxes = [bbox[i] for i in idx]
        groups.append({"group_id": gid, "words": [words[i] for i in idx],
                       "bbox_first": boxes[0], "bbox_union": union_box(boxes),
                       "word_count": len(idx)})
    return groups


def _page_indices(pages: Sequence[int]) -> dict[int, list[int]]:
    """Physical page -> its word indices, pages in reading order."""
    by_page: dict[int, list[int]] = {}
    for i, p in enumerate(pages):
        by_page.setdefault(int(p), []).append(i)
    return by_page


def page_records(row: dict[str, Any], opts: VilaOptions) -> Iterator[dict[str, Any]]:
    """One VILA page record per page that kept words, plus its `file` name and H-VILA groups
    (taken out of the record by the writer). A page with no word left is skipped, as VILA's
    `PageData.to_dict` drops empty words."""
    sizes = row["page_sizes"]
    for page, idx in _page_indices(row["article_pages"]).items():
        width, height = sizes[page - 1]
        words = [vila_word(row["article_words"][i]) for i in idx]
        if opts.bbox == "points":
            bbox = [points_box(row["article_bboxes"][i], width, height) for i in idx]
        else:
            bbox = [[int(v) for v in row["article_norm_bboxes"][i]] for i in idx]
        blocks = renumber([row["article_block_ids"][i] for i in idx])
        lines = renumber([row["article_line_ids"][i] for i in idx])
        ids = blocks if opts.group == "block" else lines
        labels = [label_code(row["article_labels"][i]) for i in idx]
        yield {"words": words, "bbox": bbox, "labels": labels, "block_ids": blocks,
               "line_ids": lines, "ivila_text": indicator_text(words, ids, opts.token),
               "file": f"{row['article_id']}-{page}",
               "groups": hvila_groups(words, bbox, ids)}


def document_text(row: dict[str, Any], opts: VilaOptions) -> str:
    """The whole document's I-VILA text: the same rule over the document's own ids (a page
    break is always a group change, since no line or block crosses a page, Poppler's or ours)."""
    ids = row["article_block_ids"] if opts.group == "block" else row["article_line_ids"]
    words = [vila_word(w) for w in row["article_words"]]
    return indicator_text(words, ids, opts.token)

