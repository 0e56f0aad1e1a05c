"""Documents around an abstract, shared by the locate and abstract-pieces tests."""

from __future__ import annotations

from loralay_build.conf import DocumentSettings
from loralay_build.records import Document, Page

CFG = DocumentSettings(max_edit_ratio=0.15, max_edits=60, min_abstract_chars=40,
                       drop_cover_page=True)
# The real S2ORC abstract (en_acl_s2orc in the corpus), as metadata gives it.
ABSTRACT = ("We introduce S2ORC, a large corpus of 81.1M English-language academic papers "
            "spanning many academic disciplines. The corpus consists of rich metadata, paper "
            "abstracts, resolved bibliographic references, as well as structured full text for "
            "8.1M open access papers. Full text is annotated with automatically-detected inline "
            "mentions of citations, figures, and tables, each linked to their corresponding "
            "paper objects.")
BEFORE = ["Kyle", "Lo", "Lucy", "Lu", "Wang", "Allen", "Institute", "for", "Artificial",
          "Intelligence"]
AFTER = ["1", "Introduction", "Academic", "papers", "are", "an", "increasingly", "important",
         "textual", "domain"]


def _doc(words: list[str]) -> Document:
    """A bare word list: no layout, so each word is a printed line of its own (no part of
    an abstract shares a line with the body, `Haystack.fills_lines`; a heading word before
    the abstract fills its line and goes with it)."""
    n = len(words)
    return Document("t", [Page(1, 600, 800)], list(words), [(0.0, 0.0, 1.0, 1.0)] * n,
                    [1] * n, list(range(n)), [0] * n)
