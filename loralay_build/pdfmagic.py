"""The one rule for "is this a PDF at all": `%PDF-` within the first KB.

Downloads, the Scrapy pipeline, reused files and the extractor all ask it, so a file one of
them accepts is never refused by another.
"""

from __future__ import annotations

from pathlib import Path

PDF_MAGIC = b"%PDF-"
HEAD = 1024  # PDF readers accept the header anywhere in the first KB


def has_pdf_magic(head: bytes) -> bool:
    return PDF_MAGIC in head[:HEAD]


def is_pdf_file(path: str | Path) -> bool:
    """A readable file that starts like a PDF (a download left by a killed run, say).

    Any path that cannot be opened is simply not one: a symlink loop, a name too long, no
    permission (OSError), a NUL byte (ValueError)."""
    try:
        with open(path, "rb") as fh:
            return has_pdf_magic(fh.read(HEAD))
    except (OSError, ValueError):
        return False
