"""loralay-build: scientific PDFs to layout-aware summarization datasets.

`from loralay_build import build, extract, show, evaluate` gives the Python API (see
`api.py`): one function per CLI command. The names are resolved on first use, so
`loralay --help` and light tools start fast; no submodule bears an API name, so none
shadows a function once imported.
"""

from .version import __version__

_API = ("build", "evaluate", "export_cohan", "export_vila", "extract", "fetch", "publish",
        "settings", "show", "load_settings", "text", "BuildResult", "ConfigError",
        "BuildStopped", "ExtractFailed", "LoralayError", "RunLocked", "RunMismatch", "ToolMissing")
__all__ = ["__version__", *_API]


def __getattr__(name: str) -> object:
    if name in _API:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'loralay_build' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The API only, not the submodules an import left behind."""
    return sorted(__all__)
