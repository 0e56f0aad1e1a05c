"""The sample documents as data: one YAML file per document, read into typed records.

A text is written once and both printed in the PDF and stored in the manifest, so the
manifest's abstract is exactly the printed text. Texts live in `data/sample/texts/<id>.yaml`
(not in Python) so that editing a sentence needs no code review and no `sys.path` tricks;
this module only reads them. Every text was written for this project; none is taken from
a paper.

A file holds the `Doc` fields except `id` (the file name) as plain YAML. Three kinds of
field are written in a small markup, in literal blocks (`|`) wrapped freely, because
paragraphs are separated by blank lines and each one is joined back to one line:

- an abstract's `text`: paragraphs, stored in the manifest joined with a newline;
- `references`: one reference per paragraph;
- `body`: paragraphs, plus `# heading`, `!fig caption`, `!tab caption | col | col :: row ;
  row` and `!newpage` (appendices that start on a new page, as in many journals).
"""

from __future__ import annotations

import dataclasses
import datetime
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ORDER_FILE = "order.txt"  # the manifest's order: ids, one a line; `#` starts a comment


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


class SampleTextError(ValueError):
    """A text file that does not describe a document; the message names the file."""


def paras(src: str) -> list[str]:
    """Blank-line separated paragraphs, each joined to one line (source wrapping is free)."""
    return [" ".join(chunk.split()) for chunk in textwrap.dedent(src).strip().split("\n\n")]


def text(src: str) -> str:
    """An abstract as the manifest stores it: paragraphs joined with a newline."""
    return "\n".join(paras(src))


def refs(src: str) -> tuple[str, ...]:
    return tuple(paras(src))


def body(src: str) -> tuple[Block, ...]:
    """Parse the body markup (see the module docstring) into blocks."""
    return tuple(_block(p) for p in paras(src))


def _block(p: str) -> Block:
    if p == "!newpage":
        return Block("newpage", "")
    if p.startswith("# "):
        return Block("h", p[2:])
    if p.startswith("!fig "):
        return Block("fig", p[5:])
    if p.startswith("!tab "):
        caption, _, spec = p[5:].partition(" | ")
        cols, _, rows = spec.partition(" :: ")
        return Block("tab", caption, (cols, rows))
    return Block("p", p)


def _fields(cls: type, data: dict[str, Any], where: str) -> None:
    """Unknown or missing keys are errors: a typo must not fall back to a default."""
    names = {f.name for f in dataclasses.fields(cls)} - {"id"}
    required = {f.name for f in dataclasses.fields(cls)
                if f.default is dataclasses.MISSING} - {"id"}
    if unknown := set(data) - names:
        raise SampleTextError(f"{where}: unknown key(s) {sorted(unknown)}")
    if missing := required - set(data):
        raise SampleTextError(f"{where}: missing key(s) {sorted(missing)}")


def _abstract(data: dict[str, Any], where: str) -> Abstract:
    _fields(Abstract, data, where)
    return Abstract(**{**data, "text": text(data["text"])})


def doc_from_dict(doc_id: str, data: dict[str, Any], where: str = "") -> Doc:
    """A `Doc` from one parsed file; `where` names the file in error messages."""
    where = where or doc_id
    if not isinstance(data, dict):
        raise SampleTextError(f"{where}: expected a mapping of document fields")
    _fields(Doc, data, where)
    abstracts = tuple(_abstract(a, f"{where}: abstract {i + 1}")
                      for i, a in enumerate(data["abstracts"]))
    return Doc(**{**data, "id": doc_id, "date": _date(data["date"]), "abstracts": abstracts,
                  "body": body(data["body"]), "references": refs(data["references"]),
                  "front_matter": tuple(data.get("front_matter", ()))})


def _date(value: Any) -> str | None:
    """YAML reads an unquoted 2019-06-14 as a date; the manifest wants the string."""
    return value.isoformat() if isinstance(value, datetime.date) else value


def load_doc(path: Path) -> Doc:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return doc_from_dict(path.stem, data, str(path))


def read_order(texts: Path) -> list[str]:
    lines = (ln.split("#", 1)[0].strip()
             for ln in (texts / ORDER_FILE).read_text(encoding="utf-8").splitlines())
    return [ln for ln in lines if ln]


def load_docs(texts: Path) -> list[Doc]:
    """Every document in `order.txt`'s order; a text file it does not list is an error,
    since it would silently be left out of the corpus."""
    order = read_order(texts)
    on_disk = {p.stem for p in texts.glob("*.yaml")}
    if unlisted := on_disk - set(order):
        raise SampleTextError(f"{texts / ORDER_FILE}: does not list {sorted(unlisted)}")
    if absent := [i for i in order if i not in on_disk]:
        raise SampleTextError(f"{texts / ORDER_FILE}: no file for {absent}")
    return [load_doc(texts / f"{doc_id}.yaml") for doc_id in order]
