"""loralay-build: scientific PDFs to layout-aware summarization datasets.

`from loralay_build import build, extract` gives the Python API (see `api.py`). The
names are resolved on first use, so `loralay --help` and light tools start fast.
"""

from typing import Any

__version__ = "0.1.0"
_API = ("build", "fetch", "extract", "load_settings", "BuildResult", "ConfigError", "BuildStopped",
        "ExtractFailed", "LoralayError", "RunLocked", "RunMismatch", "ToolMissing")


def __getattr__(name: str) -> Any:
    if name in _API:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'loralay_build' has no attribute {name!r}")
