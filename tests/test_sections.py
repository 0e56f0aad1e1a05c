"""The section tree, each word's section and the reference list (issue 45) on real PDFs:
the sample's two-column paper, the shared corpus's ACL and arXiv papers."""

from __future__ import annotations

import numpy as np

from loralay_build.api import extract
from loralay_build.group.labels import CODE
from loralay_build.group.sections import number_level, references_of, sections_of

from .conftest import SAMPLE, shared_path


def structure(pdf):
    d = extract(pdf)
    secs, ids = sections_of(d.words, d.boxes, d.block_ids, d.labels)
    refs = references_of(d.words, d.boxes, d.line_ids, d.block_ids, d.labels)
    return d, secs, ids, refs


def test_heading_numbers_give_levels():
    assert [number_level(w) for w in ("2", "2.3.1", "3.1.", "IV.", "B.", "B.1.", "Figure",
                                      "2019", "I")] == [1, 3, 2, 1, 2, 3, None, None, 1]


def test_numbered_headings_of_a_two_column_paper_and_its_words_sections():
    d, secs, ids, refs = structure(SAMPLE.parent / "pdf" / "en_twocol_graphs.pdf")
    assert [s.title for s in secs] == ["1 Introduction", "2 Related work", "3 Method",
                                       "4 Experiments", "5 Conclusion", "References"]
    assert all(s.level == 1 and s.parent == -1 for s in secs)
    assert len(ids) == len(d.words) and ids.dtype == np.int32
    # the title block comes before the first heading; every heading's words are its own
    assert ids[0] == -1 and (np.diff(ids) >= 0).all()
    first = d.words.index("Introduction")
    assert ids[first] == 0 and ids[first - 1] == (0 if d.words[first - 1] == "1" else -1)
    assert [r.split()[0] for r in refs] == ["[1]", "[2]", "[3]"]


def test_subsections_take_their_numbered_parent():
    pdf = shared_path("corpus", "pdf", "en_acl_s2orc.pdf")
    d, secs, ids, refs = structure(pdf)
    titles = [s.title for s in secs]
    top = titles.index("2 Constructing the corpus")
    subs = [s for s in secs if s.title.startswith("2.")]
    assert len(subs) >= 5 and all(s.level == 2 and s.parent == top for s in subs)
    assert secs[titles.index("Introduction")].level == 1  # unnumbered, as large as "2 ..."
    # the words after "2.1 Processing PDFs" belong to it
    k = titles.index("2.1 Processing PDFs")
    assert (ids == k).sum() > 50
    # an author-year list: one entry per reference, each opening with its authors
    assert 50 <= len(refs) <= 70
    assert refs[0].startswith("Riaz Ahmad and Muhammad Tanvir Afzal. 2018.")
    # the entries hold the bibliography's words, no more
    assert sum(len(r.split()) for r in refs) <= int((np.asarray(d.labels) ==
                                                      CODE["bibliography"]).sum())


def test_a_numbered_reference_list_splits_into_its_count():
    pdf = shared_path("corpus", "pdf", "en_arxiv_beyond_summ.pdf")
    _, secs, _, refs = structure(pdf)
    assert [r.split()[0] for r in refs] == [f"[{k}]" for k in range(1, 36)]
    assert "REFERENCES" in [s.title for s in secs]


def test_export_cohan_reads_back_with_the_datasets_sections(built_sample, tmp_path):
    """The sample built, exported in Cohan et al.'s layout, read back: one JSON line per
    paper, section names the `sections` column's titles, abstracts as <S> sentences."""
    import json

    from loralay_build.dataset import Dataset

    from .conftest import loralay

    ds_dir, _ = built_sample
    out = tmp_path / "cohan"
    proc = loralay("export", "cohan", str(ds_dir), "--out", str(out), check=True)
    ds = Dataset.open(ds_dir)
    rows = {r["article_id"]: r for split in ds.splits
            for r in ds.rows(split, ("article_id", "sections", "abstract", "article_words"))}
    papers = [json.loads(line) for f in sorted(out.glob("*.txt"))
              for line in f.read_text(encoding="utf-8").splitlines()]
    assert sorted(p["article_id"] for p in papers) == sorted(rows)
    assert "papers" in proc.stdout
    with_sections = 0
    for p in papers:
        row = rows[p["article_id"]]
        assert p["section_names"] == [s["title"] for s in row["sections"]]
        assert len(p["sections"]) == len(p["section_names"])
        assert all(s.startswith("<S> ") and s.endswith(" </S>") for s in p["abstract_text"])
        assert p["article_text"] and p["labels"] is None
        with_sections += bool(p["sections"])
        # a section's sentences hold no more words than the body
        assert sum(len(s.split()) for sec in p["sections"] for s in sec) \
            <= len(row["article_words"])
    assert with_sections >= 1


