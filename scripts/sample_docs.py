"""Model of the sample corpus documents and the small markup their texts are written in.

The texts are plain strings so that what is drawn in the PDF and what the manifest calls
the abstract come from one source: the manifest's abstract is exactly the printed text.
Every text in the sample corpus was written for this project; none is taken from a paper.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass


@dataclass(frozen=True)
class Abstract:
    lang: str
    label: str
    text: str  # paragraphs joined with "\n", as in the manifest
    keywords: str = ""  # printed under the abstract; not part of it
    structured: bool = False  # each paragraph starts with a run-in "Section:" title
    at_end: bool = False  # printed after the references, as some theses and HAL papers do


@dataclass(frozen=True)
class Block:
    kind: str  # "h" heading, "p" paragraph, "fig" figure, "tab" table, "newpage"
    text: str
    extra: tuple[str, ...] = ()  # table: (column headers, row labels), " | "/" ; " separated


@dataclass(frozen=True)
class Doc:
    id: str
    language: str
    kind: str
    title: str
    authors: str
    affiliation: str
    venue: str
    date: str | None
    abstracts: tuple[Abstract, ...]
    body: tuple[Block, ...]
    references: tuple[str, ...]
    notes: str
    references_label: str = "References"
    columns: int = 1
    abstract_in_columns: bool = False  # the abstract flows in the columns, so it can break
    front_matter: tuple[str, ...] = ()  # article history etc., printed before the abstract
    hal_id: str = ""  # non-empty: a HAL cover page is printed as page 1
    font_size: float = 10.5
    leading: float = 1.45  # line height as a multiple of the font size


def paras(src: str) -> list[str]:
    """Blank-line separated paragraphs, each joined to one line (source wrapping is free)."""
    return [" ".join(chunk.split()) for chunk in textwrap.dedent(src).strip().split("\n\n")]


def text(src: str) -> str:
    """An abstract as the manifest stores it: paragraphs joined with a newline."""
    return "\n".join(paras(src))


def refs(src: str) -> tuple[str, ...]:
    return tuple(paras(src))


def body(src: str) -> tuple[Block, ...]:
    """Parse the body markup: `# heading`, `!fig caption`, `!tab caption | cols :: rows`,
    `!newpage` (appendices start on a new page, as in many journals)."""
    blocks: list[Block] = []
    for p in paras(src):
        if p == "!newpage":
            blocks.append(Block("newpage", ""))
        elif p.startswith("# "):
            blocks.append(Block("h", p[2:]))
        elif p.startswith("!fig "):
            blocks.append(Block("fig", p[5:]))
        elif p.startswith("!tab "):
            caption, _, spec = p[5:].partition(" | ")
            cols, _, rows = spec.partition(" :: ")
            blocks.append(Block("tab", caption, (cols, rows)))
        else:
            blocks.append(Block("p", p))
    return tuple(blocks)


def all_docs() -> list[Doc]:
    """Every sample document, readable ones first; imported late to avoid an import cycle."""
    import sample_texts_en
    import sample_texts_fr_es
    import sample_texts_pt_ko

    return [*sample_texts_en.DOCS, *sample_texts_fr_es.DOCS, *sample_texts_pt_ko.DOCS]
