"""The layout-group stage (loralay_build/group, issue 26): visual lines and blocks from the
words' geometry. Small unit tests of each rule on made-up pages, then the real thing
(`needs_shared`, the slow tier): the floor goals on the ground truth in ../shared/layout
and the tagged corpus PDFs, the words kept exactly, ids and contiguity, output identical
across PYTHONHASHSEED values, and (`perf`) the cost against extraction."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from functools import cache
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from loralay_build.group import GROUPINGS, group_layout, poppler_groups, regroup
from loralay_build.group.geometry import Groups
from loralay_build.group.labels import group_and_label
from loralay_build.records import Document, Page

from .conftest import REPO, shared_path
from .helpers.pages import FULL, PageBuilder, paragraph


def _runs(words: list[str], ids: list[int]) -> list[list[str]]:
    """The words of each run of equal ids, in order."""
    out: list[list[str]] = []
    last = None
    for word, group in zip(words, ids):
        if group != last:
            out.append([])
            last = group
        out[-1].append(word)
    return out


def groups_of(doc: Document) -> list[list[str]]:
    """The blocks' texts in output order."""
    return _runs(doc.words, doc.block_ids)


def lines_of(doc: Document) -> list[str]:
    return [" ".join(x) for x in _runs(doc.words, doc.line_ids)]


def assert_well_formed(before: Document, after: Document) -> None:
    """Same (word, box, page) multiset; ids from 0, rising by at most one, pages too; each
    block and line contiguous; a line within one block; counters kept."""
    def multiset(d: Document) -> list[tuple]:
        return sorted(zip(d.words, map(tuple, d.boxes.tolist()), d.word_pages))

    assert multiset(before) == multiset(after)
    assert after.id == before.id and after.pages == before.pages
    assert (after.dropped_invisible, after.words_repaired, after.words_unrepaired) == (
        before.dropped_invisible, before.words_repaired, before.words_unrepaired)
    assert after.raw_broken == {}
    for col in (after.line_ids, after.block_ids):
        steps = np.diff(np.asarray(col))
        assert not len(col) or col[0] == 0
        assert set(steps.tolist()) <= {0, 1}
    assert (np.diff(np.asarray(after.word_pages)) >= 0).all()
    line_to_block: dict[int, int] = {}
    for line, block in zip(after.line_ids, after.block_ids):
        assert line_to_block.setdefault(line, block) == block
    pages_of_block: dict[int, set[int]] = {}
    for page, block in zip(after.word_pages, after.block_ids):
        pages_of_block.setdefault(block, set()).add(page)
    assert all(len(p) == 1 for p in pages_of_block.values())


# ---------------------------------------------------------------- the rules, one by one

def test_a_justified_line_poppler_cut_in_three_is_one_line():
    b = PageBuilder()
    # Poppler's three "lines" on one baseline, each its own block, read column-wise
    y = 100.0
    for row in range(3):
        b.line(72, y + 12 * row, "alpha beta gamma", block=0)
    for row in range(3):
        b.line(166, y + 12 * row, "delta epsilon", block=1)
    for row in range(3):
        b.line(250, y + 12 * row, "zeta eta theta iota", block=2)
    doc = b.doc()
    out = group_layout(doc)
    assert_well_formed(doc, out)
    assert lines_of(out) == ["alpha beta gamma delta epsilon zeta eta theta iota"] * 3
    assert len(groups_of(out)) == 1


def test_two_columns_on_shared_baselines_stay_apart():
    b = PageBuilder()
    col = "aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kk"  # 248pt
    for row in range(12):  # Poppler joined each left and right line (the worst case)
        y = 100 + 12 * row
        end = b.line(54, y, col, block=0)
        b.line(end + 14, y, col, block=0)
        b.lines[-1] = b.lines[-12]  # one Poppler line across the gutter
    doc = b.doc()
    out = group_layout(doc)
    assert_well_formed(doc, out)
    assert lines_of(out) == [col] * 24
    blocks = groups_of(out)
    assert len(blocks) == 2 and all(len(g) == 12 * 11 for g in blocks)


def test_a_table_row_keeps_its_number_across_a_wide_gap():
    b = PageBuilder()
    items = ["publishes the minutes of meetings", "a register of interests",
             "keeps its budgets and accounts online for anyone", "the agenda",
             "answers requests within one month of receipt", "its contracts"]
    for row, text in enumerate(items):  # a table's text cells end where they end
        y = 100 + 14 * row
        b.line(72, y, f"item {row} {text}", block=0)
        b.line(480, y, f"{row}4,5", block=1)
    doc = b.doc()
    out = group_layout(doc)
    assert lines_of(out)[0] == "item 0 publishes the minutes of meetings 04,5"
    assert len(lines_of(out)) == 6


