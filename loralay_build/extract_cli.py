"""`loralay extract`: words of PDFs to stdout or to one file per PDF.

Output names are checked before any work: `a/x.pdf` and `b/x.pdf` would both write
`x.jsonl`, and the second would silently replace the first.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from .errors import ConfigError
from .failures import Failure
from .group import Grouping
from .owned import describe_os_error


def check_outputs(pdfs: Sequence[Path], fmt: str, out_dir: Path | None) -> None:
    if out_dir is None:
        if len(pdfs) > 1:
            raise ConfigError("several PDFs need --out-dir")
        return
    names = Counter(f"{p.stem}.{fmt}" for p in pdfs)
    clash = sorted(n for n, k in names.items() if k > 1)
    if clash:
        same = [str(p) for p in pdfs if f"{p.stem}.{fmt}" == clash[0]]
        raise ConfigError(f"{' and '.join(same[:2])} would both write {out_dir / clash[0]}; "
                          f"give them different names or run them separately")


def _make_out_dir(out_dir: Path) -> None:
    """Made before any PDF is read, so a path that cannot be a folder (a file is there, a
    parent is missing and cannot be made, no permission) is one line, not a traceback after
    the first PDF's work."""
    if out_dir.exists() and not out_dir.is_dir():
        raise ConfigError(f"--out-dir {out_dir}: exists and is not a folder")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ConfigError(f"--out-dir {out_dir}: cannot be made ({describe_os_error(e)})") from e


def extract_files(pdfs: Sequence[Path], fmt: str, out_dir: Path | None, timeout_s: float,
                  max_pages: int, groups: Grouping = "geometry") -> int:
    """Returns how many PDFs failed (each named on stderr with its class)."""
    from .atomic import write_atomic
    from .gcpolicy import settle_heap
    from .group.labels import group_and_label
    from .pdftext import ExtractLimits, extract_document
    from .pdftext.formats import RENDERERS
    from .pdftext.poppler import poppler_version

    if timeout_s <= 0 or timeout_s != timeout_s or timeout_s == float("inf"):
        raise ConfigError(f"--timeout {timeout_s}: must be a finite number of seconds above 0")
    if max_pages < 1:
        raise ConfigError(f"--max-pages {max_pages}: must be 1 or more")
    check_outputs(pdfs, fmt, out_dir)
    if out_dir is not None:
        _make_out_dir(out_dir)
    poppler_version()
    limits = ExtractLimits(timeout_s=timeout_s, max_pages=max_pages)
    settle_heap()
    failed = 0
    for pdf in pdfs:
        result = extract_document(pdf, pdf.stem, limits)
        if isinstance(result, Failure):
            failed += 1
            print(result.line(str(pdf)), file=sys.stderr)
            continue
        body = RENDERERS[fmt](group_and_label(result, groups))  # as a build groups
        if out_dir is None:
            sys.stdout.flush()
            sys.stdout.buffer.write(body)
            sys.stdout.buffer.flush()
        else:
            write_atomic(out_dir / f"{pdf.stem}.{fmt}", body)
    return failed
