"""Repository cover pages: a page 1 that the repository put in front of the article.

HAL prepends a page with the deposit record and its bilingual boilerplate; OpenEdition
prepends one with the electronic reference and "Ce document a été généré automatiquement".
Neither is part of the article, and both repeat the title and authors, so they are
dropped before matching.

A cover page is recognised by all of its signs together, never by one sentence alone
(compared as keys, so line breaks, hyphenation, quotes and case do not matter), on page 1
of a document that has more than one page:
- the repository's notice sentence (either language);
- every label of its deposit record ("HAL Id", "To cite this version"; OpenEdition's
  electronic reference);
- little else: the notice closes the page, at most `TAIL` key characters after it (the
  rest of the notice, a licence line). Above the record there are only the title and the
  authors.

A paper's own page 1 may quote HAL's notice (a paper about open archives, a thesis's
notice page): the rest of the page is its own text, so it keeps its page and abstract.
The page keeps its physical number in `pages`.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from ..records import Document
from .normalise import text_key


@dataclass(frozen=True, slots=True)
class Cover:
    """One repository's cover: its notice sentences (any one of them, as keys) and the
    labels of its deposit record (all of them, each in any of its spellings)."""

    notices: tuple[str, ...]
    labels: tuple[tuple[str, ...], ...]


def _keys(*texts: str) -> tuple[str, ...]:
    return tuple(text_key(t) for t in texts)


COVERS: tuple[Cover, ...] = (
    # HAL, English and French halves of the same notice
    Cover(_keys("HAL is a multi-disciplinary open access archive for the deposit and "
                "dissemination",
                "L'archive ouverte pluridisciplinaire HAL, est destinée au dépôt et à la "
                "diffusion"),
          (_keys("HAL Id"), _keys("To cite this version"))),
    # OpenEdition (Revues.org, OpenEdition Journals and Books)
    Cover(_keys("Ce document a été généré automatiquement le",
                "This text was automatically generated on"),
          (_keys("Référence électronique", "Electronic reference"),)),
)
# Key characters a cover page may hold after the end of its last notice sentence: the
# rest of HAL's French notice (~170), a licence line (~90), a date; a paper's page goes
# on with its own text
TAIL = 400


def cover_page(doc: Document, keys: list[str] | None = None) -> bool:
    """True when page 1 is a HAL or OpenEdition cover page.

    `keys` are the documents' word keys when the caller already has them (saves a pass).
    """
    if len(doc.pages) < 2:
        return False
    end = bisect.bisect_right(doc.word_pages, 1)  # words come in page order
    page1 = [text_key(w) for w in doc.words[:end]] if keys is None else keys[:end]
    return is_cover("".join(page1))


def is_cover(page: str) -> bool:
    """Whether the key text of a page is a repository's cover page (see the module)."""
    for cover in COVERS:
        ends = [page.rfind(n) + len(n) for n in cover.notices if n in page]
        if ends and len(page) - max(ends) <= TAIL and all(
                any(label in page for label in spellings) for spellings in cover.labels):
            return True
    return False