def test_first_line_indents_part_paragraphs_set_without_space():
    b = PageBuilder()
    y = 100.0
    for k in range(3):  # each paragraph's last line is full too: only the indent tells
        b.justified(90, 470, y, f"first{k} " + FULL[:60], block=0)
        b.justified(72, 470, y + 12, FULL, block=0)
        b.justified(72, 470, y + 24, FULL, block=0)
        y += 36
    out = group_layout(b.doc())
    blocks = groups_of(out)
    assert len(blocks) == 3
    assert [g[0] for g in blocks] == ["first0", "first1", "first2"]


def test_a_short_last_line_ends_a_paragraph_without_indent():
    b = PageBuilder()
    paragraph(b, 72, 100, [FULL, FULL, "the end."])
    paragraph(b, 72, 136, [FULL, "closing words here."])
    b.blocks = [0] * len(b.blocks)  # Poppler: one block for the column
    out = group_layout(b.doc())
    assert [len(g) for g in groups_of(out)] == [26, 15]


def test_a_hanging_indent_list_is_one_block_per_item():
    b = PageBuilder()
    y = 100.0
    for k in range(4):  # every item ends with a full line: only the hanging indent tells
        b.justified(72, 470, y, f"[{k}] " + FULL[:60], block=0)
        b.justified(90, 470, y + 12, FULL, block=0)
        b.justified(90, 470, y + 24, FULL, block=0)
        y += 36
    out = group_layout(b.doc())
    blocks = groups_of(out)
    assert [g[0] for g in blocks] == ["[0]", "[1]", "[2]", "[3]"]


def test_a_heading_in_a_larger_size_is_its_own_block():
    b = PageBuilder()
    b.line(72, 100, "Introduction", size=14, block=0)
    paragraph(b, 72, 118, [FULL, FULL, FULL])
    b.blocks = [0] * len(b.blocks)
    out = group_layout(b.doc())
    assert groups_of(out)[0] == ["Introduction"]
    assert len(groups_of(out)) == 2


def test_a_wider_space_between_lines_parts_paragraphs():
    b = PageBuilder()
    y = paragraph(b, 72, 100, [FULL, FULL])
    paragraph(b, 72, y + 10, [FULL, FULL])
    b.blocks = [0] * len(b.blocks)
    out = group_layout(b.doc())
    assert len(groups_of(out)) == 2


def test_a_superscript_label_joins_the_line_it_labels():
    b = PageBuilder()
    b.line(72, 98, "19", size=7, block=0)
    b.line(86, 100, FULL, block=1)
    b.line(86, 112, FULL[:200], block=1)
    out = group_layout(b.doc())
    assert lines_of(out)[0].startswith("19 lorem")
    assert len(groups_of(out)) == 1


def test_interleaved_blocks_are_reordered_block_by_block():
    b = PageBuilder()
    paragraph(b, 72, 100, ["one two three four five six seven eight nine ten eleven",
                           "twelve thirteen fourteen fifteen sixteen seventeen end."])
    paragraph(b, 72, 140, ["uno dos tres cuatro cinco seis siete ocho nueve diez once",
                           "doce trece catorce quince dieciseis diecisiete fin."])
    n = len(b.words)
    first_lines = [i for i in range(n) if b.lines[i] in (0, 2)]
    second_lines = [i for i in range(n) if b.lines[i] in (1, 3)]
    doc = b.doc(first_lines + second_lines)  # Poppler read both first lines, then both second
    out = group_layout(doc)
    assert_well_formed(doc, out)
    blocks = groups_of(out)
    assert len(blocks) == 2
    assert blocks[0][0] == "one" and blocks[0][-1] == "end."
    assert blocks[1][0] == "uno" and blocks[1][-1] == "fin."


def test_a_short_line_beside_the_other_column_stays_in_its_column():
    b = PageBuilder()
    col = "aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kk"  # 248pt, justified columns
    for row in range(10):
        y = 100 + 12 * row
        if row == 4:
            b.line(54, y, "the end.", block=0)  # a paragraph's last line, short
        else:
            b.line(54, y, col, block=0)
        b.line(316, y, col, block=1)
    out = group_layout(b.doc())
    assert "the end." in lines_of(out)
    assert all(len(line.split()) in (2, 11) for line in lines_of(out))


