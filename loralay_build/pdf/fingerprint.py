"""What a per-document result depends on: its fingerprint's four parts.

Each part is hashed on its own so a rerun can say *why* a document is redone: the
candidate (every field the steps or the dataset read), the PDF's bytes (sha256), the
settings the per-document steps read (`DocumentSettings`: limits are not among them), and
the versions of loralay-build, Poppler, the payload format (and pdfium with images). The
rule that compares them is `ledger.py`'s, the one every result of the project follows.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from ..atomic import file_digest
from ..conf import DocumentSettings
from ..machinery.ledger import Fingerprint, digest
from ..records import Candidate
from ..store.checksums import ChecksumFile, StoredSum

# the candidate fields that reach a stage or a column; pdf_path is where, not what;
# retrieved_at is when: a record fetched again unchanged keeps the document (and the time
# its record was first read); pdf_sha256 is the `pdf` part already; `languages` (those
# kept) only when the source names them
CANDIDATE_FIELDS = ("id", "source", "language", "abstracts", "pdf_url", "publication_date",
                    "split", "title", "license", "record_url", "languages")


def candidate_print(c: Candidate) -> str:
    d = c.to_json()
    return digest({k: d[k] for k in CANDIDATE_FIELDS if k in d})


def real_sha256(value: str | None) -> str | None:
    """A real sha256, or None for the words `PdfChecksums` gives when there is nothing to
    hash ("none", "missing", "not-a-file")."""
    return value if value and len(value) == 64 else None


def settings_print(s: DocumentSettings) -> tuple[str, str]:
    """The hash of the per-document settings, and their JSON (kept to name changed keys)."""
    body = s.model_dump(mode="json")
    if body.get("ocr") == "off":
        del body["ocr"]  # off is today's behaviour: its results keep today's fingerprint
    else:
        from ..pdftext.ocr import ocr_identity

        body["ocr"] = {"mode": body["ocr"], **ocr_identity()}
    return digest(body), json.dumps(body, sort_keys=True)


def document_fingerprint(c: Candidate, pdf_sha256: str, settings_digest: str, tools: str
                         ) -> Fingerprint:
    return Fingerprint.of(candidate=candidate_print(c), pdf=pdf_sha256,
                          settings=settings_digest, versions=tools)


class PdfChecksums:
    """sha256 of PDFs, cached by (path, size, mtime) in a file that `--fresh` keeps, so a
    rerun over 100k unchanged PDFs reads none of them again."""

    def __init__(self, path: Path) -> None:
        self.file = ChecksumFile(path)

    def close(self) -> None:
        self.file.close()

    def sha256(self, pdf: str | None) -> str:
        """The file's sha256; "missing" or "not-a-file" when there is nothing to hash."""
        if not pdf:
            return "none"
        try:
            st = os.stat(pdf)
        except OSError:
            return "missing"
        if not stat.S_ISREG(st.st_mode):
            return "not-a-file"
        known = self.file.get(pdf)
        if known and known.size == st.st_size and known.mtime_ns == st.st_mtime_ns:
            return known.sha256
        digest = _hash_file(pdf)
        self.file.put(pdf, StoredSum(st.st_size, st.st_mtime_ns, digest))
        return digest


def _hash_file(path: str) -> str:
    try:
        return file_digest(path)
    except OSError:
        return "unreadable"
