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
