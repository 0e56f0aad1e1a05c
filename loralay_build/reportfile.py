"""What other commands read back from a finished run's `report.json`, as one typed record.

`publish` (is the build finished? how many documents per split?), the Slurm waiter and the
CiteSum pipeline (the build's result) read the same few keys; they read them here, checked
once, so a report of another shape is one line naming the file, never a `KeyError`. The
writers (`write/report.py`, `citesum/report.py`) put `schema_version` first; a report
without one was written before it existed (schema 1, the same keys).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import ConfigError
from .jsonfile import read_json

SCHEMA_VERSION = 2


@dataclass(frozen=True)
class ReportSummary:
    """`verdict`: None while the build has not finished; `kept`: documents per split, in
    the report's order; `documents`: the inputs the report has an outcome for."""

    verdict: str | None
    kept: dict[str, int]
    documents: int

    @classmethod
    def from_json(cls, data: Any, where: str = "report.json") -> ReportSummary:
        if not isinstance(data, dict):
            raise ConfigError(f"{where}: not a JSON object")
        schema = data.get("schema_version", 1)
        if schema not in (1, SCHEMA_VERSION):
            raise ConfigError(f"{where}: schema_version {schema!r}; this loralay reads 1 and "
                              f"{SCHEMA_VERSION}")
        verdict = data.get("verdict")
        splits = data.get("splits", {})
        if not isinstance(splits, dict) or not all(
                isinstance(v, dict) and isinstance(v.get("count"), int)
                for v in splits.values()):
            raise ConfigError(f"{where}: 'splits' is not {{split: {{\"count\": n, ...}}}}")
        documents = data.get("documents", [])
        return cls(verdict if isinstance(verdict, str) else None,
                   {str(s): int(v["count"]) for s, v in splits.items()},
                   len(documents) if isinstance(documents, list) else 0)

    @classmethod
    def read(cls, path: Path) -> ReportSummary:
        data = read_json(path)
        return cls.from_json(data, str(path))
