"""The one internal record both S2ORC formats are read into.

Why one record: every later step (sections, sentences, the one-citation rule, ROUGE, REF,
split) sees only these fields, so the same papers in either format give the same dataset.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Span:
    """A citation in a paragraph: [start, end) of the paragraph's text.

    `ref` names the bibliography entry (None when the parser found none: still a citation,
    of an unknown paper); `cited_id` is the cited paper's S2 id when the entry is linked.
    """

    start: int
    end: int
    ref: str | None
    cited_id: str | None


@dataclass(frozen=True, slots=True)
class Paragraph:
    """`sections`: the headers the paragraph lies under, outermost first (the 2020 release
    gives only the innermost one; the Datasets API's numbered headers give the nesting)."""

    sections: tuple[str, ...]
    text: str
    spans: tuple[Span, ...]

    @property
    def section(self) -> str:
        return self.sections[-1] if self.sections else ""


@dataclass(frozen=True, slots=True)
class CitingPaper:
    paper_id: str
    paragraphs: tuple[Paragraph, ...]


@dataclass(slots=True)
class CitedPaper:
    """What the dataset shows of a cited paper; filled from abstracts and metadata shards."""

    paper_id: str
    abstract: str | None = None
    title: str | None = None
    venue: str | None = None
    journal: str | None = None
    fields: list[str] = field(default_factory=list)

    def merge(self, other: CitedPaper) -> None:
        """The first non-empty value of each field wins (shards are read in sorted order)."""
        for name in ("abstract", "title", "venue", "journal"):
            if not getattr(self, name) and getattr(other, name):
                setattr(self, name, getattr(other, name))
        if not self.fields and other.fields:
            self.fields = list(other.fields)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> CitedPaper:
        return cls(**obj)


def text_or_none(value: Any) -> str | None:
    """A string field as the dataset stores it: stripped, empty as None."""
    if not isinstance(value, str):
        return None
    value = value.strip()
    return value or None
