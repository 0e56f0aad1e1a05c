"""Block labels (loralay_build/group/labels.py, issue 34): VILA's S2-VL categories from
rules on the grouped page. Each rule on made-up pages, then (`needs_shared`) the floor on
DocBank's labelled pages and hand-labelled real pages in every language of the corpus."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from loralay_build.group import group_layout
from loralay_build.group.labels import LABELS, label_words
from loralay_build.records import Document

from .conftest import REPO, shared_path
from .test_groups import FULL, PageBuilder, paragraph


def labelled(doc: Document) -> dict[str, str]:
    """Each block's text (its words joined) -> its label, after grouping."""
    g = group_layout(doc)
    codes = label_words(g)
    out: dict[str, str] = {}
    for k, (word, block) in enumerate(zip(g.words, g.block_ids)):
        key = f"b{block}"
        out[key] = out.get(key, "") + (" " if key in out else "") + word
        out[key + ":label"] = LABELS[codes[k]]
    return {out[key]: out[key + ":label"] for key in out if not key.endswith(":label")}


def label_of(labels: dict[str, str], start: str) -> str:
    hits = [v for k, v in labels.items() if k.startswith(start)]
    assert hits, (start, list(labels))
    return hits[0]


def test_labels_are_vilas_s2vl_categories_in_its_order():
    """VILA's datasets/s2-vl-utils/config.json lists these 16 `selected_categories`; its
    label id is the index (condense_dataset.py: `enumerate(selected_categories)`)."""
    assert LABELS == ("title", "author", "abstract", "keywords", "section", "paragraph",
                      "list", "bibliography", "equation", "algorithm", "figure", "table",
                      "caption", "header", "footer", "footnote")


def _three_pages() -> PageBuilder:
    b = PageBuilder()
    for page in range(1, 4):
        if page > 1:
            b.new_page()
        b.line(200, 40, "Journal of Made-up Studies 12 (2020)")
        y = paragraph(b, 72, 100, [FULL] * 6)
        y = paragraph(b, 72, y + 20, [FULL] * 5 + ["lorem ipsum"])
        b.line(300, 750, str(page))
    return b


def test_running_headers_and_page_numbers():
    labels = labelled(_three_pages().doc())
    assert label_of(labels, "Journal of Made-up") == "header"
    assert label_of(labels, "2") == "footer"
    assert label_of(labels, "lorem ipsum dolor") == "paragraph"


def test_a_one_page_document_has_no_repetition_but_its_page_number():
    b = PageBuilder()
    b.line(200, 40, "A lone line at the top of a page")
    paragraph(b, 72, 100, [FULL] * 6)
    b.line(300, 750, "7")
    labels = labelled(b.doc())
    assert label_of(labels, "A lone line") == "paragraph"
    assert label_of(labels, "7") == "footer"


@pytest.mark.parametrize("prefix", ["Figure 3:", "Fig. 2.", "TABLE IV", "Tabela 1 -",
                                    "Tableau 2 :", "Tabla 3.", "Quadro 1 -", "Gráfico 2 -",
                                    "그림 1.", "표 2.", "<표 3>"])
def test_captions_in_every_language(prefix):
    b = PageBuilder()
    y = paragraph(b, 72, 100, [FULL] * 6)
    paragraph(b, 72, y + 30, [f"{prefix} the distribution of lorem over ipsum"])
    labels = labelled(b.doc())
    assert label_of(labels, prefix.split()[0]) == "caption"
    assert label_of(labels, "lorem ipsum dolor") == "paragraph"


def test_a_sentence_citing_a_figure_is_no_caption():
    b = PageBuilder()
    first = "Figure 3 shows dolor sit amet consectetur adipiscing elit sed do eiusmod tempor"
    paragraph(b, 72, 100, [first] + [FULL] * 5)
    assert label_of(labelled(b.doc()), "Figure 3 shows") == "paragraph"


