"""`loralay`: a thin layer over the Python API (`api.py`).

Every error a user can act on arrives as a `LoralayError` and leaves as one line on
stderr with exit status 2; a bad document never stops the others (it is a classed
failure in the run state, not an exception).
"""

from __future__ import annotations

import logging
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from . import registry
from .errors import LoralayError
from .failures import RETRYABLE_ON_REQUEST
from .limits import DEFAULT_LIMITS
from .owned import storage_problem

# the commands whose rerun continues where an interrupted one stopped (docs/reruns.md)
RESUMABLE = frozenset({"build", "fetch"})
INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for a process ended by Ctrl-C


def _debug_logging(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        logging.getLogger().setLevel(logging.DEBUG)


class _Commands(click.Group):
    """Ctrl-C ends any command in one line with the shell's status for it, not click's
    `Aborted!` and status 1: a user must not read a resumable run as a failed one. Every
    command also takes `-v` after its name (`loralay build ... -v`), where users put it."""

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        if not isinstance(cmd, click.Group):
            cmd.params.append(click.Option(["-v", "--verbose"], is_flag=True,
                                           expose_value=False, callback=_debug_logging,
                                           help="Debug logging."))
        super().add_command(cmd, name)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            name = ctx.invoked_subcommand or ""
            then = "; run the same command to resume" if name in RESUMABLE else ""
            click.echo(f"loralay: {name or 'command'} interrupted{then}", err=True)
            ctx.exit(INTERRUPTED)


@click.group(cls=_Commands)
@click.version_option(package_name="loralay-build")
@click.option("-v", "--verbose", is_flag=True, help="Debug logging.")
def main(verbose: bool) -> None:
    """Turn scientific PDFs into layout-aware summarization datasets (LoRaLay)."""
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")


class _Path(click.Path):
    """A path option or argument; an empty one is refused (`Path("")` is the current
    folder, which `--out ''` never meant)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None
                ) -> Any:
        if isinstance(value, str) and not value.strip():
            self.fail("an empty path", param, ctx)
        return super().convert(value, param, ctx)


PATH = _Path(path_type=Path)


def _guarded(fn: Callable[[], Any], where: Path | None = None) -> Any:
    """Run a command's work; an error a user can act on leaves as one line on stderr with
    exit status 2: a `LoralayError`, or a disk that is full or read-only at `where`."""
    try:
        return fn()
    except LoralayError as e:
        click.echo(f"loralay: {e}", err=True)
        sys.exit(e.exit_status)
    except (OSError, sqlite3.Error) as e:
        line = storage_problem(e, where)
        if line is None:
            raise
        click.echo(f"loralay: {line}", err=True)
        sys.exit(2)


@main.command()
@click.argument("pdfs", nargs=-1, required=True, type=PATH)
@click.option("--format", "fmt", type=click.Choice(["jsonl", "tsv"]), default="jsonl",
              show_default=True)
@click.option("--out-dir", type=PATH, default=None,
              help="Write one file per PDF here (named after it) instead of stdout.")
@click.option("--timeout", "timeout_s", type=float, default=DEFAULT_LIMITS.timeout_s,
              show_default=True)
@click.option("--max-pages", type=int, default=DEFAULT_LIMITS.max_pages, show_default=True)
@click.option("--groups", type=click.Choice(["geometry", "poppler"]), default="geometry",
              show_default=True, help="Line and block ids from the words' geometry (as a "
              "build gives them), or Poppler's own.")
def extract(pdfs: tuple[Path, ...], fmt: str, out_dir: Path | None, timeout_s: float,
            max_pages: int, groups: str) -> None:
    """Words with boxes, pages, line and block ids of each PDF."""
    from .extract_cli import extract_files

    failed = _guarded(lambda: extract_files(pdfs, fmt, out_dir, timeout_s, max_pages,
                                            groups))  # type: ignore[arg-type]
    if failed:
        sys.exit(1)


SOURCE = click.option("--source", required=True,
                      help=f"One of {', '.join(registry.names())}.")
OUT = click.option("--out", "out", required=True, type=PATH,
                   help="The run's folder: dataset, report, state and PDFs.")
CONFIG = click.option("--config", type=PATH, default=None,
                      help="YAML file whose keys override the source's defaults.")
MANIFEST = click.option("--manifest", type=PATH, default=None,
                        help="For --source local: the JSON-lines manifest of your PDFs.")
LIMIT = click.option("--limit", type=int, default=None, help="Stop fetching after N documents.")
RETRY = click.option("--retry", multiple=True, metavar="CLASS",
                     help="Also try again what failed with this class, documents and "
                          "CiteSum shards alike (one of: "
                          f"{', '.join(sorted(RETRYABLE_ON_REQUEST))}); internal_error "
                          "and unreachable are retried on every rerun anyway; "
                          "repeatable (docs/reruns.md).")


def _settings(source: str, config: Path | None, manifest: Path | None,
              features: str | None = None, more: dict[str, Any] | None = None) -> Any:
    from .conf import load_settings

    overrides: dict[str, Any] = {"manifest": str(manifest)} if manifest is not None else {}
    overrides.update({k: v for k, v in (more or {}).items() if v not in (None, ())})
    if features is not None:
        overrides["features"] = features
    return _guarded(lambda: load_settings(source, config, overrides))


@main.command()
@SOURCE
@CONFIG
def settings(source: str, config: Path | None) -> None:
    """Print the effective settings of a source (defaults + --config): YAML a --config
    file can take, one key a line with its meaning."""
    from .conf import describe_settings

    click.echo(describe_settings(_settings(source, config, None)), nl=False)


@main.command()
@SOURCE
@OUT
@CONFIG
@MANIFEST
@LIMIT
@RETRY
@click.option("--refresh", is_flag=True,
              help="Harvest for a `build --refresh` of the dataset in --out: a source with "
                   "a high-water mark asks only for what is new.")
def fetch(source: str, out: Path, config: Path | None, manifest: Path | None,
          limit: int | None, retry: tuple[str, ...], refresh: bool) -> None:
    """Only harvest candidates and PDFs (resumable); `build` does the rest."""
    from . import api

    overrides = {"manifest": str(manifest)} if manifest is not None else {}
    _guarded(lambda: api.fetch(source, out, config=config, limit=limit, retry=retry,
                               refresh=refresh, **overrides), out)


def _slurm_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`--executor slurm` and the keys of its job scripts (settings `slurm_*`; a flag given
    overrides --config)."""
    options = [
        click.option("--executor", default="local", show_default=True,
                     help="Where the shards run: local (here), or slurm (a job array, then "
                     "the finish as a job after it)."),
        click.option("--wait", is_flag=True, help="slurm: stay until the finish is done."),
        click.option("--fetch-job", is_flag=True,
                     help="slurm: fetch in a job of its own instead of on this machine."),
        click.option("--fetched", is_flag=True, hidden=True,
                     help="A submitted shard: the submitter fetched already."),
        click.option("--slurm-partition", default=None),
        click.option("--slurm-time", default=None, help="A shard's time limit, [D-]HH:MM:SS."),
        click.option("--slurm-mem-per-cpu", "slurm_mem_per_cpu_mb", type=int, default=None,
                     help="MB per CPU."),
        click.option("--slurm-cpus-per-task", type=int, default=None,
                     help="CPUs (= workers) of one shard."),
        click.option("--slurm-account", default=None),
        click.option("--slurm-max-parallel", type=int, default=None,
                     help="Shards running at once."),
        click.option("--slurm-sbatch", "slurm_extra_sbatch", multiple=True, metavar="OPTION",
                     help="One more #SBATCH option, e.g. --qos=short; repeatable."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


@main.command()
@SOURCE
@OUT
@CONFIG
@MANIFEST
@LIMIT
@RETRY
@_slurm_options
@click.option("--workers", type=int, default=1, show_default=True,
              help="Processes for the per-document stages; the output does not depend on it.")
@click.option("--shard", type=int, default=None, help="Do only shard K of --num-shards.")
@click.option("--num-shards", type=int, default=None)
@click.option("--finish", "finish_only", is_flag=True,
              help="Only merge processed shards into the dataset and report.")
@click.option("--fresh", is_flag=True,
              help="Start the run folder over (downloaded PDFs and their checksums are kept).")
@click.option("--refresh", is_flag=True,
              help="Add what is new to the dataset built in --out: its rows, splits and "
                   "files stay as they are; a new version (diff.json, the card's changelog).")
@click.option("--features", type=click.Choice(["compact", "published"]), default=None,
              help="Column types: compact (default), or exactly those of the published "
                   "LoRaLay datasets (integer boxes; concatenates with them).")
@click.option("--exclude-dataset", "exclude_datasets", multiple=True, type=PATH,
              metavar="DIR", help="A built dataset whose papers this run leaves out "
              "(near-duplicates dropped); repeatable (setting exclude_datasets).")
@click.option("--dry-run", is_flag=True,
              help="Check settings, tools and every input line; print what a build would do.")
@click.option("--ocr", type=click.Choice(["off", "auto", "always"]), default=None,
              help="Read pages with Tesseract: off (default), auto (scanned or broken pages "
                   "only), always (setting ocr; docs/ocr.md).")
def build(source: str, out: Path, config: Path | None, manifest: Path | None,
          limit: int | None, retry: tuple[str, ...], workers: int, shard: int | None,
          num_shards: int | None, finish_only: bool, fresh: bool, refresh: bool,
          features: str | None,
          dry_run: bool, executor: str, wait: bool, fetch_job: bool, fetched: bool,
          exclude_datasets: tuple[Path, ...], ocr: str | None, **slurm: Any) -> None:
    """Fetch, extract, strip abstracts, filter, split and write a dataset into --out."""
    from .machinery.request import BuildRequest
    from .run.pipeline import run_build

    slurm["slurm_extra_sbatch"] = list(slurm["slurm_extra_sbatch"]) or None
    more = {**slurm, "exclude_datasets": [str(p) for p in exclude_datasets] or None, "ocr": ocr}
    s = _settings(source, config, manifest, features, more)
    request = BuildRequest(s, out, limit, workers, shard, num_shards, finish_only, fresh,
                           frozenset(retry), executor, wait, fetch_job, fetched, refresh)
    if dry_run:
        from .run.dryrun import dry_run as check_only

        ok = _guarded(lambda: check_only(request, click.echo), out)
        sys.exit(0 if ok else 1)
    _guarded(lambda: run_build(request), out)


@main.group(cls=_Commands)
def export() -> None:
    """Write a built dataset in another tool's format."""


@export.command("vila")
@click.argument("dataset_dir", type=PATH)
@click.option("--out", "out", required=True, type=PATH,
              help="Folder for {train,dev,test}-token.json, groups, docs, labels, summary.")
@click.option("--group", type=click.Choice(["block", "line"]), default="block",
              show_default=True, help="Ids that separate I-VILA text and make H-VILA groups; "
              "line for a dataset built with `groups: poppler`, whose blocks are often one "
              "word (the default geometric blocks are paragraphs, headings, captions...).")
@click.option("--bbox", type=click.Choice(["points", "norm1000"]), default="points",
              show_default=True, help="VILA's PDF-point boxes, or our 0-1000 boxes.")
@click.option("--indicator", type=click.Choice(["BLK", "SEP"]), default="BLK",
              show_default=True, help="I-VILA's layout indicator token.")
def export_vila(dataset_dir: Path, out: Path, group: str, bbox: str, indicator: str) -> None:
    """VILA's token JSON (one item per page), I-VILA text and H-VILA groups."""
    from .export import VilaOptions
    from .export import export_vila as run_export
    from .export.vila_write import summary_lines

    opts = VilaOptions(group=group, bbox=bbox, indicator=indicator)
    summary = _guarded(lambda: run_export(dataset_dir, out, opts), out)
    for line in summary_lines(summary):
        click.echo(line)


@export.command("cohan")
@click.argument("dataset_dir", type=PATH)
@click.option("--out", "out", required=True, type=PATH,
              help="Folder for {train,val,test}.txt, Cohan et al.'s JSON lines.")
def export_cohan(dataset_dir: Path, out: Path) -> None:
    """Cohan et al.'s arXiv/PubMed layout: one JSON line per paper (article_text,
    abstract_text, section_names, sections as sentences)."""
    from . import api

    counts = _guarded(lambda: api.export_cohan(dataset_dir, out), out)
    for name, n in counts.items():
        click.echo(f"{name}: {n} papers")


@main.command()
@click.argument("dataset_dir", type=PATH)
@click.argument("article_id", required=False)
@click.option("--page", type=int, default=None,
              help="Physical page (default: the first page an abstract was cut from).")
@click.option("--out", "out", type=PATH, default=None,
              help="PNG to write (default: ID-pN.png in the current folder).")
@click.option("--abstract", default=None,
              help="FILE.pdf only: the abstract a build would cut (shaded where found).")
@click.option("--language", default=None,
              help="FILE.pdf only: the paper's language (default: detected from its words).")
@click.option("--config", type=PATH, default=None,
              help="FILE.pdf only: settings as a build would read them.")
def show(dataset_dir: Path, article_id: str | None, page: int | None, out: Path | None,
         abstract: str | None, language: str | None, config: Path | None) -> None:
    """Draw one page of a document as the dataset sees it: words, lines, blocks, cuts.

    `loralay show DIR ID` draws a built dataset's row; `loralay show FILE.pdf` previews
    what a build would make of a PDF (with `--abstract TEXT`, what the cut would take)."""
    from . import api

    written = _guarded(lambda: api.show(dataset_dir, article_id, page=page, out=out,
                                        abstract=abstract, language=language, config=config),
                       out)
    click.echo(str(written))


@main.command("eval")
@click.argument("dataset", type=PATH)
@click.option("--split", default="test", show_default=True)
@click.option("--predictions", type=PATH, default=None,
              help="JSON lines {\"id\", \"prediction\"}: score them instead of the baselines.")
@click.option("--out", type=PATH, default=None,
              help="JSON file for the scores (default: eval-DATASET-SPLIT.json here; never "
              "inside the dataset).")
def eval_(dataset: Path, split: str, predictions: Path | None, out: Path | None) -> None:
    """ROUGE of the baselines (CiteSum's, or LEAD-k and the oracle on a LoRaLay dataset),
    or of your predictions, on a dataset's split."""
    from .scoring import run_eval

    written = _guarded(lambda: run_eval(dataset, split, predictions, click.echo, out), out)
    click.echo(f"written: {written}")


@main.command()
@click.argument("dataset_dir", type=PATH)
@click.option("--repo", required=True, metavar="OWNER/NAME",
              help="The Hub dataset repository; created when missing.")
@click.option("--private", is_flag=True, help="Create the repository private.")
@click.option("--allow-restricted", is_flag=True,
              help="Publish rows whose licence lets nobody but its holder redistribute "
                   "them (unknown, all-rights-reserved, arXiv's default); refused otherwise.")
@click.option("--endpoint", default=None, metavar="URL",
              help="Another Hub (default: HF_ENDPOINT, else huggingface.co).")
def publish(dataset_dir: Path, repo: str, private: bool, allow_restricted: bool,
            endpoint: str | None) -> None:
    """Upload a built dataset to the Hugging Face Hub: one commit and tag per version
    (token: HF_TOKEN or `hf auth login`; docs/publishing.md)."""
    from .hub import publish as run_publish

    _guarded(lambda: run_publish(dataset_dir, repo, private=private,
                                 allow_restricted=allow_restricted, endpoint=endpoint,
                                 echo=click.echo))


if __name__ == "__main__":
    main()
