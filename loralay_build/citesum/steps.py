"""The paper's construction steps on one citing paper (1-3, 5) and on one pair (4).

1. the Related Work section: the first contiguous run of paragraphs under a header matching
   `related_work_pattern` (the released code's rule; any enclosing header counts, so the
   Datasets API's nested subsections belong to their Related Work section);
2. its sentences (`sentences.py`);
3. those citing exactly one paper, through a linked bibliography entry (the abstract is
   checked in the second pass, `resolve`);
4. the ROUGE recall gate, on the sentence with its citation removed;
5. the citation replaced by `REF`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

from .. import rouge
from .records import CitedPaper, CitingPaper, Paragraph, Span
from .sentences import Sentence, Splitter, split_sentences

REF = "REF"
# drop reasons, in funnel order; each names the step that a sentence or paper failed
NO_RELATED_WORK = "no_related_work"
NO_CITATION = "no_citation"
SEVERAL_CITATIONS = "several_citations"
UNLINKED = "unlinked"
NO_ABSTRACT = "no_abstract"
SHORT_ABSTRACT = "short_abstract"
LOW_ROUGE = "low_rouge"
# the drops the report lists, in funnel order (a sentence without citation is counted,
# not dropped: it was never a candidate)
DROPS = (NO_RELATED_WORK, SEVERAL_CITATIONS, UNLINKED, NO_ABSTRACT, SHORT_ABSTRACT, LOW_ROUGE)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A sentence citing one linked paper: what pass 1 writes to disk."""

    id: str
    citing_paper_id: str
    cited_id: str
    section: str
    sentence: str
    tgt: str
    stripped: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def related_work(paper: CitingPaper, pattern: re.Pattern[str]) -> list[tuple[int, Paragraph]]:
    """(index, paragraph) of the first contiguous run under a matching header."""
    run: list[tuple[int, Paragraph]] = []
    for i, p in enumerate(paper.paragraphs):
        if any(pattern.search(s) for s in p.sections):
            run.append((i, p))
        elif run:
            break
    return run


def _papers(spans: tuple[Span, ...]) -> set[str]:
    """Distinct cited papers: one per bibliography entry, one per span without an entry."""
    return {sp.ref if sp.ref else f"@{sp.start}" for sp in spans}


def _masked(text: str, spans: tuple[Span, ...], by: str) -> str:
    out, at = [], 0
    for sp in sorted(spans, key=lambda s: s.start):
        out += [text[at:sp.start], by]
        at = sp.end
    out.append(text[at:])
    return re.sub(r"\s+([.,;:])", r"\1", re.sub(r"\s+", " ", "".join(out))).strip()


def mask(sentence: Sentence) -> tuple[str, str]:
    """(sentence with REF, sentence with the citation removed): step 5, and step 4's text."""
    return _masked(sentence.text, sentence.spans, REF), _masked(sentence.text, sentence.spans, "")


def classify(sentence: Sentence) -> str | None:
    """None when the sentence cites exactly one paper through a linked entry, else why not."""
    cited = _papers(sentence.spans)
    if not cited:
        return NO_CITATION
    if len(cited) > 1:
        return SEVERAL_CITATIONS
    return None if sentence.spans[0].cited_id else UNLINKED


def sentences_of(paper: CitingPaper, pattern: re.Pattern[str], splitter: Splitter
                 ) -> Iterator[tuple[str, str, Sentence]]:
    """(id, section, sentence) of every Related Work sentence; the id is stable across runs
    and formats: citing id, paragraph's place in the run, sentence's place in the paragraph."""
    for k, (_, p) in enumerate(related_work(paper, pattern)):
        for j, s in enumerate(split_sentences(p.text, p.spans, splitter)):
            yield f"{paper.paper_id}-{k}-{j}", p.section, s


def candidate(paper_id: str, sid: str, section: str, s: Sentence) -> Candidate:
    tgt, stripped = mask(s)
    return Candidate(sid, paper_id, str(s.spans[0].cited_id), section, s.text, tgt, stripped)


def resolve(cited: CitedPaper | None, min_chars: int) -> str | None:
    """None when the cited paper has an abstract longer than `min_chars`, else why not."""
    if cited is None or not cited.abstract:
        return NO_ABSTRACT
    return SHORT_ABSTRACT if len(cited.abstract) <= min_chars else None


class RougeGate:
    """Step 4: recall of the sentence's n-grams in the abstract (`rouge-score`,
    score(target=sentence, prediction=abstract), stemming on), each >= its floor; its
    tokenizer is rouge-score's own (`rouge.ROUGE_SCORE`: CiteSum is English)."""

    KEYS = ("rouge1", "rouge2", "rougeL")

    def __init__(self, floors: list[float]) -> None:
        self.floors = floors
        self.scorer = rouge.scorer(self.KEYS, rouge.ROUGE_SCORE)

    def recalls(self, sentence: str, abstract: str) -> tuple[float, float, float]:
        scores = self.scorer.score(target=sentence, prediction=abstract)
        r1, r2, rl = (scores[k].recall for k in self.KEYS)
        return r1, r2, rl

    def passes(self, recalls: tuple[float, ...]) -> bool:
        return all(r >= f for r, f in zip(recalls, self.floors))