def test_an_equation_number_on_the_formula_row_joins_it():
    b = PageBuilder()
    paragraph(b, 72, 100, [FULL, "so that we have"])
    b.line(230, 136, "x = y + z", block=5)
    b.line(520, 142, "(3.1)", block=6)  # on the formula's row, a little lower
    paragraph(b, 72, 170, [FULL, FULL])
    out = group_layout(b.doc())
    assert ["x", "=", "y", "+", "z", "(3.1)"] in groups_of(out)


def test_a_table_with_cell_gaps_is_one_block():
    b = PageBuilder()
    paragraph(b, 72, 80, [FULL, "as the table shows."])
    b.line(72, 120, "Country", block=2)
    b.line(200, 120, "2019", block=3)
    b.line(300, 120, "2020", block=4)
    for row, name in enumerate(["Spain", "Portugal", "Korea"]):
        y = 134 + 14 * row
        b.line(72, y, name, block=2)
        b.line(200, y, f"{row}1,5", block=3)
        b.line(300, y, f"{row}2,7", block=4)
    paragraph(b, 72, 200, [FULL, FULL])
    out = group_layout(b.doc())
    table = [g for g in groups_of(out) if "Country" in g]
    assert table == [["Country", "2019", "2020", "Spain", "01,5", "02,7", "Portugal",
                      "11,5", "12,7", "Korea", "21,5", "22,7"]]


def test_a_charts_stacked_tick_labels_are_one_block():
    b = PageBuilder()
    for k, tick in enumerate(["600", "500", "400", "300"]):
        b.line(100, 100 + 22 * k, tick, size=7)
    out = group_layout(b.doc())
    assert groups_of(out) == [["600", "500", "400", "300"]]


def test_rotated_margin_text_is_kept_apart():
    b = PageBuilder()
    paragraph(b, 72, 100, [FULL, FULL, FULL])
    b.blocks = [0] * len(b.blocks)
    line = b.lines[-1] + 1
    for k, word in enumerate(["RESPONSABILIDAD", "SOCIAL", "PUBLICA"]):
        y = 100 + 80 * k
        b.words.append(word)
        b.boxes.append((500, y, 509, y + 5 * len(word)))
        b.pages.append(1)
        b.lines.append(line)
        b.blocks.append(1)
    out = group_layout(b.doc())
    assert groups_of(out)[-1] == ["RESPONSABILIDAD", "SOCIAL", "PUBLICA"]
    assert len(groups_of(out)) == 2


# ---------------------------------------------------------------- reading order (issue 33)

COL = "aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kk"  # 248pt: a column's line


def _two_columns(b: PageBuilder, y: float, rows: int, left: str = "L", right: str = "R"
                 ) -> float:
    """Two justified columns of `rows` lines each (left x 54-302, right 316-564), every
    line's first word tagged (`L0`, `R0`, ...); Poppler reads them row by row. Returns the
    y below them."""
    for row in range(rows):
        b.line(54, y + 12 * row, f"{left}{row} " + COL[5:], block=0)
        b.line(316, y + 12 * row, f"{right}{row} " + COL[5:], block=0)
    return y + 12 * rows


def _first_words(doc: Document) -> list[str]:
    return [w for w in doc.words if w[0] in "LRF" and w[1:].isdigit()]


def test_columns_are_read_left_then_right_between_full_width_bands():
    b = PageBuilder()
    b.line(54, 60, "F0 " + FULL + " full width title band")
    y = _two_columns(b, 90, 5)
    b.line(54, y + 20, "F1 " + FULL + " a full width band between")
    _two_columns(b, y + 50, 3, "l", "r")
    out = group_layout(b.doc())
    order = [w for w in out.words if w[0] in "LRFlr" and w[1:].isdigit()]
    assert order == (["F0"] + [f"L{k}" for k in range(5)] + [f"R{k}" for k in range(5)]
                     + ["F1"] + [f"l{k}" for k in range(3)] + [f"r{k}" for k in range(3)])


def test_a_footnote_at_the_foot_of_the_left_column_is_read_after_the_right_one():
    b = PageBuilder()
    y = _two_columns(b, 90, 8)
    for k in range(2):  # small print under the left column only
        b.line(54, y + 10 + 8 * k, f"F{k} a footnote in small print here", size=7)
    out = group_layout(b.doc())
    assert _first_words(out) == ([f"L{k}" for k in range(8)] + [f"R{k}" for k in range(8)]
                                 + ["F0", "F1"])


