"""Vertical writing and sideways text, laid out in their reading frame (issue 41, item 16;
docs/layout-groups.md "Vertical pages").

The inputs are one-page PDFs written here by hand: vertical CJK set with a vertical CMap
(`UniJIS-UCS2-V`, `UniKS-UCS2-V`: Poppler's own data, the font not embedded, as pdftotext
needs only the CMap and the default metrics), and one table in Helvetica, upright on a
landscape page, set sideways on a portrait page (turned either way, no /Rotate), and on
pages whose /Rotate stands it upright or shows it sideways. What must hold: vertical
columns read right to left, each top to bottom, one line a column; the sideways table is
the upright one's `table` with the same blocks and order; every box is Poppler's.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from loralay_build.group import group_layout
from loralay_build.group.labels import group_and_label
from loralay_build.labels import LABELS
from loralay_build.pdftext import extract_document
from loralay_build.records import Document

HELVETICA = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
LANDSCAPE, PORTRAIT = (842, 595), (595, 842)
# the table's content turned onto a portrait page: counter-clockwise (its lines run bottom
# to top, as `\rotatebox{90}` and `sidewaystable` set them) or clockwise (top to bottom)
COUNTER_CLOCKWISE = b"0 1 -1 0 595 0 cm"
CLOCKWISE = b"0 -1 1 0 0 842 cm"
ROWS = [["System", "Accuracy", "Recall", "Precision", "F1", "Time"]] + [
    [f"Model {chr(65 + i)}", f"{80 + i}.{i}", f"{70 + 2 * i}.5", f"{60 + i}.25",
     f"{0.5 + i / 20:.2f}", f"{12 + 3 * i}"] for i in range(8)]
# Natsume Soseki's first lines, one column each (Japanese has no spaces)
JAPANESE = ["吾輩は猫である。", "名前はまだ無い。", "どこで生れたか", "とんと見当がつかぬ。",
            "何でも薄暗い", "じめじめした所で", "ニャーニャー泣いて", "いた事だけは記憶"]
# Korean sets spaces: several words a column, the sense read from them
KOREAN = ["대한민국 헌법 전문", "유구한 역사와 전통에", "빛나는 우리 대한국민은",
          "기미 삼일운동으로", "건립된 대한민국", "임시정부의 법통과"]


def pdf(content: bytes, font: bytes, size: tuple[int, int], rotate: int = 0,
        cid: bytes | None = None) -> bytes:
    """A one-page PDF: `content` with font /F1 (`font`; a Type0 font's descendant `cid`)."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>",
               b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %d %d] /Rotate %d "
               b"/Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>"
               % (*size, rotate),
               b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content),
               font]
    if cid is not None:
        objects.append(cid)
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1, xref)
    return bytes(out)


def vertical_cjk(path: Path, columns: list[str], cmap: str, ordering: str) -> Path:
    """`columns` in vertical writing, 20 pt, from the right edge leftwards."""
    font = (b"<< /Type /Font /Subtype /Type0 /BaseFont /Vertical /Encoding /%s "
            b"/DescendantFonts [6 0 R] >>" % cmap.encode())
    cid = (b"<< /Type /Font /Subtype /CIDFontType0 /BaseFont /Vertical /CIDSystemInfo "
           b"<< /Registry (Adobe) /Ordering (%s) /Supplement 0 >> /DW 1000 "
           b"/FontDescriptor << /Type /FontDescriptor /FontName /Vertical /Flags 4 "
           b"/FontBBox [0 -120 1000 880] /ItalicAngle 0 /Ascent 880 /Descent -120 "
           b"/CapHeight 700 /StemV 80 >> >>" % ordering.encode())
    ops = [b"BT /F1 20 Tf"]
    for k, text in enumerate(columns):
        ops.append(b"1 0 0 1 %d 750 Tm <%s> Tj"
                   % (500 - 30 * k, text.encode("utf-16-be").hex().encode()))
    ops.append(b"ET")
    path.write_bytes(pdf(b"\n".join(ops), font, PORTRAIT, cid=cid))
    return path