def test_a_numbered_list_whose_first_labelled_entry_is_not_one_still_splits():
    """BMC's list: the entry "1." is not labelled bibliography, the list opens at "2."
    (it was one entry of every line before the first number could be above 1)."""
    _, _, _, refs = structure(shared_path("corpus", "pdf", "en_bmc_trauma.pdf"))
    assert [r.split()[0] for r in refs[:3]] == ["2.", "3.", "4."]


def test_unnumbered_headings_larger_than_numbered_items_rank_by_size():
    """LibreOffice's tagged sample: H1 "Titre 1", H2 "Titre 2", H3 "Tableau" (its tree's
    levels) with numbered list items between them that take no heading's level from."""
    _, secs, _, _ = structure(shared_path("layout", "tagged",
                                          "fr_libreoffice_structure_sample.pdf"))
    levels = {s.title: (s.level, s.parent) for s in secs}
    assert levels["Titre 1"] == (1, -1)
    assert levels["Titre 2"] == (2, 0)
    assert levels["Tableau"][0] == 3


def test_an_outline_matching_the_headings_gives_their_levels():
    """LibreOffice's sample carries bookmarks Titre 1 / Titre 2 / Tableau at levels 1-3;
    with them the tree is the tagged one's; an outline of other titles changes nothing."""
    from loralay_build.group.sections import outline_of

    pdf = shared_path("layout", "tagged", "fr_libreoffice_structure_sample.pdf")
    toc = outline_of(str(pdf))
    assert toc == [("Titre 1", 1), ("Titre 2", 2), ("Tableau", 3)]
    d = extract(pdf)
    secs, _ = sections_of(d.words, d.boxes, d.block_ids, d.labels, toc)
    levels = {s.title: s.level for s in secs}
    assert (levels["Titre 1"], levels["Titre 2"], levels["Tableau"]) == (1, 2, 3)
    alone, _ = sections_of(d.words, d.boxes, d.block_ids, d.labels, [("Other", 4)])
    assert alone == sections_of(d.words, d.boxes, d.block_ids, d.labels)[0]


def _mit_thesis_candidate():
    from loralay_build.records import Candidate

    pdf = shared_path("layout", "tagged", "en_latex_mit_thesis_template.pdf")
    return Candidate("en_latex_mit_thesis_template", "local", "en",
                     {"en": "The developments of the “kinetic theory” of gases made within "
                            "the last ten years have enabled it to account satisfactorily "
                            "for many of the laws of gases."},
                     pdf_path=str(pdf))


def test_the_build_reads_the_outline_and_the_row_takes_its_headings():
    """The MIT thesis template (LaTeX, bookmarked): the extract step reads its outline,
    the stored payload carries it (typed entries), and the row's `sections` column takes
    the outline's headings and levels: "Appendix A ..." (no block the labels call a
    heading) is found, "by Silas W. Holman" and "BACHELOR OF SCIENCE IN PHYSICS" of the
    title pages are not headings."""
    from loralay_build.conf import DocumentSettings, LimitSettings
    from loralay_build.pdf.payload import encode, read_columns
    from loralay_build.pdf.steps import DocumentJob, run_document_steps
    from loralay_build.records import OutlineEntry, ProcessedDoc
    from loralay_build.write.features import doc_to_batch

    work, results = run_document_steps(_mit_thesis_candidate(),
                              DocumentJob(DocumentSettings(), LimitSettings()),
                              skip=frozenset({"render"}))
    assert results.failure is None
    assert OutlineEntry("1.1.1 Subsection eqn. (1.2)", 3) in work.outline
    p = work.processed()
    assert p.outline == work.outline
    assert ProcessedDoc.from_json(p.to_json()).outline == p.outline
    col = read_columns(encode(p))
    assert col.outline == p.outline
    secs = doc_to_batch(col).column("sections")[0].as_py()
    assert secs == doc_to_batch(p).column("sections")[0].as_py()
    levels = {s["title"]: s["level"] for s in secs}
    assert levels["Chapter 1 Introduction"] == 1
    assert levels["1.1.1 Subsection eqn. (1.2)"] == 3
    assert levels["Appendix A One-term coefficients for heat conduction"] == 1
    assert levels["A.1 A multipage table of numbers"] == 2
    assert "by Silas W. Holman" not in levels and "Thesis Supervisor" not in levels
    # a line of the title page set small is no level-4 heading under "THESIS COMMITTEE"
    assert "BACHELOR OF SCIENCE IN PHYSICS" not in levels
    top = [s["title"] for s in secs].index("Appendix A One-term coefficients for heat conduction")
    assert secs[top + 1]["parent"] == top


