"""`loralay settings`: the effective settings as a `--config` file would write them, one
key a line with its meaning, so the printout explains itself and can be copied back."""

from __future__ import annotations

from typing import Any

from .common import CommonSettings


def _flow(value: Any) -> str:
    """A value in YAML's one-line form (`[en, fr]`, `null`, `'01:00:00'`)."""
    import yaml

    text = yaml.safe_dump(value, default_flow_style=True, allow_unicode=True, width=10**9)
    return text.removesuffix("\n").removesuffix("\n...").strip()


def describe_settings(settings: CommonSettings) -> str:
    """YAML that loads back to these settings: the source's own keys first, then the
    common ones, each with its meaning as a comment, the comments in one column."""
    rows = [(f"{key}: {_flow(value)}", meaning) for key, value, meaning in settings.described()]
    width = min(max(len(entry) for entry, _ in rows), 34) + 2  # a long value pushes only its own
    head = (f"# loralay settings --source {settings.source}: every key a --config file may "
            "set, with its effective value (defaults, then --config)\n")
    return head + "".join(f"{entry:<{width - 2}}  # {meaning}\n" if meaning else f"{entry}\n"
                          for entry, meaning in rows)
