"""`loralay_build.text(row)`: readable text from a row's word, line and block columns, a
line-end hyphen mended where the document's own spelling says so (issue 46, 3)."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from loralay_build.errors import ConfigError
from loralay_build.reading import text


def row(*lines: tuple[int, str], sections: list[int] | None = None) -> dict:
    """A row from (block id, "words of one line") pairs, one line id each."""
    words, line_ids, block_ids = [], [], []
    for k, (block, line) in enumerate(lines):
        for w in line.split(" "):
            words.append(w)
            line_ids.append(k)
            block_ids.append(block)
    out = {"article_words": words, "article_line_ids": line_ids,
           "article_block_ids": block_ids}
    if sections is not None:
        out["article_section_ids"] = [sections[b] for b in block_ids]
    return out


def test_a_line_end_hyphen_is_mended_within_its_block_only():
    r = row((0, "a word of Cita-"), (0, "tion and a well-"), (0, "known idea, also well-known"),
            (1, "Next block"), (1, "ends in Pre-"), (2, "tending not"))
    assert text(r) == ("a word of Citation and a well-known idea, also well-known\n\n"
                       "Next block ends in Pre-\n\ntending not")
    assert text(r, by="line") == ("a word of Citation\nand a well-known\nidea, also well-known"
                                  "\n\nNext block\nends in Pre-\n\ntending not")


def test_inside_a_line_only_a_word_the_document_spells_whole_is_mended():
    r = row((0, "a langage intermé- diaire and pre- and post-processing, intermédiaire"))
    assert text(r) == "a langage intermédiaire and pre- and post-processing, intermédiaire"


def test_a_hyphen_stays_before_a_capital_a_number_or_a_lone_dash():
    r = row((0, "the Franco-"), (0, "Prussian war of 1870-"), (0, "1871 and -"), (0, "so on"))
    assert text(r) == "the Franco- Prussian war of 1870- 1871 and - so on"


def test_a_joined_word_the_document_spells_whole_loses_its_hyphen():
    r = row((0, "the data-"), (0, "base and the database, a data-driven"))
    assert text(r) == "the database and the database, a data-driven"
    soft = row((0, "an exam\u00ad"), (0, "ple"))
    assert text(soft) == "an example"


def test_small_capitals_split_by_poppler_are_one_word_when_their_boxes_touch():
    r = row((0, "S CIENCE A CASE"))
    r["article_bboxes"] = [[10, 10, 18, 22], [18.5, 12, 60, 22], [70, 10, 78, 22],
                           [85, 12, 110, 22]]
    assert text(r) == "SCIENCE A CASE"  # the article "A" stands 7 points off: two words
    del r["article_bboxes"]
    assert text(r) == "S CIENCE A CASE"


def test_sections_are_set_apart_further_than_blocks():
    r = row((0, "Title"), (1, "Intro one"), (2, "Intro two"), (3, "Methods"),
            sections=[-1, 0, 0, 1])
    assert text(r, by="section") == "Title\n\n\nIntro one\n\nIntro two\n\n\nMethods"


@pytest.mark.parametrize("bad, words", [
    ({"article_words": ["a"]}, "no 'article_line_ids' column"),
    ({"article_words": ["a", "b"], "article_line_ids": [0], "article_block_ids": [0, 0]},
     "'article_line_ids' has 1 values for 2 words"),
])
def test_a_row_without_the_columns_is_one_line(bad, words):
    with pytest.raises(ConfigError, match=words):
        text(bad)
    with pytest.raises(ConfigError, match="by='page': one of line, block, section"):
        text(row((0, "a")), by="page")
    with pytest.raises(ConfigError, match="by='section' needs"):
        text(row((0, "a")), by="section")


def test_no_line_end_hyphen_is_left_on_the_shared_corpus(built_corpus):
    """Where Poppler's words end a line with a hyphen and the next line of the same block
    goes on in lower case, the text has the one word, never "Cita- tion"."""
    out = built_corpus[0]
    pairs = 0
    for path in sorted((out / "data").glob("*.parquet")):
        for r in pq.read_table(path).to_pylist():
            words, lines, blocks = (r["article_words"], r["article_line_ids"],
                                    r["article_block_ids"])
            body = text(r)
            for i in range(len(words) - 1):
                w, n = words[i], words[i + 1]
                if lines[i] != lines[i + 1] and blocks[i] == blocks[i + 1] and \
                        len(w) > 1 and w.endswith("-") and w[-2].isalpha() and n[:1].islower():
                    pairs += 1
                    assert w[:-1] + n in body or w + n in body, (r["article_id"], w, n)
                    left = f"{w} {n}"  # only where the two are no line end of one block
                    assert body.count(left) <= sum(
                        1 for k in range(len(words) - 1) if (words[k], words[k + 1]) == (w, n)
                        and lines[k] == lines[k + 1]), (r["article_id"], w, n)
    assert pairs >= 20  # the corpus has them: the check is not empty
