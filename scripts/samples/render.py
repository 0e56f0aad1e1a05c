"""Draw a sample `Doc` as a PDF with fpdf2: title block, abstracts, one or two columns.

fpdf2 is a `dev` dependency, imported here at the top: only `make.build` imports this
module, so the package and its data model load without it.

Lines are laid out by hand (fpdf2 splits, we place) so that a paragraph can flow from the
bottom of one column to the top of the next, which is the layout an abstract matcher must
survive. No hyphenation is ever added: justified lines only stretch the spaces, so the
text layer holds the printed words unchanged.
"""

from __future__ import annotations

import random
import zlib
from dataclasses import dataclass
from datetime import datetime, timezone

from fpdf import FPDF
from fpdf.enums import MethodReturnValue

from .model import Abstract, Block, Doc

PAGE_W, PAGE_H = 210.0, 297.0
MARGIN, TOP, BOTTOM, GUTTER = 20.0, 20.0, 270.0, 10.0
PT = 0.3528  # millimetres per point
# Fixed so that re-running the script gives the same bytes.
CREATION_DATE = datetime(2025, 1, 1, tzinfo=timezone.utc)


@dataclass(frozen=True)
class Fonts:
    body: str
    head: str
    italic: str  # style string for italic text; "" when the family has no italic face
    files: tuple[tuple[str, str, str, int], ...] = ()  # (family, style, path, index in .ttc)


class Paper(FPDF):
    """A4 page with a running head (the venue) and a page number, except on a cover page."""

    def __init__(self, doc: Doc, fonts: Fonts) -> None:
        super().__init__(format="A4")
        self.doc, self.faces = doc, fonts
        self.cover_pages = 1 if doc.hal_id else 0
        self.set_auto_page_break(False)
        self.set_margins(MARGIN, TOP, MARGIN)
        self.set_creation_date(CREATION_DATE)
        self.set_title(doc.title)
        self.set_author(doc.authors)
        self.set_lang(doc.language)
        for family, style, path, index in fonts.files:
            self.add_font(family, style, path, collection_font_number=index)

    def header(self) -> None:
        if self.page_no() <= self.cover_pages:
            return
        self.set_font(self.faces.head, "", 7.5)
        self.set_text_color(90)
        self.set_xy(MARGIN, 10)
        self.cell(PAGE_W - 2 * MARGIN, 4, self.doc.venue, align="L")
        self.set_text_color(0)

    def footer(self) -> None:
        if self.page_no() <= self.cover_pages:
            return
        self.set_font(self.faces.head, "", 8)
        self.set_xy(MARGIN, PAGE_H - 13)
        # At the right margin: a page number centred in the gutter of a two-column page
        # makes Poppler read the columns' blocks interleaved by height.
        self.cell(PAGE_W - 2 * MARGIN, 4, str(self.page_no() - self.cover_pages), align="R")


class Flow:
    """A cursor over columns and pages: where the next line goes, and when to move on."""

    def __init__(self, pdf: Paper, top: float, ncols: int = 1) -> None:
        self.pdf, self.top, self.y, self.ncols, self.col = pdf, top, top, ncols, 0

    @property
    def width(self) -> float:
        return (PAGE_W - 2 * MARGIN - (self.ncols - 1) * GUTTER) / self.ncols

    @property
    def x(self) -> float:
        return MARGIN + self.col * (self.width + GUTTER)

    def set_columns(self, ncols: int) -> None:
        self.ncols, self.col, self.top = ncols, 0, self.y

    def room(self, h: float) -> None:
        if self.y + h > BOTTOM:
            self.advance()

    def advance(self) -> None:
        if self.col + 1 < self.ncols:
            self.col += 1
        else:
            self.pdf.add_page()
            self.col, self.top = 0, TOP
        self.y = self.top

    def gap(self, h: float) -> None:
        if self.y > self.top:
            self.y += h

    def para_gap(self, h: float) -> None:
        """Space between paragraphs; none in columns, where Poppler would split blocks."""
        if self.ncols == 1:
            self.gap(h)

    def size(self, size: float) -> float:
        """Text size; in columns every text uses the body size (see `para_gap`)."""
        return self.pdf.doc.font_size if self.ncols > 1 else size

    def lines(self, txt: str, size: float, style: str = "", *, family: str = "",
              align: str = "J", indent: float = 0.0, markdown: bool = False,
              keep: bool = False) -> None:
        pdf = self.pdf
        pdf.set_font(family or pdf.faces.body, style, size)
        lh, w = size * self.pdf.doc.leading * PT, self.width - 2 * indent
        split: list[str] = pdf.multi_cell(  # type: ignore[assignment]
            w, lh, txt, dry_run=True, markdown=markdown, output=MethodReturnValue.LINES)
        if keep:  # short texts (keywords, captions) are not split across columns
            self.room(lh * len(split))
        i = 0
        while i < len(split):
            self.room(lh)
            # Whole column chunks go through multi_cell, which only justifies inner lines.
            chunk = split[i:i + max(1, int((BOTTOM - self.y + 1e-6) / lh))]
            pdf.set_xy(self.x + indent, self.y)
            drawn: list[str] = pdf.multi_cell(  # type: ignore[assignment]
                w, lh, " ".join(chunk), align=align, markdown=markdown,
                output=MethodReturnValue.LINES)
            assert len(drawn) == len(chunk), f"chunk re-wrapped: {chunk!r}"
            self.y += lh * len(chunk)
            i += len(chunk)