def test_a_table_at_the_head_of_the_right_column_waits_for_the_paragraph():
    b = PageBuilder()
    for row in range(10):  # the left column: one paragraph, its last line full (open)
        b.line(54, 90 + 12 * row, f"L{row} " + COL[5:], block=0)
    for row in range(3):  # a table at the right column's head: cells 4 heights apart
        y = 90 + 14 * row
        b.line(316, y, f"T{row} item name", block=1)
        b.line(430, y, f"{row}1,5", block=2)
        b.line(500, y, f"{row}2,7", block=3)
    for row in range(6):  # the paragraph runs on, then ends; a new one follows
        text = "R5 the end." if row == 5 else f"R{row} " + COL[5:]
        b.line(316, 150 + 12 * row, text, block=4)
    b.line(330, 230, "N0 " + COL[8:], block=5)
    b.line(316, 242, "N1 " + COL[5:], block=5)
    out = group_layout(b.doc())
    blocks = groups_of(out)
    firsts = [g[0] for g in blocks]
    assert firsts[:2] == ["L0", "R0"]  # the paragraph's two halves, one after the other
    assert firsts.index("T0") == 2 and firsts[-1] == "N0"  # the table after it
    table = blocks[2]
    assert table == ["T0", "item", "name", "01,5", "02,7", "T1", "item", "name", "11,5",
                     "12,7", "T2", "item", "name", "21,5", "22,7"]


def test_the_first_cut_of_all_pages_at_once_is_each_pages_own(monkeypatch):
    """`order._PageCuts` finds every page's bands and columns at once, on page-offset keys;
    when one of its tests is too close to call, every page is cut by `order._cut`, page
    by page. Both give one output, on pages of lines set at random (columns, bands,
    regions of both, leaves)."""
    from loralay_build.group import order
    rng = np.random.default_rng(5)
    b = PageBuilder()
    for part in range(3):  # columns of paragraphs, a footnote under the left one
        y = _two_columns(b, 90, 6, f"a{part}", f"b{part}")
        _two_columns(b, y + 20, 4, f"c{part}", f"d{part}")
        b.line(54, y + 80, "F0 a footnote in small print here", size=7)
        b.new_page()
    for page in range(12):
        if page:
            b.new_page()
        for _ in range(int(rng.integers(5, 60))):
            words = " ".join(["word"] * int(rng.integers(1, 12)))
            b.line(float(rng.integers(0, 50)) * 11, float(rng.integers(0, 60)) * 12, words,
                   size=float(rng.choice([7.0, 10.0, 10.0, 10.0, 14.0])))
    doc = b.doc()
    want = group_layout(doc)
    chain_starts = order._chain_starts
    monkeypatch.setattr(order, "_chain_starts", lambda *a: (chain_starts(*a)[0], False))
    got = group_layout(doc)
    assert (got.words, got.boxes.tolist(), got.line_ids, got.block_ids) == (
        want.words, want.boxes.tolist(), want.line_ids, want.block_ids)


def _random_stretches(rng: np.random.Generator, n: int, low: float, high: float
                      ) -> list[tuple[float, float, float, float]]:
    """n random line extents (x0, x1, top, bottom) between heights low and high, on a
    coarse grid so that edges meet exactly and GUTTER apart now and then."""
    out = []
    for _ in range(n):
        x0 = float(rng.integers(0, 40)) * 5.0 + float(rng.choice([0.0, 0.5, 1.0]))
        top = float(rng.integers(int(low), int(high) - 4))
        out.append((x0, x0 + float(rng.integers(0, 12)) * 5.0, top,
                    top + float(rng.integers(1, 5))))
    return out


def test_a_band_of_one_stretch_joins_a_region_as_merging_their_stretches_would():
    """`order._joined`, the join of a region and a band when one of the two is a single
    stretch, against the merge it stands for: the merged stretches when they stand side
    by side, else None (above: the region's stretch over the band's; below: the band's
    under the region's)."""
    from loralay_build.group.order import _joined, _merged, _side_by_side
    rng = np.random.default_rng(7)
    for _ in range(3000):
        many = _merged(_random_stretches(rng, int(rng.integers(2, 7)), 0.0, 50.0))
        one = _merged(_random_stretches(rng, int(rng.integers(1, 4)), 60.0, 90.0))
        if len(one) != 1 or len(many) < 2:
            continue
        merged = _merged(many + one)
        want = merged if _side_by_side(merged) else None
        assert _joined(many, one[0], _side_by_side(many)) == want, (many, one)
        lower = [(x0, x1, top + 100.0, bottom + 100.0) for x0, x1, top, bottom in many]
        merged = _merged(lower + one)  # the one stretch now lies above the others
        want = merged if _side_by_side(merged) else None
        assert _joined(lower, one[0], False) == want, (lower, one)


