"""The ligature test document's files and its true words (tests of the glyph repair)."""

from __future__ import annotations

import re
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "glyphs"


def ligature_words() -> list[str]:
    """The words of ligatures.tex between its markers, macros removed."""
    tex = (FIXTURES / "ligatures.tex").read_text()
    body = tex.split("%% BEGIN TEXT")[1].split("%% END TEXT")[0]
    return re.sub(r"\\[a-z]+\{|\}|\\ifdefined\\nokeywords\\else|\\fi\b", " ", body).split()