def table(path: Path, size: tuple[int, int], turn: bytes = b"", rotate: int = 0) -> Path:
    """A caption and a table of 9 rows and 6 columns, laid out on a landscape page and
    drawn through `turn` (a `cm`) on a page of `size` with /Rotate `rotate`."""
    ops = [b"BT /F1 10 Tf 1 0 0 1 72 520 Tm "
           b"(Table 1: Scores of the five systems on the three test sets.) Tj ET"]
    for r, row in enumerate(ROWS):
        for x, cell in zip((72, 260, 360, 460, 560, 660), row):
            ops.append(b"BT /F1 10 Tf 1 0 0 1 %d %d Tm (%s) Tj ET"
                       % (x, 490 - 18 * r, cell.encode()))
    content = b"\n".join(ops)
    if turn:
        content = b"q " + turn + b"\n" + content + b"\nQ"
    font = HELVETICA
    path.write_bytes(pdf(content, font, size, rotate))
    return path


def extract(path: Path) -> Document:
    doc = extract_document(path, path.stem)
    assert isinstance(doc, Document), doc
    return doc


def boxes_by_word(doc: Document) -> list[tuple[str, tuple[float, ...]]]:
    return sorted(zip(doc.words, map(tuple, doc.boxes.tolist())))


def lines_of(doc: Document) -> list[str]:
    """Each line's words joined, in the document's order."""
    out: dict[int, list[str]] = {}
    for word, line in zip(doc.words, doc.line_ids):
        out.setdefault(line, []).append(word)
    return [" ".join(ws) for ws in out.values()]


def blocks_of(doc: Document) -> list[tuple[str, list[str]]]:
    """Each block's label and words, in the document's order."""
    out: dict[int, tuple[str, list[str]]] = {}
    for word, block, label in zip(doc.words, doc.block_ids, doc.labels):
        out.setdefault(block, (LABELS[label], []))[1].append(word)
    return list(out.values())


# --- vertical CJK ----------------------------------------------------------------------

@pytest.mark.parametrize("columns, cmap, ordering", [
    (JAPANESE, "UniJIS-UCS2-V", "Japan1"), (KOREAN, "UniKS-UCS2-V", "Korea1")])
def test_vertical_columns_read_right_to_left_each_top_to_bottom(tmp_path, columns, cmap,
                                                                 ordering):
    doc = extract(vertical_cjk(tmp_path / "v.pdf", columns, cmap, ordering))
    assert lines_of(doc) == columns  # Poppler's lines: one a column, right to left
    x0, y0, x1, y1 = doc.boxes.T
    assert ((y1 - y0) >= 2 * (x1 - x0)).all()  # the words stand on end
    for grouped in (group_layout(doc), group_and_label(doc)):
        assert lines_of(grouped) == columns
        assert boxes_by_word(grouped) == boxes_by_word(doc)  # Poppler's boxes, as shown
    labelled = group_and_label(doc)
    assert [words for _, words in blocks_of(labelled)] == [" ".join(columns).split()]
    assert set(LABELS[c] for c in labelled.labels) == {"paragraph"}


# --- sideways tables -------------------------------------------------------------------

@pytest.fixture(scope="module")
def upright(tmp_path_factory) -> list[tuple[str, list[str]]]:
    blocks = blocks_of(group_and_label(extract(table(tmp_path_factory.mktemp("t") / "up.pdf",
                                                     LANDSCAPE))))
    assert [label for label, _ in blocks] == ["caption", "table"]
    assert blocks[1][1][:6] == ROWS[0]  # row by row
    return blocks


@pytest.mark.parametrize("size, turn, rotate", [
    (PORTRAIT, COUNTER_CLOCKWISE, 0),  # sidewaystable: lines bottom to top
    (PORTRAIT, CLOCKWISE, 0),  # lines top to bottom
    (PORTRAIT, COUNTER_CLOCKWISE, 90),  # pdflscape: /Rotate 90 stands it upright
    (LANDSCAPE, b"", 90),  # upright as written, shown sideways
    (LANDSCAPE, b"", 270),
], ids=["ccw", "cw", "lscape", "rotate90", "rotate270"])
def test_a_sideways_table_is_the_upright_ones_table(tmp_path, upright, size, turn, rotate):
    """The same blocks, labels and order as the upright table; `groups: poppler` keeps
    Poppler's order (by columns, for a table set sideways on an upright page)."""
    doc = extract(table(tmp_path / "t.pdf", size, turn, rotate))
    labelled = group_and_label(doc)
    assert boxes_by_word(labelled) == boxes_by_word(doc)  # Poppler's, as shown
    assert blocks_of(labelled) == upright
    assert group_and_label(doc, "poppler").words == doc.words


