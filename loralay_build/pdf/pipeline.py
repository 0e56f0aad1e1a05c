"""The PDF pipeline (every source but CiteSum): fetch candidates and PDFs, run the
per-document steps of each shard (`steps.py`, in bounded workers: `driver.py`), then the
corpus-wide finish (thresholds, splits, Parquet, card, report: `finish.py`)."""

from __future__ import annotations

import logging
from functools import cached_property
from pathlib import Path

from .. import registry
from ..dataset import open_excluded
from ..errors import BuildStopped, ConfigError
from ..machinery.request import NOTHING_NEW, BuildRequest, BuildResult
from ..pdftext import parse
from ..runfolder import RunFolder, claim_shards, recorded_shards
from ..sources import BadRunInput, HarvestRefused, SourceNotBuilt
from .driver import fetch_phase, plan_shard_of, process_phase
from .finish import CorpusDecisions, IncompleteRun, finish_run
from .preflight import ToolVersions, check_detector, check_inputs, fresh_deletions, tool_versions
from .refresh import check_refresh

log = logging.getLogger("loralay.build")


class PdfPipeline:
    name = "pdf"
    executors = frozenset({"local", "slurm"})
    fetches = True

    @cached_property
    def versions(self) -> ToolVersions:
        """Poppler's and the package's versions, asked once per command."""
        return tool_versions()

    def check(self, req: BuildRequest) -> None:
        check_inputs(req.settings)
        check_detector(req.settings)
        relists = registry.source(req.settings.source).relists
        if req.one_shard and not relists and not req.fetched \
                and not RunFolder(req.out).fetch_db.exists():
            raise ConfigError(f"{req.out}: nothing fetched yet; run `loralay fetch --source "
                              f"{req.settings.source} --out {req.out}` before the shards")
        self.versions  # noqa: B018 - Poppler is checked before any work
        check_excluded(req)
        if req.refresh:  # before any work: a folder with no dataset, or other row settings
            check_refresh(RunFolder(req.out), req.settings, adopt=False)
        _note_slow_reader()

    def fresh_deletions(self, layout: RunFolder) -> list[Path]:
        return fresh_deletions(layout)

    def would_do(self, req: BuildRequest) -> list[str]:
        """A manifest is checked line by line by `--dry-run` itself (run/dryrun.py)."""
        return [f"would harvest {req.settings.source} into {req.out} (limit: "
                f"{req.limit or 'none'}), then process with {req.workers} worker(s)"]

    def claim_shards(self, layout: RunFolder, num_shards: int) -> None:
        claim_shards(layout, num_shards)

    def fetch(self, req: BuildRequest, layout: RunFolder) -> str | None:
        """A shard of a submitted run, or of a source fetched once for all shards, fetches
        nothing; a source that relists (a manifest) fetches in each shard."""
        relists = registry.source(req.settings.source).relists
        if req.fetched or (req.one_shard and not relists):
            return None
        try:
            counts = fetch_phase(req.settings, layout, req.limit, req.retry, req.refresh)
        except (SourceNotBuilt, BadRunInput) as e:
            raise ConfigError(str(e)) from e
        except HarvestRefused as e:  # the message says what to change: no rerun helps
            message = f"fetch {req.settings.source} stopped: {e}"
            log.error(message)
            return message
        except (ValueError, OSError) as e:
            message = (f"fetch {req.settings.source} stopped early: {e}; rerun the same "
                       f"command to resume")
            log.error(message)
            return message
        log.info("fetched %d, rejected %d", counts["ok"], counts["failed"])
        return None

    def shards_to_do(self, req: BuildRequest, layout: RunFolder, num_shards: int
                     ) -> list[int]:
        return [k for k in range(num_shards)
                if plan_shard_of(req, layout, self.versions, k, num_shards).todo]

    def run_shard(self, req: BuildRequest, layout: RunFolder, shard: int,
                  num_shards: int) -> None:
        counts = process_phase(req, layout, self.versions, shard, num_shards)
        log.info("processed: %s", counts or "nothing new")

    def finish(self, req: BuildRequest, layout: RunFolder, stopped: str | None
               ) -> BuildResult:
        num_shards = recorded_shards(layout) or 1
        try:
            decisions = finish_run(req.settings, layout, num_shards, self.versions,
                                   req.workers, req.refresh, stopped)
        except IncompleteRun as e:
            raise BuildStopped(str(e)) from e
        result = _result(req, decisions)
        if stopped:
            held = "the dataset holds what was fetched so far" if result.documents and any(
                result.kept.values()) else "no dataset yet"
            raise BuildStopped(f"{stopped}; {held}")
        if req.refresh and decisions.verdict.startswith(NOTHING_NEW):
            log.info("done: %s", decisions.verdict)  # the one line: nothing else to say
            return result
        if not any(result.kept.values()):
            bad = decisions.bad_records.total
            also = f" and {bad:,} bad input records" if bad else ""
            raise BuildStopped(f"{req.out}: no document kept of {result.documents}{also}; "
                               f"{req.out / 'report.md'} says why each was dropped")
        log.info("done: %s", result.line())
        return result


def check_excluded(req: BuildRequest) -> None:
    """The `exclude_datasets` folders are built datasets, and none is this run's own,
    inside it or above it (reading itself back would drop every document):
    `dataset.open_excluded`, the rule the finish reads them by."""
    open_excluded(req.settings.exclude_datasets, req.out)


def _note_slow_reader() -> None:
    """A package built where no C compiler was found reads Poppler's output in Python:
    the same words, more CPU. Said once, so a user can fix the install."""
    if parse.read_chunk is None:
        log.warning("the compiled reader of Poppler's output is not built (no C compiler "
                    "or Python headers when loralay-build was installed): extraction takes "
                    "~10 % more CPU, same words; `make install` or `apt-get install gcc "
                    "python3-dev`, then reinstall")


def _result(req: BuildRequest, d: CorpusDecisions) -> BuildResult:
    return BuildResult(req.out, {k: len(v) for k, v in d.kept.items()}, len(d.outcomes),
                       d.verdict)
