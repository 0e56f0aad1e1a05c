"""Reading a user's `--config` file into a source's typed settings, or one line saying why not.

Why a loader of our own around `yaml.safe_load`: YAML aliases let a 538-byte file expand
to gigabytes once written back out (report/config.yaml), so aliases are refused, as is a
file over 1 MiB; and pydantic's multi-line error report is turned into the one line a
user can act on ("rows_per_shard: 0 is not valid: ... (expected ...)").
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from .. import registry
from ..errors import ConfigError
from . import sources
from .common import PLACEHOLDER_CONTACT, CommonSettings

MAX_CONFIG_BYTES = 1 << 20


class _NoAliasLoader(yaml.SafeLoader):
    """SafeLoader that refuses anchors/aliases (the "billion laughs" of YAML)."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.constructor.ConstructorError(
                None, None, "YAML aliases (*name) are not accepted in a config file",
                event.start_mark)
        return super().compose_node(parent, index)


def _timestamp_or_text(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Any:
    """An unquoted `2024-13-45` looks like a YAML date but is none: PyYAML's constructor
    raises a bare ValueError (a traceback); kept as its text, the key's own type says
    what is wrong with it in the one line every other bad value gets."""
    try:
        return loader.construct_yaml_timestamp(node)
    except ValueError:
        return loader.construct_scalar(node)


_NoAliasLoader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp_or_text)


def read_config_file(path: str | Path) -> dict[str, Any]:
    """The mapping a user's YAML file holds; ConfigError naming the file otherwise."""
    path = Path(path)
    try:
        if not path.is_file():
            raise ConfigError(f"{path}: config file not found")
        if path.stat().st_size > MAX_CONFIG_BYTES:
            raise ConfigError(f"{path}: config file over {MAX_CONFIG_BYTES} bytes")
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_NoAliasLoader)  # noqa: S506
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not UTF-8 text (byte {e.start})") from e
    except yaml.YAMLError as e:
        where = getattr(e, "problem_mark", None)
        line = f" at line {where.line + 1}" if where is not None else ""
        problem = getattr(e, "problem", None) or e.__class__.__name__
        raise ConfigError(f"{path}: not valid YAML{line}: {problem}") from e
    if data is None:
        return {}
    if not isinstance(data, dict) or not all(isinstance(k, str) for k in data):
        raise ConfigError(f"{path}: the top level must map setting names to values")
    return data


def settings_class(source: str) -> type[CommonSettings]:
    try:
        spec = registry.source(source)
    except registry.UnknownSource as e:
        raise ConfigError(str(e)) from None
    cls: type[CommonSettings] = getattr(sources, spec.settings)
    return cls


def load_settings(source: str, config_file: str | Path | None = None,
                  overrides: Mapping[str, Any] | None = None) -> CommonSettings:
    """Defaults of `source`, then the file's keys, then `overrides` (the CLI's), validated."""
    cls = settings_class(source)
    values: dict[str, Any] = {}
    origin = "settings"
    if config_file is not None:
        values = read_config_file(config_file)
        origin = str(config_file)
        if "source" in values:
            raise ConfigError(f"{origin}: `source` is chosen with --source, not in the file")
    values.update(overrides or {})
    return validate(cls, {**values, "source": source}, origin)


def validate(cls: type[CommonSettings], values: dict[str, Any], origin: str) -> CommonSettings:
    try:
        return cls.model_validate(values)
    except ValidationError as e:
        raise ConfigError(describe_error(e, cls, origin, values.get("source", ""))) from None


def describe_error(e: ValidationError, cls: type[CommonSettings], origin: str,
                   source: str = "") -> str:
    """The first problem as one line: key, value, what was expected; and how many more."""
    errors = e.errors(include_url=False)
    first = errors[0]
    key = ".".join(str(p) for p in first["loc"][:1]) or "?"
    more = f" (and {len(errors) - 1} more problem{'s' * (len(errors) > 2)})" \
        if len(errors) > 1 else ""
    if not first["loc"]:  # a rule over several keys (a renamed key given twice)
        return f"{origin}: {str(first.get('msg', '')).removeprefix('Value error, ')}{more}"
    if first["type"] == "extra_forbidden":
        return f"{origin}: unknown key {key!r}{_did_you_mean(key, cls, source)}{more}"
    value = _short(first.get("input"))
    expected = _expected(cls, key, first)
    return f"{origin}: {key}: {value} is not valid: {expected}{more}"


def _did_you_mean(key: str, cls: type[CommonSettings], source: str) -> str:
    owners = sorted(name for name in registry.names()
                    if key in settings_class(name).model_fields)
    if owners:  # another source's key: saying so beats a near spelling of one of ours
        return f" for --source {source} (a key of {', '.join(owners)})"
    known = [k for k in cls.model_fields if k != "source"]
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    if close:
        return f" (did you mean `{close[0]}`?)"
    return f" (`loralay settings --source {source}` lists every key)"


def _expected(cls: type[CommonSettings], key: str, err: Mapping[str, Any]) -> str:
    msg = str(err.get("msg", "")).removeprefix("Value error, ")
    field = cls.model_fields.get(key)
    if field is None:
        return msg
    meaning = f" ({field.description})" if field.description else ""
    return f"{msg[:1].lower()}{msg[1:]}{meaning}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_contact(settings: CommonSettings) -> None:
    """Services' etiquette asks for a reachable contact; the shipped placeholder is not one."""
    if registry.source(settings.source).network and settings.contact == PLACEHOLDER_CONTACT:
        raise ConfigError(f"--source {settings.source} talks to a public service: set "
                          f"`contact: you@your.org` in a --config file (it is sent with "
                          f"every request; {PLACEHOLDER_CONTACT} is a placeholder)")
