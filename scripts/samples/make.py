"""Generate the embedded sample corpus `data/sample/` (PDFs and manifest.jsonl).

The demo and the CI smoke run build a dataset from this corpus, so it must be small,
redistributable and cover the cases the pipeline handles: five languages, one and two
columns, a second abstract in English (after the first, or at the end), a structured
abstract, an abstract across a column break, a HAL cover page, and three broken files
(truncated, encrypted, image-only) that must be dropped with their failure class. Every
text is original and is data: `data/sample/texts/<id>.yaml` (see `model`); the manifest's
abstracts are the printed text.

    python -m loralay_build.samples [--texts data/sample/texts] [--out data/sample]

Needs fpdf2 and Pillow (the `dev` extra), Poppler (pdfinfo, pdftoppm), qpdf and a Korean
font: Debian package fonts-noto-cjk (or fonts-nanum). They are imported or looked for only
when a corpus is built, so `--help` and the data model work without them. Output is
byte-for-byte reproducible with the same versions of these tools.
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
from typing import TYPE_CHECKING

from loralay_build.atomic import write_text_atomic

from .model import Doc, load_docs

if TYPE_CHECKING:
    from .render import Fonts

# The checkout this module sits in (an editable install); a wheel has no data/sample,
# so there --texts and --out must be given.
REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "data" / "sample"
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


def latin_fonts() -> Fonts:
    """PDF core fonts: nothing to embed."""
    from .render import Fonts

    return Fonts("Times", "Helvetica", "I")


def korean_fonts() -> Fonts:
    """The first Korean font found; Poppler needs its ToUnicode map, fpdf2 embeds a subset."""
    from .render import Fonts

    for regular, bold, index in KOREAN_CANDIDATES:
        if Path(regular).is_file():
            bold = bold if Path(bold).is_file() else regular
            files = (("kr", "", regular, index), ("kr", "B", bold, index))
            return Fonts("kr", "kr", "", files)
    sys.exit("loralay_build.samples: no Korean font found. Install the Debian package "
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
    from fpdf import FPDF
    from PIL import Image

    from .render import CREATION_DATE

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


def make_pdf(doc: Doc, fonts: Fonts) -> tuple[bytes, int]:
    """The file as it goes into the corpus, and the page count of the intact document."""
    from .render import render

    intact = render(doc, fonts)
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


def check_tools() -> None:
    for tool in ("pdfinfo", "pdftoppm", "qpdf"):
        if shutil.which(tool) is None:
            sys.exit(f"loralay_build.samples: {tool} not found "
                     "(Debian packages poppler-utils, qpdf)")


def build(out: Path, texts: Path = SAMPLE / "texts") -> list[dict]:
    """Write `out/pdf/*.pdf` and `out/manifest.jsonl` from the texts; returns the entries."""
    check_tools()
    docs = load_docs(texts)  # before anything is deleted: a bad text file changes nothing
    latin, korean = latin_fonts(), korean_fonts()
    pdf_dir = out / "pdf"
    pdf_dir.mkdir(parents=True, exist_ok=True)
    for stale in pdf_dir.glob("*.pdf"):
        stale.unlink()
    entries = []
    for doc in docs:
        data, pages = make_pdf(doc, korean if doc.language == "ko" else latin)
        file = f"pdf/{doc.id}.pdf"
        (out / file).write_bytes(data)
        entries.append(manifest_entry(doc, file, data, pages))
    lines = [json.dumps(e, ensure_ascii=False) for e in entries]
    write_text_atomic(out / "manifest.jsonl", "\n".join(lines) + "\n")
    return entries


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--texts", type=Path, default=SAMPLE / "texts",
                        help="folder of <id>.yaml texts and order.txt (default: %(default)s)")
    parser.add_argument("--out", type=Path, default=SAMPLE,
                        help="where pdf/ and manifest.jsonl go (default: %(default)s)")
    args = parser.parse_args(argv)
    entries = build(args.out, args.texts)
    total = sum(e["bytes"] for e in entries)
    for e in entries:
        print(f"{e['id']:28} {e['kind']:10} {e['pages']} p. {e['bytes']:>8} B "
              f"{','.join(e['abstracts'])}")
    print(f"{len(entries)} documents, {total / 1e6:.2f} MB in {args.out}")


if __name__ == "__main__":
    main()
