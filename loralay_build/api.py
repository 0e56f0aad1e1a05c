"""The Python API: what the CLI runs, with typed exceptions instead of exit statuses.

    from loralay_build import build
    result = build("local", "out/mine", manifest="my/manifest.jsonl", workers=2)
    print(result.kept)          # {'train': 6, 'validation': 1, 'test': 1}

Errors a user can act on are `LoralayError`s (`ConfigError`, `ToolMissing`, `RunLocked`,
`RunMismatch`, `BuildStopped`); their message is the one line the CLI prints.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .errors import BuildStopped, ConfigError, LoralayError, RunLocked, RunMismatch, ToolMissing
from .failures import Failure
from .limits import DEFAULT_LIMITS
from .machinery.request import BuildRequest, BuildResult
from .reading import text
from .records import Document
from .run.pipeline import run_build, run_fetch
from .settings import CommonSettings, load_settings

__all__ = ["BuildResult", "BuildStopped", "ConfigError", "ExtractFailed", "LoralayError",
           "RunLocked", "RunMismatch", "ToolMissing", "build", "extract", "fetch",
           "load_settings", "text"]


class ExtractFailed(LoralayError):
    """A PDF whose words could not be read; `.failure` holds the class and the reason."""

    def __init__(self, pdf: Path, failure: Failure) -> None:
        super().__init__(failure.line(str(pdf)))
        self.failure = failure


def _settings(source: str, config: str | Path | None, overrides: dict[str, Any]
              ) -> CommonSettings:
    """The validated settings of a source: defaults, then `config`, then keyword overrides."""
    return load_settings(source, config, overrides)


def build(source: str, out: str | Path, *, config: str | Path | None = None,
          workers: int = 1, limit: int | None = None, shard: int | None = None,
          num_shards: int | None = None, finish_only: bool = False, fresh: bool = False,
          retry: Iterable[str] = (), refresh: bool = False, **overrides: Any) -> BuildResult:
    """Build (or resume) the dataset of `source` in `out`; `overrides` are settings keys
    (e.g. `manifest=`, `max_pages_percentile=None`). `refresh`: grow the dataset built
    there by what is new, as `build --refresh` (docs/reruns.md)."""
    request = BuildRequest(_settings(source, config, overrides), Path(out), limit, workers,
                           shard, num_shards, finish_only, fresh, frozenset(retry),
                           refresh=refresh)
    return run_build(request)


def fetch(source: str, out: str | Path, *, config: str | Path | None = None,
          limit: int | None = None, retry: Iterable[str] = (), refresh: bool = False,
          **overrides: Any) -> None:
    """Only harvest candidates and PDFs; raises BuildStopped when the harvest stopped early.
    `refresh`: the harvest of a `build --refresh` (only what is new, where the source can
    tell)."""
    stopped = run_fetch(_settings(source, config, overrides), Path(out), limit,
                        frozenset(retry), refresh)
    if stopped:
        raise BuildStopped(stopped)


def extract(pdf: str | Path, *, timeout_s: float = DEFAULT_LIMITS.timeout_s,
            max_pages: int = DEFAULT_LIMITS.max_pages,
            groups: str = "geometry") -> Document:
    """Words, boxes, pages, line and block ids of one PDF, grouped as a build groups them
    (`groups="poppler"`: Poppler's own); ExtractFailed says why not."""
    from .extract import ExtractLimits, extract_document
    from .extract.poppler import poppler_version

    poppler_version()
    path = Path(pdf)
    result = extract_document(path, path.stem, ExtractLimits(timeout_s=timeout_s,
                                                             max_pages=max_pages))
    if isinstance(result, Failure):
        raise ExtractFailed(path, result)
    from .group import GROUPINGS
    from .group.labels import group_and_label

    if groups not in GROUPINGS:
        raise ConfigError(f"groups={groups!r}: one of {', '.join(GROUPINGS)}")
    return group_and_label(result, groups)