def test_reference_list_after_its_heading_and_numbered_headings():
    b = PageBuilder()
    b.line(72, 80, "1 Introduction", size=12.0)
    y = paragraph(b, 72, 100, [FULL] * 6)
    b.line(72, y + 20, "Referências", size=12.0)
    y += 44
    for k in range(4):
        y = paragraph(b, 72, y, [f"[{k + 1}] Silva, A. and Souza, B. lorem ipsum dolor sit",
                                 "    amet, Journal of Lorem 12 (2001) 1-10."]) + 4
    labels = labelled(b.doc())
    assert label_of(labels, "1 Introduction") == "section"
    assert label_of(labels, "Referências") == "section"
    assert label_of(labels, "[1] Silva") == "bibliography"
    assert label_of(labels, "[4] Silva") == "bibliography"


def test_display_equation_with_its_number():
    b = PageBuilder()
    y = paragraph(b, 72, 100, [FULL] * 4)
    b.line(200, y + 14, "E = m c 2 + ∑ α β (3)", space=4.0)
    paragraph(b, 72, y + 40, [FULL] * 4)
    assert label_of(labelled(b.doc()), "E = m") == "equation"


def test_footnote_in_small_type_at_the_foot_of_the_column():
    b = PageBuilder()
    paragraph(b, 72, 100, [FULL] * 30)
    b.line(72, 700, "1 lorem ipsum dolor sit amet in a footnote set small", size=7.5)
    assert label_of(labelled(b.doc()), "1 lorem") == "footnote"


def test_labels_are_deterministic_across_hash_seeds():
    code = ("import sys; sys.path.insert(0, sys.argv[1]);"
            "from tests.test_labels import _three_pages;"
            "from loralay_build.group import group_layout;"
            "from loralay_build.group.labels import label_words;"
            "print(label_words(group_layout(_three_pages().doc())).tolist())")
    outs = {subprocess.run([sys.executable, "-c", code, str(REPO)], capture_output=True,
                           text=True, check=True, env={"PYTHONHASHSEED": seed,
                                                       "PATH": "/usr/bin:/bin"}).stdout
            for seed in ("0", "4242")}
    assert len(outs) == 1
    assert json.loads(outs.pop()) == label_words(group_layout(_three_pages().doc())).tolist()


def test_empty_document():
    assert label_words(Document(id="x", pages=[])).tolist() == []


# ---------------------------------------------------------------- the real thing

