"""A JSON file another command wrote (`diff.json`, `report.json`), read for a reader that
checks its shape next: unreadable or not JSON is one line naming the file, never a
traceback, whichever reader meets it first."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .errors import ConfigError


def read_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"{path}: cannot be read ({e.strerror})") from None
    try:
        return json.loads(text)
    except ValueError as e:
        raise ConfigError(f"{path}: not JSON ({e})") from None