def _links_by_definition(lines: Groups, fixed: np.ndarray) -> tuple[list[int], list[int]]:
    """`order.column_links` pair by pair: the free lines by (page, centre, index), and
    each line's first line there on its page, overlapping it horizontally, with its
    centre 0.5 to MAX_STEP of its height lower, when that line's last such line above
    (in its own window) is it."""
    from loralay_build.group.order import MAX_STEP
    n = len(lines)
    key = lines.page * (float(lines.y1.max()) + 1.0) + lines.mid
    ranked = sorted((i for i in range(n) if not fixed[i]), key=lambda i: (key[i], i))

    def nearest(i: int, below: bool) -> int:
        h = lines.height[i]
        lo, hi = ((key[i] + 0.5 * h, key[i] + MAX_STEP * h) if below
                  else (key[i] - MAX_STEP * h, key[i] - 0.5 * h))
        found = [j for j in ranked if lo <= key[j] <= hi and lines.page[j] == lines.page[i]
                 and min(lines.x1[i], lines.x1[j]) > max(lines.x0[i], lines.x0[j])]
        return (found[0] if below else found[-1]) if found else -1

    links = [-1] * n
    for i in ranked:
        j = nearest(i, below=True)
        if j >= 0 and nearest(j, below=False) == i:
            links[i] = j
    return links, ranked


def test_column_links_are_mutual_nearest_overlapping_lines_in_the_step_window():
    """`order.column_links` (the search down, each link checked upwards over the lines
    between) against its definition on random lines over two pages."""
    from loralay_build.group.order import column_links
    rng = np.random.default_rng(11)
    for _ in range(40):
        n = int(rng.integers(2, 60))
        x0 = rng.integers(0, 8, n) * 40.0
        y0 = rng.integers(0, 40, n) * 6.0
        height = rng.choice([8.0, 10.0, 12.0], n)
        lines = Groups(page=rng.integers(0, 2, n), x0=x0, y0=y0,
                       x1=x0 + rng.integers(1, 6, n) * 30.0, y1=y0 + height, height=height,
                       mid=y0 + height / 2, first=np.arange(n), count=np.ones(n, int))
        fixed = rng.random(n) < 0.1
        below, by_y = column_links(lines, fixed)
        assert (below.tolist(), by_y.tolist()) == _links_by_definition(lines, fixed)


def test_pages_and_ids_run_through_the_document():
    b = PageBuilder()
    paragraph(b, 72, 100, [FULL, FULL])
    paragraph(b, 72, 760, [FULL, FULL])  # at the foot of page 1 ...
    b.new_page()
    paragraph(b, 72, 10, [FULL, FULL])  # ... and the head of page 2: never one chain
    paragraph(b, 72, 100, [FULL, FULL])
    doc = b.doc()
    out = group_layout(doc)
    assert_well_formed(doc, out)
    assert out.line_ids[-1] == 7 and out.block_ids[-1] == 3
    assert [p for p, b in zip(out.word_pages, out.block_ids) if b == 1] == [1] * 24


def test_a_poppler_line_is_cut_where_its_page_changes():
    """A fragment is a run of one Poppler line id on one page, its page read at its
    ends: by the pages' own runs when the words come page by page (as extracted), by
    looking each run's ends up when they do not."""
    from loralay_build.group.regions import _fragments

    def fragments(line_ids: list[int], pages: list[int]) -> tuple[list[int], list[int]]:
        n = len(pages)
        doc = Document(id="f", pages=[Page(k, 612, 792) for k in (1, 2, 3)],
                       words=["w"] * n, boxes=[(0.0, 0.0, 5.0, 10.0)] * n,
                       word_pages=pages, line_ids=line_ids, block_ids=[0] * n)
        starts, page = _fragments(doc)
        return starts.tolist(), page.tolist()

    assert fragments([0, 0, 1, 2, 2], [1, 1, 1, 3, 3]) == ([0, 2, 3], [1, 1, 3])
    assert fragments([0, 0, 1, 1, 1], [1, 1, 1, 3, 3]) == ([0, 2, 3], [1, 1, 3])
    assert fragments([0, 0, 1, 2, 2], [2, 2, 2, 1, 1]) == ([0, 2, 3], [2, 2, 1])
    assert fragments([0, 0, 1, 1, 1], [2, 2, 2, 1, 1]) == ([0, 2, 3], [2, 2, 1])


