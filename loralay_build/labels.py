"""The layout labels' one vocabulary: VILA's S2-VL categories, their ids and names.

Why here, in the foundation: the grouping rules give the codes, the writer stores them (as
a `ClassLabel`, so `datasets` and the Hub show the map), the VILA export, `show`, the
report and the detector read them; each used to import the names from the 860-line rule
module. The index is VILA's label id (its `datasets/s2-vl-utils/config.json`,
`selected_categories` in order, numbered with `enumerate` by `condense_dataset`); our
names are VILA's in lower case, the VILA export writes VILA's own capitalisation.
"""

from __future__ import annotations

from enum import Enum


class Label(str, Enum):
    """A block's category; its position is its id (`CODE`)."""

    TITLE = "title"
    AUTHOR = "author"
    ABSTRACT = "abstract"
    KEYWORDS = "keywords"
    SECTION = "section"
    PARAGRAPH = "paragraph"
    LIST = "list"
    BIBLIOGRAPHY = "bibliography"
    EQUATION = "equation"
    ALGORITHM = "algorithm"
    FIGURE = "figure"
    TABLE = "table"
    CAPTION = "caption"
    HEADER = "header"
    FOOTER = "footer"
    FOOTNOTE = "footnote"


LABELS: tuple[str, ...] = tuple(label.value for label in Label)
CODE: dict[str, int] = {name: k for k, name in enumerate(LABELS)}
# the VILA export's names (`labels.json`, `token.json`'s map): the same ids
VILA_NAMES: tuple[str, ...] = tuple(name.capitalize() for name in LABELS)


def label_code(value: int | str) -> int:
    """A stored label as its id: datasets written since the ClassLabel column hold ids,
    older ones the lower-case names; both read the same."""
    if isinstance(value, str):
        return CODE[value]
    if not 0 <= value < len(LABELS):
        raise ValueError(f"label id {value} is not one of 0..{len(LABELS) - 1}")
    return int(value)


def label_name(value: int | str) -> str:
    """A stored label (id or name) as its lower-case name."""
    return LABELS[label_code(value)]
