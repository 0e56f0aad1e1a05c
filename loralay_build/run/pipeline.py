"""`loralay build` and `loralay fetch`: a pipeline (what is built) run by an executor
(where its shards run), both picked by name, never by `if source == ...`.

A **pipeline** is a kind of build: `pdf` (fetch, per-document steps, corpus-wide finish;
every PDF source) or `citesum` (passes over S2ORC shards). The registry (`registry.py`)
says which one a source uses. An **executor** runs a pipeline's work: `local` (this
machine; one shard with `--shard K`, or only the finish with `--finish`) or `slurm` (a
job array of shards and a finish job after it). The two meet through the small
`Pipeline` interface below, so a new source is a registry entry and a new executor is one
class; neither knows the other's names.

Everything that can be checked is checked before any work; problems are the typed errors
of `errors.py`, which the CLI turns into one line and exit status 2.
"""

from __future__ import annotations

from pathlib import Path

from .. import registry
from ..citesum.pipeline import CiteSumPipeline
from ..conf import CommonSettings
from ..errors import ConfigError
from ..extras import require
from ..machinery.interfaces import Executor, Pipeline
from ..machinery.request import BuildRequest, BuildResult
from ..pdf.pipeline import PdfPipeline
from .local import LocalExecutor
from .slurm import SlurmExecutor

PIPELINES: dict[str, Pipeline] = {p.name: p for p in (PdfPipeline(), CiteSumPipeline())}
EXECUTORS: dict[str, Executor] = {e.name: e for e in (LocalExecutor(), SlurmExecutor())}


def pipeline_of(settings: CommonSettings) -> Pipeline:
    return PIPELINES[registry.source(settings.source).pipeline]


def plan(req: BuildRequest) -> tuple[Pipeline, Executor]:
    """Every check a build makes before any work, in one place: `build` runs what it
    returns and `--dry-run` reports it, so the two can never disagree on what is valid."""
    pipeline = pipeline_of(req.settings)
    executor = EXECUTORS.get(req.executor)
    if executor is None:
        raise ConfigError(f"--executor {req.executor}: one of {', '.join(EXECUTORS)}")
    if executor.name not in pipeline.executors:
        raise ConfigError(f"--source {req.settings.source} --executor {executor.name}: not "
                          f"supported; it runs with --executor "
                          f"{' or '.join(sorted(pipeline.executors))}")
    req.check()
    require_extras(req.settings)
    if getattr(req.settings, "ocr", "off") != "off":
        from ..pdftext.ocr import require_tesseract

        require_tesseract()  # one line at plan time, not a failure per document
    executor.check(req)
    pipeline.check(req)
    return pipeline, executor


def run_build(req: BuildRequest) -> BuildResult:
    """Check everything, then let the executor run the pipeline."""
    pipeline, executor = plan(req)
    return executor.run(pipeline, req)


def run_fetch(settings: CommonSettings, out: Path, limit: int | None = None,
              retry: frozenset[str] = frozenset(), refresh: bool = False) -> str | None:
    """`loralay fetch`: only the pipeline's preparation, under the run lock; `refresh`:
    a refresh's (the folder's dataset checked as `build --refresh` checks it)."""
    req = BuildRequest(settings, out, limit=limit, retry=retry, refresh=refresh)
    require_extras(settings)
    return LocalExecutor().fetch_only(pipeline_of(settings), req)


def require_extras(settings: CommonSettings) -> None:
    """The source's and the options' extras installed, or the one line naming the first
    missing one (before the run lock, before any file is written)."""
    for extra, what in settings.extras():
        require(extra, what)
