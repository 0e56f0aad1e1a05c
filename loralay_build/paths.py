"""File names derived from document ids.

Ids come from outside (`hep-th/9608091`, `S0034-89102010000400007`, or a hostile
`../../x`), so a name keeps only safe characters and carries a short hash of the
full id: two ids that differ only in unsafe characters still get different files,
and no id escapes its folder.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")

# a run folder's entries, named here once (stdlib only, so that reading a dataset does not
# import the writers): `layout.RunFolder` builds every path from them and `owned.py`'s
# RUN_ENTRIES lists them, so what --fresh removes and what the tool writes cannot drift
# apart (crawl/ was written but not listed, and survived --fresh)
README = "README.md"
DATA_DIR = "data"  # the Parquet shards
IMAGES_DIR = "images"  # the page images' config
REPORT_DIR, REPORT_MD, REPORT_JSON = "report", "report.md", "report.json"
STATE_DIR = "state"  # the run state (SQLite)
PDFS_DIR = "pdfs"  # downloaded PDFs
CRAWL_DIR = "crawl"  # the crawls' feeds and job folders (SciELO, KoreaScience)
SLURM_DIR = "slurm"  # scripts, logs and statuses of a submitted run
WORK_DIR = "work"  # CiteSum's intermediate files
DIFF_JSON = "diff.json"  # what a refresh changed since the version before (docs/publishing.md)
RUN_DIRS = (README, DATA_DIR, IMAGES_DIR, REPORT_DIR, REPORT_MD, REPORT_JSON, DIFF_JSON,
            STATE_DIR, PDFS_DIR, CRAWL_DIR, SLURM_DIR, WORK_DIR)
# a shard's name (the content part is absent from datasets written before it)
SHARD_NAME = re.compile(r"^(\w+?)-(\d{5})-of-(\d{5})(?:-[0-9a-f]{12})?\.parquet$")


def safe_name(doc_id: str, suffix: str = "") -> str:
    slug = _UNSAFE.sub("_", doc_id).strip("._-")[:80] or "doc"
    digest = hashlib.sha1(doc_id.encode("utf-8")).hexdigest()[:10]
    return f"{slug}-{digest}{suffix}"


def readable_name(doc_id: str, suffix: str = "") -> str:
    """The id itself when it is already a safe, short file name; else `safe_name`'s."""
    if len(doc_id) <= 100 and not _UNSAFE.search(doc_id) and doc_id.strip("._-") == doc_id:
        return doc_id + suffix
    return safe_name(doc_id, suffix)


def pdf_path_for(pdf_dir: Path, doc_id: str) -> Path:
    return Path(pdf_dir) / safe_name(doc_id, ".pdf")