class Unread(list):
    """Words that must not be read (the cost rule: a page without vertical text is
    decided from the lines' shapes alone)."""

    def __getitem__(self, key):
        raise AssertionError("the words of a page of upright text were read")


def test_a_page_of_upright_text_with_a_sideways_stamp_is_not_turned(tmp_path):
    """A margin stamp (arXiv's identifier, written bottom to top) and a page number are no
    evidence against a page of lines: the page keeps its frame (decided without reading a
    word), the stamp is a line of its own."""
    from loralay_build.group.geometry import summarise
    from loralay_build.group.regions import _fragments, read_frame
    from loralay_build.group.upright import reading_turns

    body = [b"BT /F1 10 Tf 1 0 0 1 72 %d Tm (%s) Tj ET"
            % (760 - 14 * k, b"This is line %d of a paragraph of upright running text." % k)
            for k in range(20)]
    stamp = b"BT /F1 20 Tf 0 1 -1 0 40 200 Tm (arXiv:2401.00001v1 [cs.CL] 1 Jan 2024) Tj ET"
    number = b"BT /F1 10 Tf 1 0 0 1 300 40 Tm (ii) Tj ET"
    font = HELVETICA
    path = tmp_path / "stamp.pdf"
    path.write_bytes(pdf(b"\n".join([*body, stamp, number]), font, PORTRAIT))
    doc = extract(path)
    boxes, sizes = read_frame(doc)
    starts, pages = _fragments(doc)
    runs = summarise(boxes, pages, starts)
    assert ((runs.y1 - runs.y0) > 2 * (runs.x1 - runs.x0)).any()  # the stamp
    assert reading_turns(boxes, runs, Unread(doc.words), len(sizes)).tolist() == [0]
    lines = lines_of(group_layout(doc))
    assert [line for line in lines if line.startswith("This")] == [
        f"This is line {k} of a paragraph of upright running text." for k in range(20)]
    assert "arXiv:2401.00001v1 [cs.CL] 1 Jan 2024" in lines and "ii" in lines


def test_a_one_word_page_is_no_vertical_page():
    """`reading_turns` on made-up lines: a page whose only tall line is "ii" (a roman page
    number) keeps its frame; two tall lettered lines turn it."""
    from loralay_build.group.geometry import summarise
    from loralay_build.group.upright import TURN_DOWNWARD, reading_turns

    boxes = np.array([[300, 40, 306, 51], [500, 72, 520, 212], [470, 72, 490, 200]], float)
    words = ["ii", "吾輩は猫である。", "名前はまだ無い。"]
    lines = summarise(boxes, np.array([1, 2, 2]), np.array([0, 1, 2]))
    assert reading_turns(boxes, lines, words, 2).tolist() == [0, TURN_DOWNWARD]


def test_a_pdflscape_page_turned_further_groups_as_the_original(tmp_path):
    """mnras-guide p. 6, a pdflscape table (/Rotate 90 stands it upright), turned a further
    90 degrees by qpdf: its text now runs bottom to top as read; its lines, blocks, order
    and labels are the original page's (before, its columns were read as sections)."""
    from .conftest import shared_path
    from .helpers.pdfs import LANDSCAPE, turned

    def page_six(pdf: Path) -> list[tuple[str, int, int, str]]:
        doc = group_and_label(extract(pdf))
        rows = [(w, line, block, LABELS[c]) for w, page, line, block, c in
                zip(doc.words, doc.word_pages, doc.line_ids, doc.block_ids, doc.labels)
                if page == 6]
        line0, block0 = rows[0][1], rows[0][2]
        return [(w, line - line0, block - block0, c) for w, line, block, c in rows]

    original = shared_path(*LANDSCAPE)
    again = turned(original, tmp_path / "r.pdf", "+90:6")
    assert page_six(again) == page_six(original)