def title_block(flow: Flow, doc: Doc) -> None:
    f = flow.pdf.faces
    flow.y = TOP + 6
    flow.lines(doc.title, 16, "B", family=f.head, align="C")
    flow.gap(4)
    flow.lines(doc.authors, 11, align="C")
    flow.lines(doc.affiliation, 9.5, f.italic, align="C")
    flow.gap(7)


def heading(flow: Flow, txt: str, size: float = 11.5) -> None:
    size = flow.size(size)
    lh = size * flow.pdf.doc.leading * PT
    flow.gap(3)
    flow.room(lh + 3 * flow.pdf.doc.font_size * PT * flow.pdf.doc.leading)
    flow.lines(txt, size, "B", family=flow.pdf.faces.head, align="L")
    flow.para_gap(1)


def abstract(flow: Flow, ab: Abstract) -> None:
    """The label as a heading, then the paragraphs exactly as in the manifest."""
    doc = flow.pdf.doc
    indent = 8.0 if flow.ncols == 1 and not ab.at_end else 0.0
    heading(flow, ab.label, 11)
    for para in ab.text.split("\n"):
        if ab.structured:
            head, _, rest = para.partition(": ")
            flow.lines(f"**{head}:** {rest}", flow.size(doc.font_size - 0.5), indent=indent,
                       markdown=True)
        else:
            flow.lines(para, flow.size(doc.font_size - 0.5), indent=indent)
        flow.para_gap(1.2)
    if ab.keywords:
        flow.para_gap(1)
        flow.lines(ab.keywords, flow.size(doc.font_size - 1.5), flow.pdf.faces.italic,
                   indent=indent, align="L", keep=True)
    flow.gap(4)


def figure(flow: Flow, caption: str) -> None:
    """A small line chart drawn from a seed taken from the caption (no text inside)."""
    pdf, w = flow.pdf, flow.width * (0.92 if flow.ncols > 1 else 0.7)
    h = w * 0.55
    flow.gap(2)
    flow.room(h + 12)
    x0, y0 = flow.x + (flow.width - w) / 2, flow.y
    pdf.set_draw_color(0)
    pdf.set_line_width(0.3)
    pdf.line(x0, y0 + h, x0 + w, y0 + h)
    pdf.line(x0, y0, x0, y0 + h)
    rng = random.Random(zlib.crc32(caption.encode()))
    for shade in (0, 110, 170):
        pdf.set_draw_color(shade)
        level, points = rng.uniform(0.3, 0.7), []
        for i in range(25):
            level = min(0.95, max(0.05, level + rng.uniform(-0.08, 0.08)))
            points.append((x0 + 2 + i * (w - 4) / 24, y0 + h * (1 - level)))
        pdf.polyline(points)
    pdf.set_draw_color(0)
    flow.y += h + 2
    flow.lines(caption, 8.5, pdf.faces.italic, align="L")
    flow.gap(3)


