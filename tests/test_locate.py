"""Matcher units: key normalisation, the boundary-word rule, junk inside a match, pieces."""

from __future__ import annotations

from loralay_build.failures import Failure
from loralay_build.records import Candidate, Document
from loralay_build.strip import strip_abstracts
from loralay_build.strip.locate import Budget, Haystack, locate
from loralay_build.strip.normalise import KeyedText, text_key, word_keys

from .helpers.locate import ABSTRACT, AFTER, BEFORE, CFG, _doc


def _strip(words: list[str], abstract: str = ABSTRACT) -> tuple[Document, list]:
    r = strip_abstracts(_doc(words), Candidate("t", "x", "en", {"en": abstract}), CFG)
    assert not isinstance(r, Failure), r
    return r


def test_keys_ignore_forms_case_punctuation_and_hyphenation():
    assert text_key("“Pro-\nducing” ﬁsh—ÉTÉ, n° 2") == text_key('"producing" fish - ete, n 2')
    assert text_key("ı́ndice") == text_key("índice") == "indice"
    assert word_keys(["시스", "템은", "—", "Œuvre"]) == ["시스", "템은", "", "oeuvre"]


def test_boundary_words_follow_the_half_rule_or_a_punctuation_break():
    words = ["ABSTRACTWe", "study", "1Large", "Résumé—El", "fin.Keywords:", "tail"]
    kt = KeyedText(word_keys(words), words)
    t = kt.text
    # 2 of "abstractwe"'s 10 characters covered, no punctuation break: the word stays
    assert kt.words_covered(t.index("we"), t.index("1large")) == (1, 2)
    # 5 of 6 covered: the word goes, and the cut does not move on to the next word
    assert kt.words_covered(t.index("large"), t.index("resume")) == (2, 3)
    # a label glued to the first word by a dash, a keyword label glued to the last by a
    # period: the edge falls on the break, so both glued words go
    assert kt.words_covered(t.index("el"), t.index("keywords")) == (3, 5)
    assert kt.words_covered(t.index("el"), t.index("tail")) == (3, 5)


def test_mid_word_start_does_not_shift_the_cut():
    body, _ = _strip(BEFORE + ["AbstractWe"] + ABSTRACT.split()[1:] + AFTER)
    assert body.words == BEFORE + ["AbstractWe"] + AFTER  # "We" is 2 of 10 characters
    body, _ = _strip(BEFORE + ["Abstract—We"] + ABSTRACT.split()[1:] + AFTER)
    assert body.words == BEFORE + AFTER  # the label is glued by a dash: it goes too
    body, _ = _strip(BEFORE + ["*We"] + ABSTRACT.split()[1:] + AFTER)
    assert body.words == BEFORE + AFTER


def test_page_furniture_inside_the_abstract_stays_in_the_body():
    words = ABSTRACT.split()
    furniture = ["Electronic", "copy", "available", "at:", "https://ssrn.com/abstract=3404698"]
    body, matches = _strip(BEFORE + words[:30] + furniture + words[30:] + AFTER)
    assert body.words == BEFORE + furniture + AFTER  # 52 junk characters: over budget, pieces
    assert matches[0].method == "split"
    # within budget: one alignment, cut around the running head (>= 24 key characters)
    header = ["Lo", "et", "al.", "S2ORC:", "The", "Semantic", "Scholar", "Corpus", "2"]
    body, matches = _strip(BEFORE + words[:30] + header + words[30:] + AFTER)
    assert body.words == BEFORE + header + AFTER
    assert matches[0].method == "fuzzy"
    # a page number (shorter than JUNK) is not worth a cut: it goes with the abstract
    body, matches = _strip(BEFORE + words[:30] + ["2"] + words[30:] + AFTER)
    assert body.words == BEFORE + AFTER


def test_abstract_split_far_apart_is_found_piecewise_and_must_be_whole():
    words = ABSTRACT.split()
    column = ("Most text-mining research relies on corpora whose documents were chosen "
              "for their licences rather than their content. ") * 12
    body, matches = _strip(BEFORE + words[:25] + column.split() + words[25:] + AFTER)
    assert body.words == BEFORE + column.split() + AFTER
    assert {m.method for m in matches} == {"split"}
    # the second half absent: the first half alone is not enough
    r = strip_abstracts(_doc(BEFORE + words[:25] + column.split() + AFTER),
                        Candidate("t", "x", "en", {"en": ABSTRACT}), CFG)
    assert isinstance(r, Failure) and r.cls.value == "irretrievable_abstract"


def test_every_copy_is_removed():
    body, matches = _strip(BEFORE + ABSTRACT.split() + AFTER + ABSTRACT.split())
    assert body.words == BEFORE + AFTER and len(matches) == 2


def test_short_abstracts_are_only_matched_exactly():
    hay = Haystack(text_key(" ".join(BEFORE + AFTER)))
    assert locate(hay, "Allen Institute", Budget()) is not None
    assert locate(hay, "Allen Instituut", Budget()) is None
