"""The per-document steps' job under given document settings, for the steps' tests."""

from __future__ import annotations

from loralay_build.conf import DocumentSettings, LimitSettings
from loralay_build.pdf.steps import DocumentJob


def job(**settings: object) -> DocumentJob:
    return DocumentJob(DocumentSettings(**settings), LimitSettings())
