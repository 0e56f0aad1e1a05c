"""Settings: `configs/common.yaml`, then `configs/<source>.yaml`, then the user's `--config`.

One place per source, plain YAML, so a mirror or a test points `api_url` elsewhere by
writing a three-line file. Unknown keys are refused: a typo must not silently fall
back to a default.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

CONFIG_DIR = Path(__file__).resolve().parent / "configs"


class ConfigError(ValueError):
    pass


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except FileNotFoundError as e:
        raise ConfigError(f"{path}: config file not found") from e
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}: not valid YAML ({e.__class__.__name__})") from e
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: top level must be a mapping")
    return data


def _merge(base: dict[str, Any], over: dict[str, Any], origin: str) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in over.items():
        if key not in out:
            raise ConfigError(f"{origin}: unknown key {key!r} (known: {', '.join(sorted(out))})")
        if isinstance(out[key], dict) and isinstance(value, dict):
            out[key] = _merge(out[key], value, f"{origin}:{key}")
        else:
            out[key] = value
    return out


def load_config(source: str, user_file: str | Path | None = None,
                config_dir: Path = CONFIG_DIR) -> dict[str, Any]:
    """The merged settings for one source; the user file may only set known keys."""
    common = _read_yaml(config_dir / "common.yaml")
    own_path = config_dir / f"{source}.yaml"
    own = _read_yaml(own_path) if own_path.exists() else {}
    # a source's own file may add keys; only the user's file is checked against them
    merged = copy.deepcopy(common)
    merged.update(copy.deepcopy(own))
    merged["source"] = source
    if user_file is not None:
        merged = _merge(merged, _read_yaml(Path(user_file)), str(user_file))
    return merged
