"""An abstract's heading goes with the abstract it heads (issue 41, item 11).

Small one-page papers made with fpdf2: a title, an author line, the heading ("Abstract",
"ABSTRACT", "Resumo", "Résumé", "요 약", ...) on a line of its own or run in before the
abstract's first word, the abstract, a keywords line, "1 Introduction" and a paragraph.
Before, the cut took the abstract and left its heading in the body, a block of one word
that the labels then called a paragraph.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from loralay_build.conf import load_settings
from loralay_build.failures import Failure
from loralay_build.pdftext import extract_document
from loralay_build.records import Candidate
from loralay_build.strip import strip_document

fpdf = pytest.importorskip("fpdf", reason="fpdf2 (dev extra) makes the papers")

DOC = load_settings("local").document()
LATIN = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
HANGUL = Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")
EN = ("We introduce a corpus of scientific papers with their printed layout, built from open "
      "repositories. Every abstract is found in the text and removed, so that a model cannot "
      "copy it. We describe how pieces of an abstract are matched across page breaks.")
PT = ("Este trabalho apresenta um corpus de artigos científicos com a sua disposição "
      "impressa, construído a partir de repositórios abertos. Cada resumo é encontrado no "
      "texto e retirado do corpo do artigo.")
FR = ("Nous présentons un corpus d'articles scientifiques avec leur mise en page imprimée, "
      "construit à partir de dépôts ouverts. Chaque résumé est retrouvé dans le texte puis "
      "retiré du corps de l'article.")
KO = ("본 연구는 공개 저장소에서 수집한 학술 논문의 인쇄 배치를 보존하는 말뭉치를 제안한다. "
      "각 논문의 초록은 본문에서 찾아 제거하며, 페이지 경계에서 나뉜 초록도 조각으로 맞춘다.")
INTRO = ("Scientific summarization needs long documents whose summaries are written by their "
         "authors. Abstract art and summary tables are not what this paper is about.")


def _page(font: Path):
    """A page of fpdf2, its font `font` (skipped without it)."""
    if not font.exists():
        pytest.skip(f"{font} is not installed")
    pdf = fpdf.FPDF(unit="pt", format=(612, 792))
    pdf.add_page()
    pdf.add_font("body", fname=str(font))
    return pdf


def _paper(tmp_path: Path, heading: str, abstract: str, run_in: bool = False,
           font: Path = LATIN) -> Path:
    pdf = _page(font)
    pdf.set_font("body", size=16)
    pdf.multi_cell(500, 22, "Layout corpora for summarization", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("body", size=10)
    pdf.multi_cell(500, 14, "Ana Silva, University of Porto", new_x="LMARGIN", new_y="NEXT")
    pdf.ln(12)
    if run_in:
        pdf.multi_cell(500, 14, f"{heading} {abstract}", new_x="LMARGIN", new_y="NEXT")
    else:
        pdf.set_font("body", size=12)
        pdf.multi_cell(500, 16, heading, new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("body", size=10)
        pdf.multi_cell(500, 14, abstract, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(6)
    pdf.multi_cell(500, 14, "Keywords: corpus, layout, summarization", new_x="LMARGIN",
                   new_y="NEXT")
    pdf.ln(12)
    pdf.set_font("body", size=12)
    pdf.multi_cell(500, 16, "1 Introduction", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("body", size=10)
    pdf.multi_cell(500, 14, INTRO, new_x="LMARGIN", new_y="NEXT")
    out = tmp_path / "paper.pdf"
    pdf.output(str(out))
    return out


def _body(path: Path, lang: str, abstract: str) -> list[str]:
    doc = extract_document(path, "p")
    assert not isinstance(doc, Failure), doc
    r = strip_document(doc, Candidate("p", "local", lang, {lang: abstract}), DOC)
    assert not isinstance(r, Failure), r
    assert r.matches[0].pages == (1,)
    return r.body.words


KEPT = ["Keywords:", "corpus,", "layout,", "summarization", "1", "Introduction"]


@pytest.mark.parametrize(("heading", "lang", "abstract", "font"), [
    ("Abstract", "en", EN, LATIN), ("ABSTRACT", "en", EN, LATIN),
    ("A B S T R A C T", "en", EN, LATIN), ("Summary", "en", EN, LATIN),
    ("Resumo", "pt", PT, LATIN), ("RÉSUMÉ", "fr", FR, LATIN), ("RÉSUMÉS", "fr", FR, LATIN),
    ("요 약", "ko", KO, HANGUL), ("한글 요약:", "ko", KO, HANGUL)],
    ids=["Abstract", "ABSTRACT", "spaced", "Summary", "Resumo", "RESUME", "RESUMES",
         "yo-yak", "hangeul-yoyak"])
def test_a_heading_on_its_own_line_goes_with_its_abstract(tmp_path, heading, lang, abstract,
                                                          font):
    words = _body(_paper(tmp_path, heading, abstract, font=font), lang, abstract)
    assert not set(heading.split()) & set(words[:12]), words[:12]
    # the paper's own words stay: title, authors, keywords line, the introduction, where
    # "Abstract" and "summary" are words of a sentence
    text = " ".join(words)
    assert text.startswith("Layout corpora for summarization Ana Silva, University of Porto ")
    assert " ".join(KEPT) in text and "Abstract art and summary tables" in text


@pytest.mark.parametrize("heading", ["Abstract:", "Abstract.", "ABSTRACT —", "Resumen:"])
def test_a_run_in_heading_goes_with_its_abstract(tmp_path, heading):
    words = _body(_paper(tmp_path, heading, EN, run_in=True), "en", EN)
    assert words[:8] == ["Layout", "corpora", "for", "summarization", "Ana", "Silva,",
                         "University", "of"]
    assert words[9:9 + len(KEPT)] == KEPT, words[:20]


def test_a_heading_that_is_not_before_the_abstract_stays(tmp_path):
    """"Abstract" heads the page, the title and authors between it and the abstract: it
    is the paper's word, not the abstract's heading right before the cut."""
    pdf = _page(LATIN)
    pdf.set_font("body", size=10)
    for line in ("Abstract", "Layout corpora for summarization", "Ana Silva"):
        pdf.multi_cell(500, 14, line, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(12)
    pdf.multi_cell(500, 14, EN, new_x="LMARGIN", new_y="NEXT")
    out = tmp_path / "paper.pdf"
    pdf.output(str(out))
    assert _body(out, "en", EN)[:1] == ["Abstract"]