def evaluation() -> ModuleType:
    scripts = REPO / "scripts"
    sys.path.insert(0, str(scripts))
    spec = importlib.util.spec_from_file_location("eval_labels", scripts / "eval_labels.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["eval_labels"] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.needs_shared
def test_docbank_labels_meet_the_floor():
    ev = evaluation()
    pages = ev.docbank_pages(shared_path("layout", "docbank"))
    assert len(pages) >= 80
    pairs, _, _, _, _ = ev.evaluate(pages)
    right = sum(t == p for t, p in pairs)
    assert right / len(pairs) >= ev.GOAL_ACCURACY, right / len(pairs)
    assert ev.recall_of(pairs, "caption") >= ev.GOAL_CAPTION_RECALL
    assert ev.recall_of(pairs, "bibliography") >= ev.GOAL_BIBLIOGRAPHY_RECALL


def _page_labels(pdf: Path, page: int) -> list[tuple[str, str]]:
    ev = evaluation()
    g = group_layout(ev.extract(pdf))
    codes = label_words(g)
    out: list[tuple[str, str]] = []
    last = None
    for word, p, block, code in zip(g.words, g.word_pages, g.block_ids, codes.tolist()):
        if p != page:
            continue
        if block != last:
            out.append(("", LABELS[code]))
            last = block
        text, lab = out[-1]
        out[-1] = ((text + " " + word).strip(), lab)
    return out


def _has(blocks: list[tuple[str, str]], start: str, label: str) -> bool:
    return any(text.startswith(start) and lab == label for text, lab in blocks)


# Hand-labelled from the rendered pages (pdftoppm -png -r 60): (file, page, block start,
# label). Only what was checked by eye on the image is listed.
REAL_PAGES: list[tuple[str, int, str, str]] = []


@pytest.mark.needs_shared
@pytest.mark.parametrize("name,page,start,label", REAL_PAGES)
def test_real_pages_in_every_language(name, page, start, label):
    pdf = shared_path("corpus", "pdf", f"{name}.pdf")
    blocks = _page_labels(pdf, page)
    assert _has(blocks, start, label), [b for b in blocks if b[0][:12] == start[:12]] or blocks


def test_the_settings_name_the_same_labels():
    from loralay_build.settings.common import LABEL_NAMES

    assert LABEL_NAMES == LABELS


def test_drop_labels_setting_is_checked_and_fingerprinted():
    from loralay_build.settings import DocumentSettings

    s = DocumentSettings(drop_labels=["footer", "header", "footer"])
    assert s.drop_labels == ["header", "footer"]  # LABELS' order, once each
    assert DocumentSettings().drop_labels == []  # default: every word kept
    with pytest.raises(ValueError, match="unknown labels"):
        DocumentSettings(drop_labels=["running-head"])
    assert s.model_dump() != DocumentSettings().model_dump()  # what a fingerprint hashes


def test_drop_labelled_removes_the_words_and_counts_them():
    from loralay_build.run.steps import drop_labelled
    from loralay_build.strip import Stripped

    doc = group_layout(_three_pages().doc())
    doc.labels = label_words(doc).tolist()
    stripped = Stripped(body=doc, matches=[], body_keys=list(doc.words))
    out = drop_labelled(stripped, ["header", "footer"])
    names = {LABELS[c] for c in out.body.labels}
    assert "header" not in names and "footer" not in names and "paragraph" in names
    dropped = sum(LABELS[c] in ("header", "footer") for c in doc.labels)
    assert dropped > 0 and out.body.dropped_by_label == dropped
    assert len(out.body.words) == len(doc.words) - dropped == len(out.body_keys)
    assert out.body.words == out.body_keys
    assert drop_labelled(stripped, ["algorithm"]) is stripped


def test_show_colours_every_label_and_lists_the_pages_labels():
    from loralay_build.show import LABEL_COLOURS, page_labels

    assert set(LABEL_COLOURS) == set(LABELS)
    assert len(set(LABEL_COLOURS.values())) == len(LABELS)
    row = {"article_pages": [1, 1, 1, 2], "article_labels": ["header", "paragraph",
                                                             "header", "footer"]}
    assert page_labels(row, 1) == ["header", "paragraph"]
    assert page_labels(row, 2) == ["footer"]


def test_report_counts_the_share_of_words_per_label_per_language():
    from loralay_build.write.doctable import DocTable
    from loralay_build.write.report import _md_labels, label_shares

    docs = DocTable()
    docs.add("a", pages=1, summary_words=1, article_words=10, language_share=None, leak=[],
             language="fr", label_words={"paragraph": 8, "header": 2}, dropped_by_label=3)
    docs.add("b", pages=1, summary_words=1, article_words=10, language_share=None, leak=[],
             language="pt", label_words={"paragraph": 5, "bibliography": 5})
    again = docs.select([0, 1], ["train", "train"])
    for table in (docs, again):
        got = label_shares(table)
        assert got["words"] == {"all": 20, "fr": 10, "pt": 10}
        assert got["by_language"]["fr"] == {"paragraph": 0.8, "header": 0.2}
        assert got["by_language"]["all"]["bibliography"] == 0.25
        assert got["dropped_by_label"] == 3
    md = "\n".join(_md_labels({"labels": label_shares(docs)}))
    assert "| paragraph | 65.0% | 80.0% | 50.0% |" in md and "3 words left out" in md