def test_a_pdf_without_bookmarks_stores_no_outline():
    """No outline, no key: a PDF without bookmarks stores the bytes it stored before the
    outline was read (the sample's two-column paper)."""
    from loralay_build.records import Candidate, ProcessedDoc

    from .helpers.steps import job

    pdf = SAMPLE.parent / "pdf" / "en_twocol_graphs.pdf"
    from loralay_build.pdf.steps import run_document_steps

    work, results = run_document_steps(Candidate("en_twocol_graphs", "local", "en", {"en": "x"},
                                        pdf_path=str(pdf)), job(), skip=frozenset({"render"}))
    assert results.failure is None and work.outline == ()
    assert "outline" not in work.processed().to_json()
    assert ProcessedDoc.from_json(work.processed().to_json()).outline == ()


def test_the_title_block_is_no_section():
    """SciELO's Málaga paper: its Spanish title and English translation, on page 1 in a
    type larger than any later heading, belong before the first section (-1); the tree
    opens with "Resumen" at the top level (it had put every section below the title)."""
    d = extract(shared_path("corpus", "pdf", "es_scielo_malaga.pdf"))
    secs, ids = sections_of(d.words, d.boxes, d.block_ids, d.labels, None, d.word_pages)
    assert secs[0].title == "Resumen" and secs[0].level == 1
    assert [s.title for s in secs if s.level == 1][:4] == ["Resumen", "Abstract",
                                                           "Introducción",
                                                           "Procedimientos Metodológicos"]
    assert ids[d.words.index("Compromiso")] == -1


def test_running_heads_are_no_headings_but_numbered_repeats_are():
    """The Korean safety sheet repeats "- EU CLP : 자료없음" as a heading-like line on many
    pages: none of them is a heading; the malware thesis's "1.4 Conclusion", "2.6
    Conclusion" and "Chapitre 1", "Chapitre 2" are distinct headings, all kept."""
    d = extract(shared_path("layout", "tagged", "ko_word_msds_tgc50.pdf"))
    secs, _ = sections_of(d.words, d.boxes, d.block_ids, d.labels, None, d.word_pages)
    assert "- EU CLP : 자료없음" not in [s.title for s in secs]
    d = extract(shared_path("corpus", "pdf", "fr_these_malware_long.pdf"))
    titles = [s.title for s in sections_of(d.words, d.boxes, d.block_ids, d.labels, None,
                                           d.word_pages)[0]]
    assert "1.4 Conclusion" in titles and "2.6 Conclusion" in titles
    assert "Chapitre 1" in titles and "Chapitre 2" in titles


def test_eval_structure_reads_the_trees_pdfplumber_cannot_and_jats():
    """The evaluation's ground truth: the LaTeX thesis's tree (PDF 2.0 namespaces, which
    pdfplumber's `structure_tree` raises on) gives its chapter/section/subsection headings
    at their levels; SciELO's JATS gives sections and the reference list."""
    import importlib.util

    from .conftest import REPO

    spec = importlib.util.spec_from_file_location("eval_structure",
                                                  REPO / "scripts" / "eval_structure.py")
    ev = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ev)
    gt = ev.tagged_truth(shared_path("layout", "tagged", "en_latex_mit_thesis_template.pdf"))
    heads = dict(gt["headings"])
    assert heads["Chapter 1 Introduction"] == 1 and heads["1.1.1 Subsection eqn. ( 1.2 )"] == 3
    assert len(gt["headings"]) == 18
    j = ev.jats_truth(shared_path("corpus", "meta", "pt_scielo_rsp_hindex.xml"))
    assert [t for t, _ in j["headings"]] == ["INTRODUÇÃO", "MÉTODOS", "RESULTADOS",
                                             "DISCUSSÃO", "REFERÊNCIAS"]
    assert len(j["references"]) == 16
    assert ev.reference_match(j["references"], j["references"]) == 1.0
    assert ev.reference_match(j["references"], [" ".join(j["references"])]) == 0.0


def test_an_unreadable_pdf_has_no_outline_and_fails_as_extraction_says(tmp_path):
    """A PDF gone before the step ran failed as `internal_error` (pdfium's
    FileNotFoundError, when the outline was read first); the sample's encrypted PDF and a
    missing one give no outline."""
    from loralay_build.group.sections import outline_of

    assert outline_of(str(tmp_path / "gone.pdf")) == []
    assert outline_of(str(SAMPLE.parent / "pdf" / "es_encrypted_tutor.pdf")) == []


