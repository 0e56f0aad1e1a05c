"""`loralay`: build datasets, extract words from PDFs.

Errors reach the user as one line naming the input and the reason; a bad document
never stops the others.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import click

from .failures import Failure


@click.group()
@click.option("-v", "--verbose", is_flag=True, help="Debug logging.")
def main(verbose: bool) -> None:
    """Turn scientific PDFs into layout-aware summarization datasets (LoRaLay)."""
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")


@main.command()
@click.argument("pdfs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["jsonl", "tsv"]), default="jsonl",
              show_default=True)
@click.option("--out-dir", type=click.Path(path_type=Path), default=None,
              help="Write one file per PDF here (named after it) instead of stdout.")
@click.option("--timeout", "timeout_s", type=float, default=120.0, show_default=True)
@click.option("--max-pages", type=int, default=1000, show_default=True)
def extract(pdfs: tuple[Path, ...], fmt: str, out_dir: Path | None, timeout_s: float,
            max_pages: int) -> None:
    """Words with boxes, pages, line and block ids of each PDF."""
    from .extract import ExtractLimits, extract_document
    from .extract.formats import RENDERERS
    from .http import write_atomic

    if out_dir is None and len(pdfs) > 1:
        raise click.UsageError("several PDFs need --out-dir")
    limits = ExtractLimits(timeout_s=timeout_s, max_pages=max_pages)
    failed = 0
    for pdf in pdfs:
        result = extract_document(pdf, pdf.stem, limits)
        if isinstance(result, Failure):
            failed += 1
            click.echo(result.line(str(pdf)), err=True)
            continue
        lines = RENDERERS[fmt](result)
        if out_dir is None:
            for line in lines:
                click.echo(line)
        else:
            body = "".join(line + "\n" for line in lines).encode("utf-8")
            write_atomic(out_dir / f"{pdf.stem}.{fmt}", body)
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