def table(flow: Flow, block: Block) -> None:
    """Caption, header and rows with numbers drawn from a seed taken from the caption."""
    pdf, size = flow.pdf, 8.5
    cols = [c.strip() for c in block.extra[0].split("|")]
    rows = [r.strip() for r in block.extra[1].split(";")]
    flow.gap(2)
    flow.room(12 + 5 * (len(rows) + 1))
    flow.lines(block.text, size, "B", family=pdf.faces.head, align="L")
    pdf.set_font(pdf.faces.head, "", size)
    label_w = min(max(pdf.get_string_width(r) for r in [*rows, cols[0]]) + 3, flow.width * 0.55)
    cell_w = (flow.width - label_w) / (len(cols) - 1)
    rng = random.Random(zlib.crc32(block.text.encode()))
    rule(flow)
    table_row(flow, cols, label_w, cell_w, "B")
    rule(flow)
    for r in rows:
        scale = rng.uniform(1, 100)
        values = [f"{scale * rng.uniform(0.8, 1.2):.1f}" for _ in cols[1:]]
        table_row(flow, [r, *values], label_w, cell_w, "")
    rule(flow)
    flow.gap(4)


def table_row(flow: Flow, cells: list[str], label_w: float, cell_w: float, style: str) -> None:
    pdf = flow.pdf
    pdf.set_font(pdf.faces.head, style, 8.5)
    pdf.set_xy(flow.x, flow.y)
    pdf.cell(label_w, 5, cells[0], align="L")
    for c in cells[1:]:
        pdf.cell(cell_w, 5, c, align="R")
    flow.y += 5


def rule(flow: Flow) -> None:
    flow.pdf.set_line_width(0.2)
    flow.pdf.line(flow.x, flow.y, flow.x + flow.width, flow.y)


HAL_NOTICE_EN = (
    "HAL is a multi-disciplinary open access archive for the deposit and dissemination of "
    "scientific research documents, whether they are published or not. The documents may "
    "come from teaching and research institutions in France or abroad, or from public or "
    "private research centers.")
HAL_NOTICE_FR = (
    "L'archive ouverte pluridisciplinaire HAL, est destinée au dépôt et à la diffusion de "
    "documents scientifiques de niveau recherche, publiés ou non, émanant des établissements "
    "d'enseignement et de recherche français ou étrangers, des laboratoires publics ou privés.")


def hal_cover(flow: Flow, doc: Doc) -> None:
    """Page 1 as HAL prints it: deposit record, citation, then the bilingual notice."""
    f = flow.pdf.faces
    flow.y = 30
    flow.lines(f"HAL Id: {doc.hal_id}", 10, family=f.head, align="L")
    flow.lines(f"https://hal.science/{doc.hal_id}", 10, family=f.head, align="L")
    flow.lines("Submitted on 18 Dec 2017", 10, family=f.head, align="L")
    flow.gap(14)
    flow.lines(doc.title, 15, "B", family=f.head, align="L")
    flow.gap(4)
    flow.lines(doc.authors, 11, family=f.head, align="L")
    flow.gap(8)
    flow.lines("To cite this version:", 9.5, "B", family=f.head, align="L")
    flow.lines(f"{doc.authors}. {doc.title}. {doc.venue}. {doc.hal_id}", 9.5,
               family=f.head, align="L")
    flow.y = 200
    for notice in (HAL_NOTICE_EN, HAL_NOTICE_FR):
        flow.lines(notice, 8.5, family=f.head, align="L")
        flow.gap(4)
    flow.pdf.add_page()
    flow.y = flow.top = TOP


def render(doc: Doc, fonts: Fonts) -> bytes:
    pdf = Paper(doc, fonts)
    pdf.add_page()
    flow = Flow(pdf, TOP)
    if doc.hal_id:
        hal_cover(flow, doc)
    title_block(flow, doc)
    top = [a for a in doc.abstracts if not a.at_end]
    if doc.abstract_in_columns:
        flow.set_columns(doc.columns)
    for line in doc.front_matter:
        flow.lines(line, flow.size(doc.font_size - 1.5), pdf.faces.italic, align="L")
    flow.gap(2)
    for ab in top:
        abstract(flow, ab)
    if flow.ncols != doc.columns:
        flow.set_columns(doc.columns)
    body_blocks(flow, doc)
    for ab in doc.abstracts:
        if ab.at_end:
            abstract(flow, ab)
    return bytes(pdf.output())


def body_blocks(flow: Flow, doc: Doc) -> None:
    for block in doc.body:
        if block.kind == "h":
            heading(flow, block.text)
        elif block.kind == "fig":
            figure(flow, block.text)
        elif block.kind == "tab":
            table(flow, block)
        elif block.kind == "newpage":
            flow.col = flow.ncols - 1
            flow.advance()
        else:
            flow.lines(block.text, doc.font_size)
            flow.para_gap(1.5)
    heading(flow, doc.references_label)
    for ref in doc.references:
        flow.lines(ref, flow.size(doc.font_size - 1.5), align="L")
        flow.para_gap(1)
