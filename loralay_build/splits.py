"""The split names every dataset uses, in load order (the writer, the report, the card,
the refresh and CiteSum name them; one vocabulary, below all of them)."""

from __future__ import annotations

SPLITS: tuple[str, ...] = ("train", "validation", "test")
