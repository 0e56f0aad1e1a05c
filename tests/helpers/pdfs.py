"""PDFs made for a test, shared by the extract, pool, rotation and vertical tests."""

from __future__ import annotations

import subprocess
from pathlib import Path


def _dense_pdf(tmp_path: Path, pages: int) -> Path:
    """Like the 157 KB file of issue #11: one page of 16,695 tiny words, repeated by qpdf
    (the copies share one content stream, so the file stays small)."""
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format=(612, 792))
    pdf.add_page()
    pdf.set_font("helvetica", size=2)
    line = " ".join(["ab"] * 200)
    for i in range(1, 396):
        pdf.text(2, 2.0 * i, line)
    one = tmp_path / "one.pdf"
    pdf.output(str(one))
    out = tmp_path / "dense.pdf"
    subprocess.run(["qpdf", "--empty", "--pages", str(one), ",".join(["1"] * pages), "--",
                    str(out)], check=True)
    return out


LANDSCAPE = ("bench", "pdfs", "mnras-guide.pdf")  # page 6: a pdflscape table, /Rotate 90


def qpdf(*args: str | Path) -> None:
    done = subprocess.run(["qpdf", *map(str, args)], capture_output=True)
    assert done.returncode in (0, 3), done.stderr  # 3: written, with warnings


def turned(src: Path, dst: Path, spec: str) -> Path:
    qpdf(src, f"--rotate={spec}", dst)
    return dst
