"""The Python API: what the CLI runs, with typed exceptions instead of exit statuses.

    from loralay_build import build
    result = build("local", "out/mine", manifest="my/manifest.jsonl", workers=2)
    print(result.kept)          # {'train': 6, 'validation': 1, 'test': 1}

Errors a user can act on are `LoralayError`s (`ConfigError`, `ToolMissing`, `RunLocked`,
`RunMismatch`, `BuildStopped`); their message is the one line the CLI prints.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from .conf import CommonSettings, load_settings
from .errors import BuildStopped, ConfigError, LoralayError, RunLocked, RunMismatch, ToolMissing
from .failures import Failure
from .limits import DEFAULT_LIMITS
from .machinery.request import BuildRequest, BuildResult
from .reading import text
from .records import Document
from .run.pipeline import run_build, run_fetch

# one function per CLI command (`eval` is `evaluate`, `export vila` is `export_vila`)
COMMANDS = ("build", "evaluate", "export_cohan", "export_vila", "extract", "fetch", "publish",
            "settings", "show")
__all__ = ["BuildResult", "BuildStopped", "ConfigError", "ExtractFailed", "LoralayError",
           "RunLocked", "RunMismatch", "ToolMissing", *COMMANDS, "load_settings", "text"]


class ExtractFailed(LoralayError):
    """A PDF whose words could not be read; `.failure` holds the class and the reason."""

    def __init__(self, pdf: Path, failure: Failure) -> None:
        super().__init__(failure.line(str(pdf)))
        self.failure = failure


def _choice(name: str, value: str, allowed: tuple[str, ...]) -> None:
    """The CLI's choice check, said as its one line."""
    if value not in allowed:
        raise ConfigError(f"{name}={value!r}: one of {', '.join(allowed)}")


def _settings(source: str, config: str | Path | None, overrides: dict[str, Any]
              ) -> CommonSettings:
    """The validated settings of a source: defaults, then `config`, then keyword overrides."""
    return load_settings(source, config, overrides)


def build(source: str, out: str | Path, *, config: str | Path | None = None,
          workers: int = 1, limit: int | None = None, shard: int | None = None,
          num_shards: int | None = None, finish_only: bool = False, fresh: bool = False,
          retry: Iterable[str] = (), refresh: bool = False, features: str | None = None,
          **overrides: Any) -> BuildResult:
    """Build (or resume) the dataset of `source` in `out`; `overrides` are settings keys
    (e.g. `manifest=`, `max_pages_percentile=None`). `refresh`: grow the dataset built
    there by what is new, as `build --refresh` (docs/reruns.md)."""
    if features is not None:
        _choice("features", features, ("compact", "published"))
        overrides["features"] = features
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
    from .group import GROUPINGS
    from .pdftext import ExtractLimits, extract_document
    from .pdftext.poppler import poppler_version

    _choice("groups", groups, tuple(GROUPINGS))
    poppler_version()
    path = Path(pdf)
    result = extract_document(path, path.stem, ExtractLimits(timeout_s=timeout_s,
                                                             max_pages=max_pages))
    if isinstance(result, Failure):
        raise ExtractFailed(path, result)
    from .group.labels import group_and_label

    return group_and_label(result, groups)


def settings(source: str, config: str | Path | None = None, **overrides: Any) -> str:
    """The effective settings of a source as `loralay settings` prints them: YAML a
    `config` file can take, one key a line with its meaning."""
    from .conf import describe_settings

    return describe_settings(_settings(source, config, overrides))


def export_vila(dataset_dir: str | Path, out: str | Path, *, group: str = "block",
                bbox: str = "points", indicator: str = "BLK") -> Any:
    """`loralay export vila`: VILA's token JSON, I-VILA text and H-VILA groups of a built
    dataset in `out`; the summary the CLI prints lines of."""
    from .export import VilaOptions
    from .export import export_vila as run_export
    from .export.vila import BBOX_MODES, GROUPS, INDICATORS

    _choice("group", group, tuple(GROUPS))
    _choice("bbox", bbox, tuple(BBOX_MODES))
    _choice("indicator", indicator, tuple(INDICATORS))
    return run_export(Path(dataset_dir), Path(out),
                      VilaOptions(group=group, bbox=bbox, indicator=indicator))


def export_cohan(dataset_dir: str | Path, out: str | Path) -> dict[str, int]:
    """`loralay export cohan`: Cohan et al.'s arXiv/PubMed JSON lines of a built dataset
    in `out` (`train.txt`, `val.txt`, `test.txt`); the papers per file."""
    from .export import export_cohan as run_export

    return run_export(Path(dataset_dir), Path(out))


def show(dataset_or_pdf: str | Path, article_id: str | None = None, *,
         page: int | None = None, out: str | Path | None = None,
         abstract: str | None = None, language: str | None = None,
         config: str | Path | None = None) -> Path:
    """`loralay show`: one page of a built dataset's document (`article_id` given), or
    what a build would make of a PDF (`abstract`, `language`, `config`: PDF only), drawn
    into a PNG; its path."""
    from .preview import preview_pdf, show_document

    target = Path(dataset_or_pdf)
    if article_id is None:
        if target.is_dir():
            raise ConfigError(f"{target}: a dataset folder: name the document "
                              "(loralay show DIR ID), or give a PDF file")
        return preview_pdf(target, page, out, abstract, language, config)
    return show_document(target, article_id, page, out)


def evaluate(dataset: str | Path, split: str = "test", *,
             predictions: str | Path | None = None, out: str | Path | None = None,
             echo: Callable[[str], None] = print) -> Path:
    """`loralay eval`: ROUGE of the baselines, or of `predictions`, on a split; the table
    through `echo`, the scores written to `out` (never inside the dataset); its path."""
    from .scoring import run_eval

    return run_eval(Path(dataset), split, Path(predictions) if predictions else None, echo,
                    Path(out) if out else None)


def publish(dataset_dir: str | Path, repo: str, *, private: bool = False,
            allow_restricted: bool = False, endpoint: str | None = None,
            echo: Callable[[str], None] = print) -> Any:
    """`loralay publish`: upload a built dataset to the Hub, one commit and tag per
    version (docs/publishing.md)."""
    from .hub import publish as run_publish

    return run_publish(dataset_dir, repo, private=private, allow_restricted=allow_restricted,
                       endpoint=endpoint, echo=echo)
