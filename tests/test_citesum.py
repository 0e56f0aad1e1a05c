"""CiteSum steps on real S2ORC records (../shared/fixtures/s2orc) and made ones."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from rouge_score import rouge_scorer

from loralay_build.citesum import read2020, readapi
from loralay_build.citesum.read2020 import NotARecord
from loralay_build.citesum.records import CitedPaper, CitingPaper, Paragraph, Span
from loralay_build.citesum.sentences import extend, pysbd_splitter, split_sentences
from loralay_build.citesum.split import split_of
from loralay_build.citesum.steps import (
    NO_CITATION,
    SEVERAL_CITATIONS,
    UNLINKED,
    RougeGate,
    classify,
    mask,
    related_work,
    resolve,
)
from loralay_build.conf import ConfigError, load_settings

from .conftest import REPO

REAL = REPO.parent / "shared" / "fixtures" / "s2orc"
if not REAL.is_dir():
    REAL = Path("/work/shared/fixtures/s2orc")
PATTERN = re.compile(load_settings("citesum").related_work_pattern)
SPLIT = pysbd_splitter()


def real(name: str) -> dict:
    text = (REAL / name).read_text(encoding="utf-8")
    return json.loads(text.splitlines()[0]) if name.endswith(".jsonl") else json.loads(text)


# --- readers on real records ------------------------------------------------------------
def test_2020_pdf_parse_record():
    p = read2020.citing_paper(real("s2orc_20200705_paper_18980380.json"))
    spans = [(q.text[s.start:s.end], s.cited_id) for q in p.paragraphs for s in q.spans]
    assert p.paper_id == "18980380" and len(p.paragraphs) == 55 and len(spans) == 38
    assert spans[0] == ("[1]", "7229756")  # BIBREF0.link


def test_2020_nested_layouts_of_the_release_example_and_doc2json():
    example = read2020.citing_paper(real("s2orc_2020_release_example_paper.json"))
    assert sum(1 for q in example.paragraphs for s in q.spans if s.cited_id) == 14  # `links`
    doc2json = read2020.citing_paper(real("doc2json_pdf_output_N18-3011.json"))
    assert doc2json.paper_id == "N18-3011" and len(doc2json.paragraphs) == 71


def test_2020_metadata_record():
    c = read2020.cited_paper(real("s2orc_2020_metadata_18980380.jsonl"))
    assert c.title.startswith("Distributionally Robust") and len(c.abstract) > 100
    assert c.fields == ["Mathematics", "Computer Science"]
    assert c.journal == c.venue == "IEEE Transactions on Automatic Control"


def test_api_record_sections_nest_by_number():
    p = readapi.citing_paper(real("s2ag_s2orc_256868338.jsonl"))
    by_text = {q.text[:20]: q.sections for q in p.paragraphs}
    assert by_text["According to the Mer"] == ("Introduction",)
    assert ("Preliminaries", "Sharing problems") in by_text.values()  # n="2.1" under n="2"
    spans = [s for q in p.paragraphs for s in q.spans]
    assert len(spans) == 67 and sum(bool(s.cited_id) for s in spans) == 55
    assert sum(s.ref is None for s in spans) == 8  # bibrefs without ref_id: unknown papers
    para = next(q for q in p.paragraphs if "Roemer" in q.text)
    roemer = next(s for s in para.spans if s.ref == "b39")
    assert para.text[roemer.start:roemer.end] == "(Roemer, 1986;"
    assert roemer.cited_id == "154395581"


def test_api_record_without_citations_and_abstracts_record():
    p = readapi.citing_paper(real("s2ag_s2orc_256867980.jsonl"))
    assert all(not q.spans for q in p.paragraphs)
    a = readapi.cited_abstract(real("s2ag_abstracts_208605629.jsonl"))
    assert a.paper_id == "208605629" and a.abstract.startswith("Bacteriophages")


def test_not_a_record():
    with pytest.raises(NotARecord):
        read2020.citing_paper({"title": "x"})
    with pytest.raises(NotARecord):
        readapi.citing_paper({"corpusid": 1, "content": {"text": "x", "annotations": {
            "paragraph": "[{"}}})


def api_record(headers: list[tuple[str | None, str]], paragraphs: list[str]) -> dict:
    """Headers (n, title) each followed by the next paragraph."""
    text, heads, paras = "", [], []
    for (n, title), para in zip(headers, paragraphs):
        heads.append({"start": len(text), "end": len(text) + len(title),
                      **({"attributes": {"n": n}} if n else {})})
        text += title + "\n"
        paras.append({"start": len(text), "end": len(text) + len(para)})
        text += para + "\n"
    return {"corpusid": 7, "content": {"text": text, "annotations": {
        "sectionheader": json.dumps(heads), "paragraph": json.dumps(paras)}}}


def test_nested_related_work_subsections_belong_to_it():
    rec = api_record([("1", "Introduction"), ("2", "Related Work"), ("2.1", "Summarization"),
                      ("2.2", "Citation text"), ("3", "Method"), (None, "Appendix")],
                     ["a", "b", "c", "d", "e", "f"])
    p = readapi.citing_paper(rec)
    assert [q.sections for q in p.paragraphs][2:] == [
        ("Related Work", "Summarization"), ("Related Work", "Citation text"), ("Method",),
        ("Appendix",)]
    assert [q.text for _, q in related_work(p, PATTERN)] == ["b", "c", "d"]
    assert p.paragraphs[2].section == "Summarization"


@pytest.mark.parametrize("title,hit", [
    ("Related Work", True), ("2 Related Works", True), ("II. RELATED WORK", True),
    ("Background and Related Work", True), ("Prior Work", True), ("Literature Review", True),
    ("Introduction", False), ("Background", False), ("Unrelated work", False)])
def test_related_work_pattern(title, hit):
    assert bool(PATTERN.search(title)) is hit


def test_only_the_first_related_work_run():
    para = [Paragraph((s,), s, ()) for s in ("Intro", "Related Work", "Related Work", "Method",
                                             "Related work again")]
    run = related_work(CitingPaper("1", tuple(para)), PATTERN)
    assert [i for i, _ in run] == [1, 2]


# --- sentences, spans, REF ----------------------------------------------------------------
def sents(text: str, *cites: tuple[str, str | None]) -> list:
    spans, at = [], 0
    for cite, cited in cites:
        start = text.index(cite, at)
        spans.append(Span(start, start + len(cite), f"b{len(spans)}", cited))
        at = start + len(cite)
    return split_sentences(text, tuple(spans), SPLIT)


@pytest.mark.parametrize("text,cite,tgt", [
    ("Old. Taigman et al. [8] proposed DeepFace for faces.", "[8]", "REF proposed DeepFace for "
     "faces."),
    ("Old. Taigman et al. [8] proposed DeepFace for faces.", "Taigman et al. [8]",
     "REF proposed DeepFace for faces."),
    ("Old. It was shown (Smith, 2020) that faces matter.", "(Smith, 2020)",
     "It was shown REF that faces matter."),
    ("Old. It was shown (Smith, 2020) that faces matter.", "Smith, 2020",
     "It was shown REF that faces matter."),
    ("Old. Graphs were surveyed [12].", "[12]", "Graphs were surveyed REF."),
    ("Old. Smith and Jones [3] built it.", "[3]", "REF built it."),
])
def test_ref_replacement_styles(text, cite, tgt):
    out = sents(text, (cite, "9"))
    assert len(out) == 2 and out[0].text == "Old." and not out[0].spans
    assert mask(out[1])[0] == tgt
    assert "REF" not in mask(out[1])[1] and "[" not in mask(out[1])[1]


def test_span_is_never_cut_between_sentences():
    # pysbd alone cuts after "al." (tested here so a pysbd change is seen)
    assert len(SPLIT("Taigman et al. [8] proposed DeepFace.")) == 2
    out = sents("Taigman et al. [8] proposed DeepFace.", ("[8]", "1"))
    assert [s.text for s in out] == ["Taigman et al. [8] proposed DeepFace."]


def test_extend_leaves_a_capitalised_word_alone():
    text = "In [8] we see."
    assert extend(text, Span(3, 6, "b", "1")).start == 3


def test_one_citation_rule():
    (s,) = sents("A method (Smith, 2020) and (Lee, 2019).", ("(Smith, 2020)", "1"),
                 ("(Lee, 2019)", "2"))
    assert classify(s) == SEVERAL_CITATIONS
    (s,) = sents("A method [4] uses [4] twice.", ("[4]", "1"), ("[4]", "1"))
    s = type(s)(s.start, s.end, s.text, tuple(Span(x.start, x.end, "b4", "1") for x in s.spans))
    assert classify(s) is None and mask(s)[0] == "A method REF uses REF twice."
    (s,) = sents("Graphs were surveyed [12].", ("[12]", None))
    assert classify(s) == UNLINKED
    (s,) = sents("No citation here.")
    assert classify(s) == NO_CITATION


def test_a_span_without_entry_is_another_paper():
    text = "A [1] and [2]."
    spans = (Span(2, 5, "b1", "11"), Span(10, 13, None, None))
    (s,) = split_sentences(text, spans, SPLIT)
    assert classify(s) == SEVERAL_CITATIONS


def test_abstract_floor():
    assert resolve(None, 100) == "no_abstract"
    assert resolve(CitedPaper("1", "x" * 100), 100) == "short_abstract"
    assert resolve(CitedPaper("1", "x" * 101), 100) is None


# --- ROUGE gate -------------------------------------------------------------------------------
SENTENCE = "proposed DeepFace, a deep network for face verification on LFW."
ABSTRACT = "We present DeepFace, a deep neural network for face verification."


def test_rouge_gate_is_rouge_score_recall_and_inclusive_at_the_edges():
    direct = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True).score(
        target=SENTENCE, prediction=ABSTRACT)
    recalls = RougeGate([0, 0, 0]).recalls(SENTENCE, ABSTRACT)
    assert recalls == (direct["rouge1"].recall, direct["rouge2"].recall,
                       direct["rougeL"].recall)
    assert 0 < recalls[1] < recalls[0] < 1
    assert RougeGate(list(recalls)).passes(recalls)
    for i in range(3):
        above = list(recalls)
        above[i] += 1e-9
        assert not RougeGate(above).passes(recalls)


def test_rouge_gate_equals_rouge_score_on_real_texts():
    """The gate keeps the stemmer's answers (speed); its scores stay rouge-score's, on every
    sentence of a real paper against the real 2020 and Datasets API abstracts, twice."""
    direct = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
    paper = read2020.citing_paper(real("s2orc_20200705_paper_18980380.json"))
    sentences = [s.text for p in paper.paragraphs for s in split_sentences(p.text, p.spans, SPLIT)]
    abstracts = [real("s2orc_2020_metadata_18980380.jsonl")["abstract"],
                 real("s2ag_abstracts_208605629.jsonl")["abstract"]]
    gate = RougeGate([0, 0, 0])
    assert len(sentences) > 100
    for _ in range(2):
        for sentence in sentences:
            for abstract in abstracts:
                want = direct.score(target=sentence, prediction=abstract)
                assert gate.recalls(sentence, abstract) == tuple(
                    want[k].recall for k in RougeGate.KEYS)


def test_default_floors_are_the_papers():
    assert load_settings("citesum").rouge_recall_min == [0.5, 0.2, 0.4]


# --- split ------------------------------------------------------------------------------------
def test_split_is_deterministic_and_near_90_5_5():
    ids = [str(i) for i in range(20_000)]
    got = Counter(split_of(i, [0.9, 0.05, 0.05]) for i in ids)
    assert abs(got["train"] / 20_000 - 0.9) < 0.01 and abs(got["test"] / 20_000 - 0.05) < 0.01
    assert [split_of(i, [0.9, 0.05, 0.05]) for i in ids[:50]] == \
        [split_of(i, [0.9, 0.05, 0.05]) for i in ids[:50]]
    assert split_of("42", [1.0, 0.0, 0.0]) == "train"


# --- settings ---------------------------------------------------------------------------------
def test_settings_refuse_a_bad_pattern_and_floors(tmp_path):
    with pytest.raises(ConfigError, match="related_work_pattern"):
        load_settings("citesum", overrides={"related_work_pattern": "("})
    with pytest.raises(ConfigError, match="rouge_recall_min"):
        load_settings("citesum", overrides={"rouge_recall_min": [0.5, 0.2]})
