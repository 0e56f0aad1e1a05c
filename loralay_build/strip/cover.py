"""Repository cover pages: a page 1 that the repository put in front of the article.

HAL prepends a page with the deposit record and its bilingual boilerplate; OpenEdition
prepends one with the electronic reference and "Ce document a été généré automatiquement".
Neither is part of the article, and both repeat the title and authors, so they are
dropped before matching. Detection needs one of the boilerplate sentences (compared as
keys, so line breaks, hyphenation, quotes and case do not matter) on page 1 of a
document that has more than one page; the page keeps its physical number in `pages`.
"""

from __future__ import annotations

import bisect

from ..records import Document
from .normalise import text_key

COVER_SENTENCES: tuple[str, ...] = tuple(text_key(s) for s in (
    # HAL, English and French halves of the same notice
    "HAL is a multi-disciplinary open access archive for the deposit and dissemination",
    "L'archive ouverte pluridisciplinaire HAL, est destinée au dépôt et à la diffusion",
    # OpenEdition (Revues.org, OpenEdition Journals and Books)
    "Ce document a été généré automatiquement le",
    "This text was automatically generated on",
))


def cover_page(doc: Document, keys: list[str] | None = None) -> bool:
    """True when page 1 is a HAL or OpenEdition cover page.

    `keys` are the documents' word keys when the caller already has them (saves a pass).
    """
    if len(doc.pages) < 2:
        return False
    end = bisect.bisect_right(doc.word_pages, 1)  # words come in page order
    page1 = [text_key(w) for w in doc.words[:end]] if keys is None else keys[:end]
    first = "".join(page1)
    return any(s in first for s in COVER_SENTENCES)