def test_empty_document_and_the_poppler_choice():
    empty = Document(id="e", pages=[Page(1, 612, 792)])
    assert group_layout(empty) == empty
    b = PageBuilder()
    paragraph(b, 72, 100, [FULL, FULL])
    doc = b.doc()
    assert poppler_groups(doc) == doc
    assert regroup(doc, "poppler") == doc
    assert regroup(doc, "geometry") == group_layout(doc)
    assert GROUPINGS == ("geometry", "poppler")
    with pytest.raises(ValueError, match="unknown grouping"):
        regroup(doc, "bogus")  # type: ignore[arg-type]


def test_a_grouping_that_loses_a_word_fails_the_check():
    """The well-formedness check itself can fail (so the real-data tests mean something)."""
    b = PageBuilder()
    paragraph(b, 72, 100, [FULL, FULL])
    doc = b.doc()
    out = group_layout(doc)
    broken = Document(id=out.id, pages=out.pages, words=out.words[:-1],
                      boxes=out.boxes[:-1], word_pages=out.word_pages[:-1],
                      line_ids=out.line_ids[:-1], block_ids=out.block_ids[:-1])
    with pytest.raises(AssertionError):
        assert_well_formed(doc, broken)


# ---------------------------------------------------------------- real documents

@cache
def evaluation() -> ModuleType:
    """scripts/eval_groups.py, which holds the ground-truth readers and the scores."""
    path = REPO / "scripts" / "eval_groups.py"
    spec = importlib.util.spec_from_file_location("eval_groups", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["eval_groups"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def tagged() -> list[tuple[str, Path, Document]]:
    pytest.importorskip("pdfplumber")
    pytest.importorskip("sklearn")
    ev = evaluation()
    out = []
    for name in ev.TAGGED:
        pdf = shared_path("corpus", "pdf", f"{name}.pdf")
        out.append((name, pdf, ev.extract(pdf)))
    return out


@pytest.mark.needs_shared
def test_block_ari_on_the_tagged_pdfs_meets_the_floor(tagged):
    ev = evaluation()
    scores = {}
    for name, pdf, doc in tagged:
        truth = ev.tagged_truth(pdf, doc)
        ours = ev.score_tagged(name, pdf, doc, truth, group_layout(doc))
        theirs = ev.score_tagged(name, pdf, doc, truth, poppler_groups(doc))
        scores[name] = ours.block_ari
        assert ours.block_ari > theirs.block_ari, name
        assert ours.line_ari >= 0.95, (name, ours.line_ari)
    assert min(scores.values()) >= ev.GOAL_MIN_ARI, scores
    assert float(np.mean(list(scores.values()))) >= ev.GOAL_MEAN_ARI, scores


@pytest.mark.needs_shared
def test_docbank_blocks_are_pure_and_rarely_one_word():
    pytest.importorskip("sklearn")
    ev = evaluation()
    pages = ev.docbank_pages(shared_path("layout", "docbank"))
    assert len(pages) >= 80
    ours, theirs = ev.DocBankScore(), ev.DocBankScore()
    for page in pages:
        doc = ev.extract(page.pdf)
        idx, label = ev.docbank_labels(page, doc)
        for score, grouper in ((ours, group_layout), (theirs, poppler_groups)):
            g = ev.aligned(doc, grouper(doc))
            score.add(page.name, np.asarray(g.block_ids)[idx], label)
    assert ours.one_word_share <= ev.GOAL_ONE_WORD, ours.one_word_share
    assert ours.one_word_share < theirs.one_word_share
    assert ours.purity >= ev.GOAL_PURITY, ours.purity


def _real_pdfs() -> list[Path]:
    corpus = shared_path("corpus", "pdf")
    bench = shared_path("bench", "pdfs")
    broken = ("en_truncated_jcap", "en_encrypted_phoenix", "en_scanned_fama1973")
    return ([p for p in sorted(corpus.glob("*.pdf")) if p.stem not in broken]
            + sorted(bench.glob("*.pdf")))


@pytest.mark.needs_shared
def test_every_real_pdf_keeps_its_words_and_gets_contiguous_rising_ids():
    ev = evaluation()
    for pdf in _real_pdfs():
        doc = ev.extract(pdf)
        out = group_layout(doc)
        assert_well_formed(doc, out)
        assert group_layout(doc) == out  # twice in one process


@pytest.mark.needs_shared
def test_output_is_identical_across_hash_seeds():
    ev = evaluation()
    pdfs = [shared_path("corpus", "pdf", f"{n}.pdf") for n in ev.TAGGED]
    pdfs += _real_pdfs()[:4]
    # the whole layout step, as a build runs it: groups, order and labels
    here = [ev.fingerprint(group_and_label(ev.extract(p))) for p in pdfs]
    seeds = [ev.fingerprints_in_subprocess(pdfs, seed) for seed in ("0", "31337")]
    assert seeds[0] == seeds[1] == here
    assert len(set(here)) == len(here)


@pytest.mark.needs_shared
@pytest.mark.perf
def test_grouping_stays_a_small_part_of_extraction():
    """A guard against a layout step that turned quadratic (a page of 2,000 words would
    then cost more than its extraction), not the 8 % goal: that one is measured by
    `make bench` (`scripts/bench_layout.py`), whose margin a loaded machine's noise
    exceeds."""
    ev = evaluation()
    bench = sorted(shared_path("bench", "pdfs").glob("*.pdf"))
    if os.environ.get("LORALAY_SKIP_TIMING"):
        pytest.skip("LORALAY_SKIP_TIMING is set")
    t = ev.time_against_extraction(bench, runs=3)
    assert t.pages == 730 and sum(t.group_s) > 0 and sum(t.label_s) > 0, t
    assert t.ratio(t.step_s) <= 3 * ev.GOAL_COST, t.summary()


@cache
def _grouped(*parts: str) -> Document:
    """A shared PDF extracted and grouped (cached: several tests read one page)."""
    return group_layout(evaluation().extract(shared_path(*parts)))


def _page_lines(doc: Document, page: int) -> list[str]:
    """The page's lines' texts, in output order."""
    keep = [i for i, p in enumerate(doc.word_pages) if p == page]
    return [" ".join(x) for x in _runs([doc.words[i] for i in keep],
                                       [doc.line_ids[i] for i in keep])]


def _page_text(doc: Document, page: int) -> str:
    return " ".join(w for w, p in zip(doc.words, doc.word_pages) if p == page)


def _page_blocks(doc: Document, page: int) -> list[str]:
    keep = [i for i, p in enumerate(doc.word_pages) if p == page]
    return [" ".join(x) for x in _runs([doc.words[i] for i in keep],
                                       [doc.block_ids[i] for i in keep])]


@pytest.mark.needs_shared
def test_narrow_gutter_a_side_box_beside_the_body_keeps_its_own_lines():
    """Class 1 (issue 33): ko_hufs_tsp p1, a licence box in small print 17 pt left of the
    body; its lines were joined to the body's on one baseline."""
    lines = _page_lines(_grouped("corpus", "pdf", "ko_hufs_tsp.pdf"), 1)
    assert "conditions of the Creative Commons" in lines
    assert not any("Creative" in line and "영감을" in line for line in lines)
    text = _page_text(_grouped("corpus", "pdf", "ko_hufs_tsp.pdf"), 1)
    assert text.index("영감을 받아") < text.index("TSP 에 어떻게")  # the body reads on


@pytest.mark.needs_shared
def test_narrow_gutter_a_reference_block_holds_one_column():
    """Class 1: asmeconf p5, a reference's short last line beside the next column's
    hanging indent (the gutter lay between two of the old strip test's sample points)."""
    doc = _grouped("bench", "pdfs", "asmeconf.pdf")
    lines = _page_lines(doc, 5)
    assert "Dordrecht (1999): pp. 22–36." in lines
    for block in _page_blocks(doc, 5):
        assert not ("Dordrecht" in block and "Rochester" in block)


@pytest.mark.needs_shared
def test_narrow_gutter_a_title_beside_a_side_column_keeps_its_last_word():
    """Class 1: pt_scielo_tinf_brasil_china p1, a large title's last line level with a
    small-print side column's line."""
    lines = _page_lines(_grouped("corpus", "pdf", "pt_scielo_tinf_brasil_china.pdf"), 1)
    assert not any("Informação" in line and "Edital" in line for line in lines)


@pytest.mark.needs_shared
def test_columns_left_before_right_after_a_float_band():
    """Class 2: asmeconf p2 (a figure and two tables over the columns; the right column
    came first) and ko_kiit_voting p2 (after "2-1 프로세스 설계" the right column's head
    came before the left column's text)."""
    text = _page_text(_grouped("bench", "pdfs", "asmeconf.pdf"), 2)
    assert text.index("\\affil{n}") < text.index("which will cause errors")
    assert text.index("sentence.") < text.index("which will cause errors")
    text = _page_text(_grouped("corpus", "pdf", "ko_kiit_voting.pdf"), 2)
    assert text.index("2-1 프로세스 설계") < text.index("사용자는 React") < text.index(
        "게 된다. 이후,")


@pytest.mark.needs_shared
def test_floats_leave_the_sentence_they_interrupt():
    """Class 3: asmeconf p2 opens with the end of page 1's paragraph under a figure and
    two tables: the paragraph's words come first, the floats after it; asmeconf p3's
    footnote at the left column's foot comes after the right column's text."""
    doc = _grouped("bench", "pdfs", "asmeconf.pdf")
    blocks = _page_blocks(doc, 2)
    assert blocks[0].startswith("\\affil{n} . Two or more authors")
    first_float = min(k for k, b in enumerate(blocks) if "FIGURE 1" in b or "TABLE" in b)
    assert first_float > 0
    text = _page_text(doc, 3)
    assert text.index("To prevent capitalization") > text.index(
        "Citations and references are managed")


def test_a_caption_is_told_from_a_sentence_about_a_figure():
    from loralay_build.group.regions import is_caption_start

    for words in (["Figura", "3.", "Correlação"], ["TABLE", "1:", "A"], ["Tabla", "2", "–"],
                  ["그림", "1.", "이더리움"], ["Fig.", "2:", "The"]):
        assert is_caption_start(words), words
    for words in (["Table", "1", "shows"], ["Figures", "are", "drawn"], ["Fig.", "2", "the"]):
        assert not is_caption_start(words), words


@pytest.mark.needs_shared
def test_captions_and_tables_wait_for_a_paragraph_running_through_two_columns():
    """Class 3: pt_scielo_hoehnea_senna p8 opens with a figure's captions and a table over
    both columns; the paragraph that runs on from page 7 ends in the left column's foot
    and goes on at the right column's: both halves first, then the floats."""
    text = _page_text(_grouped("corpus", "pdf", "pt_scielo_hoehnea_senna.pdf"), 8)
    assert (text.index("as espécies, em especial") < text.index("utilizadas, evidenciou-se")
            < text.index("Figura 3.") < text.index("Tabela 4."))


@pytest.mark.needs_shared
def test_a_table_is_one_block_read_row_by_row():
    """Class 4: pt_scielo_tinf_brasil_china p8, the totals rows (cells closer than a
    cell gap) were blocks of their own; asmeconf p2's table 2 is one block, row by row."""
    blocks = _page_blocks(_grouped("corpus", "pdf", "pt_scielo_tinf_brasil_china.pdf"), 8)
    table = [b for b in blocks if "ENG 36 36" in b]
    assert len(table) == 1 and "Outros*" in table[0] and "Total 99 100" in table[0]
    assert table[0].index("ENG 36") < table[0].index("EU 22") < table[0].index("Total 99")
    blocks = _page_blocks(_grouped("bench", "pdfs", "asmeconf.pdf"), 2)
    table = [b for b in blocks if "Our competitor" in b]
    assert len(table) == 1
    assert table[0].index("124.3 68.3") < table[0].index("The second test")


@pytest.mark.needs_shared
def test_reading_order_on_the_tagged_pdfs_meets_the_goals(tagged):
    ev = evaluation()
    ours = []
    for name, pdf, doc in tagged:
        truth = ev.tagged_elements(pdf, doc)
        score = ev.score_order(truth, doc, group_layout(doc))
        ours.append(score)
        assert not score.row_by_row and not score.interleaved, (name, score.interleaved)
    failed = [text for text, ok in ev.order_goals(ours) if not ok]
    assert not failed, failed


def test_the_evaluation_script_skips_cleanly_without_the_shared_folder(tmp_path):
    env = dict(os.environ)
    env[evaluation().ENV_VAR] = str(tmp_path / "absent")
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "eval_groups.py")],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0
    assert "skipped" in proc.stdout


@pytest.mark.needs_shared
def test_every_visible_tagged_pdf_has_its_words_matched_to_their_elements():
    """../shared/layout/tagged/README.md checked >= 85 % of every document's words against
    a ground-truth element; the evaluation's reader must find them too (issue 43). It
    read each page's own tree through pdfplumber, which gives an element one page: on
    Antenna House's IRS publication every page after the first came back without one
    element (0 of 608 words on page 7), and it raised on two files."""
    pytest.importorskip("pdfplumber")
    ev = evaluation()
    pdfs = ev.tagged_pdfs(shared_path())
    assert len(pdfs) == 10, pdfs
    for pdf in pdfs:
        doc = ev.extract(pdf)
        element = ev.tagged_elements(pdf, doc).element
        pages = np.asarray(doc.word_pages)
        assert (element >= 0).mean() >= 0.85, (pdf.stem, (element >= 0).mean())
        if pdf.stem == "en_ahf_irs_publication15_2013":
            on = pages == 7
            assert (element[on] >= 0).mean() >= 0.85, (element[on] >= 0).mean()
