"""The pool tests' task functions, in a module a worker (and a parent in a subprocess)
imports by name."""

from __future__ import annotations

import os
import time
from pathlib import Path

from loralay_build.pdftext import ExtractLimits, extract_document


# module-level task functions: workers import them by name
def _extract(path: str, limits: ExtractLimits):
    return extract_document(path, Path(path).stem, limits)


def _task(kind: str, arg: object):
    """One task of each kind the pool must survive; the others return their pid."""
    name, _, value = kind.partition(":")
    if name == "sleep":
        time.sleep(float(value))
    elif name == "hog":
        chunks = [bytearray(1 << 20) for _ in range(int(value))]  # touched: really allocated
        return len(chunks)
    elif name == "exit":
        os._exit(int(value))
    elif name == "raise":
        raise ValueError(value)
    return os.getpid()
