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
@click.version_option(package_name="loralay-build")
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


def _fail(message: str) -> None:
    click.echo(f"loralay: {message}", err=True)
    sys.exit(2)


def _load(source: str, config: Path | None, manifest: Path | None) -> dict:
    from .config import ConfigError, load_config

    try:
        cfg = load_config(source, config)
    except ConfigError as e:
        _fail(str(e))
    if manifest is not None:
        cfg["manifest"] = str(manifest)
    return cfg


SOURCE = click.option("--source", required=True, help="local, hal, arxiv, pubmed, scielo-es, "
                      "scielo-pt or koreascience.")
OUT = click.option("--out", "out", required=True, type=click.Path(path_type=Path),
                   help="The run's folder: dataset, report, state and PDFs.")
CONFIG = click.option("--config", type=click.Path(path_type=Path), default=None,
                      help="YAML file whose keys override the source's defaults.")
MANIFEST = click.option("--manifest", type=click.Path(path_type=Path), default=None,
                        help="For --source local: the JSON-lines manifest of your PDFs.")
LIMIT = click.option("--limit", type=int, default=None, help="Stop fetching after N documents.")


@main.command()
@SOURCE
@OUT
@CONFIG
@MANIFEST
@LIMIT
def fetch(source: str, out: Path, config: Path | None, manifest: Path | None,
          limit: int | None) -> None:
    """Only harvest candidates and PDFs (resumable); `build` does the rest."""
    from .run.pipeline import run_fetch

    stopped = run_fetch(source, _load(source, config, manifest), out, limit, _fail)
    if stopped:
        _fail(stopped)


@main.command()
@SOURCE
@OUT
@CONFIG
@MANIFEST
@LIMIT
@click.option("--workers", type=int, default=1, show_default=True,
              help="Processes for the per-document stages; the output does not depend on it.")
@click.option("--shard", type=int, default=None, help="Do only shard K of --num-shards.")
@click.option("--num-shards", type=int, default=None)
@click.option("--finish", "finish_only", is_flag=True,
              help="Only merge processed shards into the dataset and report.")
def build(source: str, out: Path, config: Path | None, manifest: Path | None,
          limit: int | None, workers: int, shard: int | None, num_shards: int | None,
          finish_only: bool) -> None:
    """Fetch, extract, strip abstracts, filter, split and write a dataset into --out."""
    from .run.pipeline import BuildRequest, run_build

    if (shard is None) != (num_shards is None) or (
            num_shards is not None and not 0 <= shard < num_shards):  # type: ignore[operator]
        _fail("--shard K and --num-shards N go together, with 0 <= K < N")
    request = BuildRequest(source, _load(source, config, manifest), out, limit, workers,
                           shard, num_shards, finish_only)
    run_build(request, _fail)


if __name__ == "__main__":
    main()
