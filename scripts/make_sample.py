"""Generate the embedded sample corpus `data/sample/` (PDFs and manifest.jsonl).

The demo and the CI smoke run build a dataset from this corpus, so it must be small,
redistributable and cover the cases the pipeline handles: five languages, one and two
columns, a second abstract in English (after the first, or at the end), a structured
abstract, an abstract across a column break, a HAL cover page, and three broken files
(truncated, encrypted, image-only) that must be dropped with their failure class. Every
text is original (see sample_texts_*.py); the manifest's abstracts are the printed text.

    python scripts/make_sample.py [--out data/sample]

Needs fpdf2 (the `dev` extra), Pillow, Poppler (pdfinfo, pdftoppm), qpdf and a Korean
font: Debian package fonts-noto-cjk (or fonts-nanum). Output is byte-for-byte
reproducible with the same versions of these tools.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from fpdf import FPDF
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sample_docs import Doc, all_docs  # noqa: E402
from sample_render import CREATION_DATE, Fonts, render  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
LATIN = Fonts("Times", "Helvetica", "I")  # PDF core fonts: nothing to embed
NOTO = "/usr/share/fonts/opentype/noto/NotoSansCJK-{}.ttc"
NANUM = "/usr/share/fonts/truetype/nanum/NanumGothic{}.ttf"
# (regular, bold, index in the collection); index 1 of Noto Sans CJK is the KR face.
KOREAN_CANDIDATES = (
    (NOTO.format("Regular"), NOTO.format("Bold"), 1),
    (NANUM.format(""), NANUM.format("Bold"), 0),
)
CUT_AT = 0.55  # the corrupted file keeps this share of its bytes
PASSWORDS = ("user", "owner")
SCAN_DPI, SCAN_QUALITY = 100, 40


def korean_fonts() -> Fonts:
    """The first Korean font found; Poppler needs its ToUnicode map, fpdf2 embeds a subset."""
    for regular, bold, index in KOREAN_CANDIDATES:
        if Path(regular).is_file():
            bold = bold if Path(bold).is_file() else regular
            files = (("kr", "", regular, index), ("kr", "B", bold, index))
            return Fonts("kr", "kr", "", files)
    sys.exit("make_sample.py: no Korean font found. Install the Debian package "
             "fonts-noto-cjk (apt-get install fonts-noto-cjk), or fonts-nanum.")


def run(*cmd: str) -> None:
    subprocess.run(cmd, check=True, capture_output=True)


def page_count(pdf: bytes) -> int:
    with tempfile.NamedTemporaryFile(suffix=".pdf") as f:
        f.write(pdf)
        f.flush()
        out = subprocess.run(["pdfinfo", f.name], check=True, capture_output=True, text=True)
    return int(next(line.split()[1] for line in out.stdout.splitlines()
                    if line.startswith("Pages:")))


def encrypt(pdf: bytes) -> bytes:
    """AES-128 with a static id and IV: Poppler asks for the password, and the bytes are
    reproducible (AES-256 draws a random file key on every run)."""
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp, "in.pdf"), Path(tmp, "out.pdf")
        src.write_bytes(pdf)
        run("qpdf", "--static-id", "--static-aes-iv", "--encrypt", *PASSWORDS, "128",
            "--use-aes=y", "--", str(src), str(dst))
        return dst.read_bytes()


def scan(pdf: bytes) -> bytes:
    """Every page as a low-resolution grayscale JPEG, in a PDF with no text layer."""
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "in.pdf").write_bytes(pdf)
        run("pdftoppm", "-r", str(SCAN_DPI), "-gray", str(Path(tmp, "in.pdf")),
            str(Path(tmp, "page")))
        pages = sorted(Path(tmp).glob("page-*.pgm"))
        out = FPDF(format="A4")
        out.set_creation_date(CREATION_DATE)
        for page in pages:
            jpeg = io.BytesIO()
            Image.open(page).convert("L").save(jpeg, "JPEG", quality=SCAN_QUALITY)
            out.add_page()
            out.image(jpeg, x=0, y=0, w=210, h=297)
    return bytes(out.output())


def make_pdf(doc: Doc, korean: Fonts) -> tuple[bytes, int]:
    """The file as it goes into the corpus, and the page count of the intact document."""
    intact = render(doc, korean if doc.language == "ko" else LATIN)
    pages = page_count(intact)
    if doc.kind == "corrupted":
        return intact[: int(len(intact) * CUT_AT)], pages
    if doc.kind == "encrypted":
        return encrypt(intact), pages
    if doc.kind == "scanned":
        return scan(intact), pages
    return intact, pages


def manifest_entry(doc: Doc, file: str, data: bytes, pages: int) -> dict:
    return {
        "id": doc.id,
        "file": file,
        "language": doc.language,
        "abstracts": {a.lang: a.text for a in doc.abstracts},
        "title": doc.title,
        "publication_date": doc.date,
        "pdf_url": None,
        "kind": doc.kind,
        "pages": pages,
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "notes": doc.notes,
    }


def build(out: Path) -> list[dict]:
    for tool in ("pdfinfo", "pdftoppm", "qpdf"):
        if shutil.which(tool) is None:
            sys.exit(f"make_sample.py: {tool} not found (Debian packages poppler-utils, qpdf)")
    korean = korean_fonts()
    pdf_dir = out / "pdf"
    pdf_dir.mkdir(parents=True, exist_ok=True)
    for stale in pdf_dir.glob("*.pdf"):
        stale.unlink()
    entries = []
    for doc in all_docs():
        data, pages = make_pdf(doc, korean)
        file = f"pdf/{doc.id}.pdf"
        (out / file).write_bytes(data)
        entries.append(manifest_entry(doc, file, data, pages))
    lines = [json.dumps(e, ensure_ascii=False) for e in entries]
    (out / "manifest.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return entries


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "data" / "sample")
    args = parser.parse_args()
    entries = build(args.out)
    total = sum(e["bytes"] for e in entries)
    for e in entries:
        print(f"{e['id']:28} {e['kind']:10} {e['pages']} p. {e['bytes']:>8} B "
              f"{','.join(e['abstracts'])}")
    print(f"{len(entries)} documents, {total / 1e6:.2f} MB in {args.out}")


if __name__ == "__main__":
    main()