def test_show_draws_the_section_tree_beside_the_page(tmp_path):
    """`loralay show FILE.pdf` on the LaTeX thesis: a panel beside the page lists every
    heading, indented by level, with its page; the headings of the page drawn (page 9:
    "Chapter 1 Introduction", "1.1 ...") in the section colour, the others grey."""
    from PIL import Image

    from loralay_build.preview import (
        LABEL_COLOURS,
        SCALE,
        TREE_OTHER,
        TREE_WIDTH,
        preview_cuts,
        preview_pdf,
        section_lines,
    )

    pdf = shared_path("layout", "tagged", "en_latex_mit_thesis_template.pdf")
    row, _, _ = preview_cuts(pdf, None, "en", None)
    lines = section_lines(row, 9)
    assert ("1 Chapter 1 Introduction (p. 9)", True) in lines
    assert ("    3 1.1.1 Subsection eqn. (1.2) (p. 10)", False) in lines
    assert [t for t, here in lines if here] == ["1 Chapter 1 Introduction (p. 9)",
                                                "  2 1.1 A section discussing the first "
                                                "issue: J/ψ (p. 9)"]
    png = preview_pdf(pdf, page=9, out=tmp_path / "p9.png", language="en")
    img = np.asarray(Image.open(png).convert("RGB"))
    page_w = round(612 * SCALE)  # US letter
    assert img.shape[1] == page_w + round(TREE_WIDTH * SCALE)
    panel = img[:round(792 * SCALE), page_w + 1:].reshape(-1, 3)
    here = (panel == LABEL_COLOURS["section"]).all(axis=1).sum()
    other = (panel == TREE_OTHER).all(axis=1).sum()
    assert here > 50 and other > here  # two headings here, many elsewhere


def test_an_entry_a_block_list_splits_only_at_an_authors_initials():
    """SciELO's ABNT list (Transinformação): the grouping makes each entry a block, and
    a line inside one that opens with a journal ("Scientometrics, v. 106 ...") or
    "Disponível em:" is no new entry: 45 entries, as the JATS lists (51 before); the
    astronomy list whose blocks hold several one-line entries still splits at "Schiff
    A.J., ..." (an author's initials)."""
    d = extract(shared_path("corpus", "pdf", "pt_scielo_tinf_brasil_china.pdf"))
    refs = references_of(d.words, d.boxes, d.line_ids, d.block_ids, d.labels)
    assert len(refs) == 45
    assert not any(r.startswith(("Scientometrics,", "Disponível")) for r in refs)
    assert refs[2].startswith("Arboit, A. E.;") and "Disponível em:" in refs[2]
    d = extract(shared_path("corpus", "pdf", "es_baaa_awsom.pdf"))
    refs = references_of(d.words, d.boxes, d.line_ids, d.block_ids, d.labels)
    assert any(r.startswith("Schiff A.J.,") for r in refs)


def test_the_card_states_the_accuracy_the_evaluation_measures():
    """The card's figures for the structure columns are the evaluation's: the held-out
    check half (three SciELO papers with JATS) re-measured here gives the card's numbers,
    and a published-features card (no structure columns) says none of them."""
    import importlib.util

    from loralay_build.write.card import STRUCTURE_ACCURACY, CardFacts, card_text

    from .conftest import REPO

    spec = importlib.util.spec_from_file_location("eval_structure",
                                                  REPO / "scripts" / "eval_structure.py")
    ev = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ev)
    check = ("es_scielo_malaga", "pt_scielo_hoehnea_senna", "pt_scielo_rsp_hindex")
    assert all(ev.half(i) == "check" for i in check)
    rows = [ev.evaluate(shared_path("corpus", "pdf", f"{i}.pdf"), i,
                        ev.jats_truth(shared_path("corpus", "meta", f"{i}.xml")), "jats")
            for i in check]

    def mean(k):
        return f"{sum(r[k] for r in rows) / len(rows):.2f}"

    said = STRUCTURE_ACCURACY["sections"]
    assert f"recall 0.98 / {mean('recall')}" in said
    assert f"precision 0.92 / {mean('precision')}" in said
    assert f"level agreement 1.00 / {mean('levels')}" in said
    assert f"0.96 / {mean('words_right')} of the words" in STRUCTURE_ACCURACY["words"]
    counts = [f"{r['true_refs']}/{r['found_refs']}"
              for r in sorted(rows, key=lambda r: r["true_refs"])]
    assert f"{', '.join(counts[:-1])} and {counts[-1]}" in STRUCTURE_ACCURACY["references"]
    assert all(r["refs_matched"] == 1.0 for r in rows)
    facts = CardFacts(name="t", source="HAL", language="fr", split_rule="r")
    assert said in card_text(facts, {"train": 1})
    assert said not in card_text(facts, {"train": 1}, features="published")


def test_headings_match_across_compatibility_forms():
    """The thesis's tagged heading "1.1 ... 𝑱/𝝍" (math italic letters) is the printed
    "1.1 ... J/ψ": titles match NFKC-folded (the evaluation missed it, as would an
    outline written with them)."""
    from loralay_build.group.sections import title_key

    assert title_key("1.1 A section discussing the first issue: 𝑱/𝝍") == \
        title_key("1.1 A section discussing the first issue: J/ψ")
    assert title_key("2 Classiﬁcation") == title_key("Classification")
