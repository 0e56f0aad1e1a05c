"""The exceptions the Python API raises; the CLI turns each into one line and an exit status.

They all say what went wrong with which input in their message, so `str(e)` is the line.
"""

from __future__ import annotations


class LoralayError(Exception):
    """Base of every error a user can act on (not a bug)."""

    exit_status = 2


class ConfigError(LoralayError, ValueError):
    """A setting, an option or an input named by the run is wrong; nothing was done."""


class ToolMissing(LoralayError, RuntimeError):
    """A program the run needs (Poppler's pdftotext) is absent or too old."""


class RunLocked(LoralayError, RuntimeError):
    """Another build holds the run folder."""


class RunMismatch(LoralayError, RuntimeError):
    """The run folder was made by an incompatible command (another shard count)."""


class BuildStopped(LoralayError, RuntimeError):
    """The build could not finish (a harvest stopped early, nothing kept, shards missing);
    what was done is kept and the message says how to go on."""
