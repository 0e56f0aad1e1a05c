"""loralay-build: scientific PDFs to layout-aware summarization datasets.

`from loralay_build import build, extract` gives the Python API (see `api.py`). The
names are resolved on first use, so `loralay --help` and light tools start fast.
"""

from typing import Any

from .version import __version__

__all__ = ["__version__"]
_API = ("build", "fetch", "extract", "load_settings", "text", "BuildResult", "ConfigError",
        "BuildStopped", "ExtractFailed", "LoralayError", "RunLocked", "RunMismatch", "ToolMissing")


def __getattr__(name: str) -> Any:
    if name in _API:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'loralay_build' has no attribute {name!r}")
