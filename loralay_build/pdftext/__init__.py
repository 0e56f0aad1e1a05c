"""Extraction: PDF -> words with boxes, lines, blocks and pages (Poppler)."""

from .poppler import ExtractLimits, extract_document

__all__ = ["ExtractLimits", "extract_document"]
