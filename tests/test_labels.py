"""Block labels (loralay_build/group/labels.py, issue 34): VILA's S2-VL categories from
rules on the grouped page. Each rule on made-up pages, then (`needs_shared`) the floor on
DocBank's labelled pages and hand-labelled real pages in every language of the corpus."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from functools import cache
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from loralay_build.group import group_layout
from loralay_build.group.labels import LABELS, group_and_label, label_words
from loralay_build.records import Document

from .conftest import REPO, shared_path
from .helpers.pages import FULL, PageBuilder, paragraph, three_pages


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


def test_running_headers_and_page_numbers():
    labels = labelled(three_pages().doc())
    assert label_of(labels, "Journal of Made-up") == "header"
    assert label_of(labels, "2") == "footer"
    assert label_of(labels, "lorem ipsum dolor") == "paragraph"


def test_a_one_page_document_has_no_repetition_but_its_page_number():
    b = PageBuilder()
    b.line(200, 70, "A lone line near the top of a page")  # 8.8 %: not the edge
    paragraph(b, 72, 100, [FULL] * 6)
    b.line(300, 750, "7")
    labels = labelled(b.doc())
    assert label_of(labels, "A lone line") == "paragraph"
    assert label_of(labels, "7") == "footer"


def test_a_line_set_apart_at_the_page_edge_is_a_running_head_by_its_place():
    """Issue 43: on pages whose head recurs nowhere (one page, a first page's imprint), a
    one-line block in the top 7.5 % (bottom 8 %) set apart from the text is a header
    (footer); a body line running into the edge, or a footnote's line, is not."""
    b = PageBuilder()
    b.line(150, 30, "Proceedings of a Made-up Conference")  # 3.8 %, 70 pt above the text
    paragraph(b, 72, 100, [FULL] * 6)
    b.line(72, 735, "3) A footnote set at the very foot of its page.")
    b.line(200, 760, "Made-up Press, Campinas, 2021")
    labels = labelled(b.doc())
    assert label_of(labels, "Proceedings of") == "header"
    assert label_of(labels, "Made-up Press") == "footer"
    assert label_of(labels, "3) A footnote") != "footer"
    # the text reaching the edge: a line as near the top as a head stands, but at its
    # leading from the next one (the IRS publication's pages), is body text
    b = PageBuilder()
    b.line(72, 30, FULL)
    paragraph(b, 72, 42, [FULL] * 30)
    assert set(labelled(b.doc()).values()) == {"paragraph"}


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


# texts with every kind of space, case folding and mathematics the fast paths must agree on
ODD_TEXTS = ["E = m c 2 + ∑ α β (3)", "a b\tc\xa0d e\u2009f", "x", " y ", "ab", "x²+y",
             "\u212a ſ İ ı Σ", "Fig.3:", "<표", "ſcheme 2", "İmagem", "Tabela 1 -", "the", "",
             "12 / 20", "page 3 of 9", "REFERENCES", "1. Introduction", "Referências"]


def test_the_fast_expressions_agree_with_the_plain_ones():
    """The share of mathematics counted without a lookbehind, a key's letters through a
    bytes table, and the word alternations behind a lookahead on their initials
    (labels.py's fast paths) give what the plain expressions give."""
    import re

    from loralay_build.group import labels as L

    plain_math = re.compile(L.MATH.pattern + r"|(?<!\S)[A-Za-z](?!\S)")
    lookahead = re.compile(r"\(\?=\[[^\]]*\]\)")
    fast = [L.CAPTION_FIRST, L.CAPTION, L.REFERENCES, L.HEADING_WORDS]
    plain = [re.compile(lookahead.sub("", p.pattern), p.flags) for p in fast]
    assert all(p.pattern != f.pattern for p, f in zip(plain, fast))
    matched = 0
    for text in ODD_TEXTS + [f"{a} {b}" for a in ODD_TEXTS for b in ODD_TEXTS]:
        assert (len(L.MATH.findall(text)) + len(L.ONE_LETTER.findall(" " + text))
                == len(plain_math.findall(text))), text
        assert L._letters(text) == L.NOT_LETTERS.sub("", text.lower()), text
        for f, p in zip(fast, plain):
            assert (f.match(text) is None) == (p.match(text) is None), (f, text)
            matched += f.match(text) is not None
    assert matched >= 50, matched  # the texts do match, not only fail
    with pytest.raises(ValueError):
        L._any_word("figure", "<table")


def test_labels_are_deterministic_across_hash_seeds():
    code = ("import sys; sys.path.insert(0, sys.argv[1]);"
            "from tests.helpers.pages import three_pages;"
            "from loralay_build.group import group_layout;"
            "from loralay_build.group.labels import label_words;"
            "print(label_words(group_layout(three_pages().doc())).tolist())")
    outs = {subprocess.run([sys.executable, "-c", code, str(REPO)], capture_output=True,
                           text=True, check=True, env={"PYTHONHASHSEED": seed,
                                                       "PATH": "/usr/bin:/bin"}).stdout
            for seed in ("0", "4242")}
    assert len(outs) == 1
    assert json.loads(outs.pop()) == label_words(group_layout(three_pages().doc())).tolist()


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


@pytest.mark.needs_shared
def test_running_heads_and_footers_are_artifacts_of_the_tagged_pdfs():
    """The precision goal (>= 0.95 each) against tags made by others: every block labelled
    header or footer on the three tagged PDFs (Spanish, Korean, Portuguese) is
    text the PDF keeps out of its structure tree, or a lone page number."""
    ev = evaluation()
    pdfs = [shared_path("corpus", "pdf", f"{n}.pdf") for n in ev.TAGGED]
    got = ev.running_heads_against_tags(pdfs)
    for name in ("header", "footer"):
        n = sum(k for _, k, _, _ in got[name])
        right = sum(r for _, _, r, _ in got[name])
        assert n >= 30, (name, got[name])
        assert right / n >= ev.GOAL_RUNNING_PRECISION, (name, got[name])
    # and each document's running heads are found, not just avoided
    assert all(k >= 10 for _, k, _, _ in got["header"]), got["header"]


@cache
def _labelled_document(pdf: Path) -> tuple[Document, list[int]]:
    """As a build groups and labels it (`group_and_label`)."""
    g = group_and_label(evaluation().extract(pdf))
    return g, list(g.labels)


def _page_labels(pdf: Path, page: int) -> list[tuple[str, str]]:
    g, codes = _labelled_document(pdf)
    out: list[tuple[str, str]] = []
    last = None
    for word, p, block, code in zip(g.words, g.word_pages, g.block_ids, codes):
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


# Hand-labelled from the rendered pages (pdftoppm -png -r 60 -f N -l N, looked at): (file,
# page, the block's first words, its label). Headers, footers, captions and reference lists
# in every language of the corpus.
REAL_PAGES: list[tuple[str, int, str, str]] = [
    ("fr_ahrf_censure", 3, "Marché du livre, censure", "header"),
    ("fr_ahrf_censure", 3, "Annales historiques de la Révolution", "footer"),
    ("fr_these_malware_long", 30, "Chapitre 2. Techniques", "header"),
    ("fr_these_malware_long", 30, "22", "footer"),
    ("fr_these_mucoviscidose", 22, "Thèse de médecine UBO", "header"),
    ("fr_these_mucoviscidose", 22, "CHRU Brest 11", "footer"),
    ("fr_these_mucoviscidose", 22, "Figure 3 – Exemple", "caption"),
    ("fr_these_mucoviscidose", 61, "Références", "section"),
    ("fr_these_mucoviscidose", 61, "[1] T. W. Lee", "bibliography"),
    ("fr_these_mucoviscidose", 66, "[50] P. D. Schloss", "bibliography"),
    ("es_baaa_awsom", 2, "BAAA, 61B, 2020", "footer"),
    ("es_baaa_awsom", 2, "Referencias", "section"),
    ("es_baaa_awsom", 2, "Frazin R.A.", "bibliography"),
    ("es_baaa_awsom", 3, "BAAA, 61B, 2020 3", "footer"),
    ("es_baaa_awsom", 3, "Figura 1: Mapas", "caption"),
    ("es_scielo_malaga", 5, "5", "header"),
    ("es_scielo_malaga", 5, "UN ESTUDIO DE RESPONSABILIDAD", "header"),
    ("es_scielo_malaga", 5, "https://doi.org/10.1590", "footer"),
    ("es_scielo_malaga", 5, "Tabla 1 – Índices", "caption"),
    ("es_scielo_malaga", 6, "Tabla 1 – Índices", "caption"),
    ("es_ieee_miniscan", 2, "FIGURA 1. Representación", "caption"),
    ("pt_scielo_hoehnea_senna", 3, "Neves et al.:", "header"),
    ("pt_scielo_hoehnea_senna", 3, "Table 1. Identification", "caption"),
    ("pt_scielo_hoehnea_senna", 4, "4 Hoehnea 49", "header"),
    ("pt_scielo_hoehnea_senna", 6, "Figura 1. Correlação", "caption"),
    ("pt_scielo_hoehnea_senna", 10, "Doughari, J.H.", "bibliography"),
    ("pt_scielo_rsp_hindex", 3, "Rev Saúde Pública 2013", "header"),
    ("pt_scielo_rsp_hindex", 4, "Tabela 1. Média", "caption"),
    ("pt_scielo_rsp_hindex", 8, "REFERÊNCIAS", "section"),
    ("pt_scielo_rsp_hindex", 8, "1. Bar-Ilan J.", "bibliography"),
    ("pt_scielo_rsp_hindex", 8, "9. Hirch JE.", "bibliography"),
    ("pt_scielo_tinf_brasil_china", 4, "L. L. Santos et al.", "header"),
    ("pt_scielo_tinf_brasil_china", 4, "4", "footer"),
    ("pt_scielo_tinf_brasil_china", 4, "TransInformação I Campinas", "footer"),
    ("ko_kiit_voting", 2, "- 2024 한국정보기술학회", "header"),
    ("ko_kiit_voting", 2, "- 2 -", "footer"),
    ("ko_kiit_voting", 2, "그림 1. 이더리움", "caption"),
    ("ko_kiit_voting", 4, "IV. 참고 문헌", "section"),
    ("ko_kiit_voting", 4, "1) 김도훈", "bibliography"),
    ("ko_kiit_voting", 4, "2) 안규황", "bibliography"),
    ("ko_hufs_tsp", 5, "한국외국어대학교 컴퓨터공학부", "header"),
    ("ko_hufs_tsp", 16, "1. Marco Dorigo.", "bibliography"),
    ("ko_ssrn_kopdp", 3, "Electronic copy available at", "footer"),
    # running heads by their place at the page's edge (issue 43): each recurs nowhere
    ("en_ieee_reqprio", 1, "2010 International Conference on Data Storage", "header"),
    ("es_baaa_awsom", 1, "Presentación oral", "footer"),
    ("es_baaa_awsom", 2, "Validación del Modelo AWSoM", "header"),
    ("ko_hufs_tsp", 1, "2023 년 컴퓨터공학부 졸업논문", "footer"),
    ("es_scielo_malaga", 10, "TransInformação, Campinas", "footer"),
    # one-line footnotes in the bottom edge stay footnotes
    ("ko_ssrn_kopdp", 7, "6) 특허청예규", "footnote"),
    ("ko_ssrn_kopdp", 25, "31) Thoma et al.(2010)", "footnote"),
]
# Every running header and footer on these pages, as seen on the rendered page: the
# labels `header` and `footer` may be given to these blocks only (precision on them).
RUNNING: dict[tuple[str, int], list[tuple[str, str]]] = {
    ("fr_ahrf_censure", 2): [("Marché du livre", "header"), ("Annales historiques", "footer")],
    ("fr_these_malware_long", 30): [("Chapitre 2.", "header"), ("22", "footer")],
    ("pt_scielo_tinf_brasil_china", 4): [("L. L. Santos", "header"), ("4", "footer"),
                                         ("TransInformação I", "footer")],
    ("es_scielo_malaga", 5): [("5", "header"), ("UN ESTUDIO DE", "header"),
                              ("https://doi.org/", "footer")],
    ("ko_kiit_voting", 4): [("- 2024", "header"), ("- 4 -", "footer")],
    ("pt_scielo_rsp_hindex", 3): [("Rev Saúde Pública", "header"), ("233", "header")],
    ("es_baaa_awsom", 2): [("Validación del Modelo AWSoM", "header"), ("2", "footer"),
                           ("BAAA, 61B, 2020", "footer")],
}


@pytest.mark.needs_shared
@pytest.mark.parametrize("name,page,start,label", REAL_PAGES)
def test_real_pages_in_every_language(name, page, start, label):
    pdf = shared_path("corpus", "pdf", f"{name}.pdf")
    blocks = _page_labels(pdf, page)
    assert _has(blocks, start, label), [b for b in blocks if b[0].startswith(start)] or blocks


@pytest.mark.needs_shared
@pytest.mark.parametrize("name,page", sorted(RUNNING))
def test_running_headers_and_footers_are_only_the_real_ones(name, page):
    pdf = shared_path("corpus", "pdf", f"{name}.pdf")
    blocks = _page_labels(pdf, page)
    expected = RUNNING[(name, page)]
    found = [(text, lab) for text, lab in blocks if lab in ("header", "footer")]
    for text, lab in found:  # precision: each one is a real running header or footer
        assert any(text.startswith(s) and lab == e for s, e in expected), (text, lab)
    for s, e in expected:  # and all of them are found
        assert any(text.startswith(s) and lab == e for text, lab in found), (s, e, found)


# Algorithm floats, from the rendered pages: every block between an algorithm's caption and
# the float's end is `algorithm` (its steps were sections, equations, bibliography entries);
# the caption stays a caption; running text after the float, or before another, is not.
ALGORITHM_PAGES: list[tuple[tuple[str, ...], int, dict[str, str]]] = [
    (("bench", "pdfs", "pmlr-sample.pdf"), 9, {
        "Algorithm 1: The Gauss-Seidel": "caption",
        "1. For k = 1 to maximum": "algorithm", "(a) For i = 1 to n": "algorithm",
        "ii. If": "algorithm", "Algorithm 2: Moore": "caption",
        "Given a connected graph G": "algorithm", "1. Set the label": "algorithm",
        "increment i and return": "algorithm", "Output: y, the net": "algorithm",
        "for i ← 1 to n do": "algorithm", "9": "footer"}),
    (("corpus", "pdf", "fr_these_malware_long.pdf"), 116, {
        "Algorithme 8.4 : Vérification": "caption", "Données : Les associations": "algorithm",
        "retourner (C, true)": "algorithm",
        # running text after the float (the rules call it `table`: not this test's point)
        "T, et ce pour toute association": "not algorithm"}),
    (("corpus", "pdf", "fr_these_malware_long.pdf"), 120, {
        "Par rapport à l'algorithme 8.4": "algorithm",
        "Entrées : Les associations": "algorithm"}),
    (("bench", "pdfs", "oup-template.pdf"), 3, {"Algorithm 1 Calculate": "algorithm",
                                                 "Table 2. Example": "caption"}),
]


@pytest.mark.needs_shared
@pytest.mark.parametrize("where,page,expected", ALGORITHM_PAGES,
                         ids=[f"{w[-1]}-p{p}" for w, p, _ in ALGORITHM_PAGES])
def test_an_algorithm_float_is_labelled_algorithm_up_to_its_end(where, page, expected):
    blocks = _page_labels(shared_path(*where), page)
    got = {start: next((lab for text, lab in blocks if text.startswith(start)), "absent")
           for start in expected}
    for start, want in expected.items():
        if want.startswith("not "):  # any label but that one
            got[start] = got[start] if got[start] == want[4:] else want
    assert got == expected


def test_detector_tables_relabel_only_the_rules_paragraphs():
    from loralay_build.images.detector import apply_regions

    doc = group_layout(three_pages().doc())
    codes = label_words(doc)
    on_1 = [i for i, p in enumerate(doc.word_pages) if p == 1]
    everything = np.array([[0, 0, 612, 792]], dtype=float)
    out = apply_regions(doc, codes, 1, everything, ["table"])
    names = [LABELS[c] for c in out[on_1]]
    before = [LABELS[c] for c in codes[on_1]]
    assert set(names) == {"table", "header", "footer"}  # paragraphs only changed
    assert [n for n, b in zip(names, before) if b != "paragraph"] == \
        [b for b in before if b != "paragraph"]
    assert (out[len(on_1):] == codes[len(on_1):]).all()  # other pages untouched
    assert (apply_regions(doc, codes, 1, everything, ["text"]) == codes).all()
    blank = np.array([[0.0, 0.0, 1.0, 1.0]])  # a region holding no word
    assert (apply_regions(doc, codes, 1, blank, ["table"]) == codes).all()


def test_rules_plus_detector_needs_the_extra_and_is_said_before_any_work():
    from loralay_build.conf import DocumentSettings
    from loralay_build.errors import ConfigError
    from loralay_build.images.detector import detector_missing
    from loralay_build.pdf.preflight import check_detector

    assert DocumentSettings().labels == "rules"
    s = DocumentSettings(labels="rules+detector")
    assert s.model_dump() != DocumentSettings().model_dump()  # in the fingerprint
    missing = detector_missing()
    if missing is None:
        pytest.skip("rapid-layout and onnxruntime are installed here")
    with pytest.raises(ConfigError, match="detector"):
        check_detector(s)  # type: ignore[arg-type]


def test_the_label_rule_is_in_the_fingerprinted_tool_version():
    from loralay_build.group.labels import LABEL_RULE
    from loralay_build.pdf.preflight import tool_versions

    assert f"+{LABEL_RULE}+" in str(tool_versions())


@pytest.mark.needs_shared
@pytest.mark.parametrize("name,page", sorted(RUNNING))
def test_running_headers_open_their_page_and_footers_close_it(name, page):
    """A header or footer line split by the gutter (journal left, page number right) was
    read with the columns: the page number came back between the two columns
    (es_baaa_awsom p2, pt_scielo_rsp_hindex p3). Page furniture is at its page's ends."""
    labels = [lab for _, lab in _page_labels(shared_path("corpus", "pdf", f"{name}.pdf"),
                                             page)]
    heads = sum(1 for lab in labels if lab == "header")
    feet = sum(1 for lab in labels if lab == "footer")
    assert set(labels[:heads]) <= {"header"} and set(labels[len(labels) - feet:]) <= {"footer"}
    assert "header" not in labels[heads:] and "footer" not in labels[:len(labels) - feet]


@pytest.mark.needs_shared
def test_in_a_build_only_what_was_cut_as_the_abstract_was_the_abstract():
    """The rules guess the abstract on page 1 (here SciELO's "how to cite" box, before the
    real one); a build knows where the abstract was, having cut it: a block the rules
    called `abstract` that lost no word to the cut is running text in the dataset."""
    from loralay_build.conf import DocumentSettings, LimitSettings
    from loralay_build.pdf.steps import DocumentJob, run_document_steps
    from loralay_build.sources.manifest import read_manifest

    manifest = shared_path("corpus", "manifest.jsonl")
    cand = next(line.item for line in read_manifest(manifest)
                if getattr(line.item, "id", None) == "pt_scielo_tinf_brasil_china")
    work, results = run_document_steps(cand, DocumentJob(DocumentSettings(), LimitSettings()),
                              until="strip")
    assert [fail for _, fail, _ in results.stages] == [None, None, None]
    assert work.doc is not None and work.stripped is not None

    def blocks(doc: Document) -> list[tuple[str, str]]:
        out: dict[tuple[int, int], list[str]] = {}
        labs: dict[tuple[int, int], str] = {}
        for w, p, b, code in zip(doc.words, doc.word_pages, doc.block_ids, doc.labels):
            out.setdefault((p, b), []).append(w)
            labs[(p, b)] = LABELS[code]
        return [(" ".join(ws), labs[k]) for k, ws in out.items()]

    cite = "Como citar este artigo/How to cite this article"
    assert _has(blocks(work.doc), cite, "abstract")  # the rules' guess
    body = blocks(work.stripped.body)
    assert _has(body, cite, "paragraph")
    assert [t for t, lab in body if lab == "abstract"] == []


def test_the_card_states_the_label_accuracy_of_the_rules_it_was_measured_for():
    """Issue 43 item 5: the card says how right each label is, from the project's own
    measure (scripts/eval_layout.py); a rule change must re-measure it (bump the card's
    LABEL_ACCURACY_RULE with new numbers), else the card would state a stale accuracy."""
    from dataclasses import replace

    from loralay_build.group.labels import LABEL_RULE
    from loralay_build.write import card
    from loralay_build.write.card import card_text

    from .helpers.cards import FACTS

    assert card.LABEL_ACCURACY_RULE == LABEL_RULE
    text = card_text(FACTS, {"train": 1})
    assert "## How right the labels are" in text
    assert "| `paragraph` | 0.90 | 0.93 | 85,563 |" in text
    assert "| `footer` | 0.99 | 0.81 | 626 |" in text
    assert all(n >= 100 for _, _, _, n in card.LABEL_ACCURACY)
    # labels that are not the rules' alone are not what was measured: no table
    assert "How right the labels" not in card_text(replace(FACTS, labels="rules+detector"),
                                                   {"train": 1})
