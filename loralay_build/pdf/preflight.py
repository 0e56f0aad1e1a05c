"""Checks made before a run touches anything: tools, inputs, the run folder's lock and shape.

Why up front: a missing Poppler used to be recorded as `internal_error` for every document
(and a rerun then found nothing to do); a second build on the same folder deleted the first
one's temporary files; a sharded run mixed with a plain one wrote every document twice.
Each of these is now one line and exit status 2, with nothing written.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ..conf import CommonSettings, check_contact
from ..corpus.prints import PRINT_VERSION
from ..errors import ConfigError
from ..group import GROUP_RULE
from ..group.labels import LABEL_RULE
from ..group.sections import SECTIONS_RULE
from ..images.detector import detector_missing
from ..licenses import LICENSE_RULE
from ..owned import BUILD, KEPT_BY_FRESH, owned_entries
from ..pdftext.glyphs import GLYPH_RULE
from ..pdftext.poppler import poppler_version
from ..pdftext.rotation import ROTATION_RULE
from ..runfolder import RunFolder
from ..sources.manifest import unread_splits
from ..strip import STRIP_RULE
from ..version import __version__


@dataclass(frozen=True, slots=True)
class ToolVersions:
    """What, besides inputs and settings, decides a per-document result."""

    loralay_build: str
    poppler: str

    def __str__(self) -> str:
        return f"loralay-build {self.loralay_build}; poppler {self.poppler}"


# The rule versions, by the step whose output each decides: the glyph-repair and rotation
# rules the words and boxes, the grouping and label rules the groups and labels, the print
# rule the duplicates found, the licence rule the licence id a result holds (the allow-list
# and the report read it), the strip rule what is cut as an abstract, the sections rule
# the row's section tree, each word's section and the reference entries (`sections` is
# no step of its own: the row's writer derives them from the body and the outline). A run
# made before any of them changed is redone; the golden digests (tests/golden/) fail when a step's
# output changes while its rules do not. Bump a rule in its own module, where it is kept.
STEP_RULES: dict[str, dict[str, str]] = {
    "extract": {"GLYPH_RULE": GLYPH_RULE, "ROTATION_RULE": ROTATION_RULE},
    "group": {"GROUP_RULE": GROUP_RULE, "LABEL_RULE": LABEL_RULE},
    "print": {"PRINT_VERSION": PRINT_VERSION},
    "license": {"LICENSE_RULE": LICENSE_RULE},
    "strip": {"STRIP_RULE": STRIP_RULE},
    "sections": {"SECTIONS_RULE": SECTIONS_RULE},
}


def tool_versions() -> ToolVersions:
    rules = "+".join(v for step in STEP_RULES.values() for v in step.values())
    return ToolVersions(f"{__version__}+{rules}", poppler_version())


def check_detector(settings: CommonSettings) -> None:
    """`labels: rules+detector` needs the optional detector installed: said before any
    work, not as every document's failure."""
    if settings.labels == "rules+detector":
        missing = detector_missing()
        if missing:
            raise ConfigError(missing)


def check_inputs(settings: CommonSettings) -> None:
    """The files a source is told to read exist; a network source has a real contact."""
    check_contact(settings)
    for key in type(settings).INPUT_PATHS:
        value = getattr(settings, key, None)
        if value is None and key in type(settings).REQUIRED_INPUTS:
            flag = f"--{key} PATH (or `{key}:` in --config)" if key == "manifest" \
                else f"`{key}:` in --config"
            raise ConfigError(f"--source {settings.source} needs {flag}")
        if value is None:
            continue
        if not Path(value).exists():
            raise ConfigError(f"{key}: {value}: {_why_missing(Path(value))}")
        if key in type(settings).INPUT_FILES:
            kind = not_a_file(Path(value))
            if kind is not None:
                raise ConfigError(f"{key}: {value}: {kind}, not a file")
    manifest = getattr(settings, "manifest", None)
    if manifest is not None and settings.split_mode != "given":
        try:
            unread = unread_splits(Path(manifest))
        except OSError as e:
            raise ConfigError(f"manifest: {manifest}: cannot be read ({e.strerror or e})") from e
        if unread is not None:
            raise ConfigError(unread)


def _why_missing(path: Path) -> str:
    """"not found", or what stands there instead: a link to nowhere, a loop of links."""
    try:
        path.stat()
    except OSError as e:
        if e.errno == errno.ELOOP:
            return "a loop of symbolic links (ELOOP)"
        if path.is_symlink():
            return f"a symbolic link to {os.readlink(path)}, which does not exist"
    return "not found"


def not_a_file(path: Path) -> str | None:
    """What `path` is when it is no regular file (a link followed): `a folder`, `a FIFO`,
    `a device`, `a socket`; None for a file. Found by `stat`, never by opening: a FIFO
    would block the check until something wrote to it, and `/dev/zero` never ends."""
    mode = path.stat().st_mode
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device"


def fresh_deletions(layout: RunFolder) -> list[Path]:
    """What `--fresh` deletes: the run folder's own entries but the downloaded PDFs, and
    the run state but the PDFs' checksums; nothing the tool did not write, and nothing
    through a symbolic link (a linked `state/` is removed as a link)."""
    doomed = []
    for entry in owned_entries(layout.out, BUILD, keep=KEPT_BY_FRESH):
        if entry == layout.state_dir and entry.is_dir() and not entry.is_symlink():
            doomed += [p for p in sorted(entry.iterdir())
                       if not p.name.startswith(layout.checksums_db.name)]
        else:
            doomed.append(entry)
    return doomed
