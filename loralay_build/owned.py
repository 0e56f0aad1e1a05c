"""The folders the tool writes into, and the rule that keeps it out of everything else.

A run folder (`build --out`) or an export folder (`export vila --out`) is the tool's when
the tool created it, when it was empty, or when it carries the tool's marker file
(`.loralay`, which says which kind of folder it is). Anything else is refused in one line
naming what was found there: a build pointed at a folder of PDFs, at a home directory or at
another tool's output must not write there, let alone delete. Inside its folder the tool
deletes only the entries it writes (`RUN_ENTRIES`, `EXPORT_ENTRIES`), never through a
symbolic link: a link is removed, never what it points at. Nor does it write through one:
a link among its entries (a `report/`, `.lock` or `state/` the user replaced by a link) is
refused when the folder is taken, in one line naming it, and every writer checks its path
again (`atomic.refuse_link`), so nothing outside the folder is ever written or truncated.

A run folder written by a version of the tool from before the marker (its entries all the
tool's own, and `state/fetch.sqlite` or `state/citesum.sqlite` in it) is recognised and
marked, so an old run resumes.
"""

from __future__ import annotations

import errno
import fnmatch
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from .atomic import MARKER, TEMP_PREFIX, link_refusal, write_text_atomic
from .errors import ConfigError
from .paths import PDFS_DIR, RUN_DIRS
from .version import __version__

LOCK_NAME = ".lock"  # the lock of a folder the tool writes (locks.RunLock)
BUILD, EXPORT = "build", "export"
# every name the tool writes at the top of a run folder, and its temporary names
RUN_ENTRIES = (*RUN_DIRS, LOCK_NAME, MARKER)
RUN_PATTERNS = (".data-tmp-*", ".data-old-*", ".images-tmp-*", ".images-old-*", f"{TEMP_PREFIX}*",
                "eval-*.json")
# what `--fresh` keeps: downloads are expensive; the lock and the marker are the folder's
KEPT_BY_FRESH = (PDFS_DIR, LOCK_NAME, MARKER)
EXPORT_ENTRIES = ("labels.json", "summary.json", LOCK_NAME, MARKER)
EXPORT_PATTERNS = ("*-token.json", "*-groups.jsonl", "*-docs.jsonl", f"{TEMP_PREFIX}*")
_OLD_STATES = ("state/fetch.sqlite", "state/citesum.sqlite")
# what a claim in progress shows before its marker is in place (the marker's temporary,
# the lock): another run of the tool, or a claim that was killed; never a user's folder
_CLAIMING = (LOCK_NAME, f"{TEMP_PREFIX}*")


@dataclass(frozen=True, slots=True)
class Folder:
    """A folder checked for `kind`: `new` (absent), `empty`, `ours` (marked) or `older`
    (a run folder of a version before the marker)."""

    path: Path
    kind: str
    status: str


def _names(kind: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return (RUN_ENTRIES, RUN_PATTERNS) if kind == BUILD else (EXPORT_ENTRIES, EXPORT_PATTERNS)


def is_owned_name(name: str, kind: str) -> bool:
    entries, patterns = _names(kind)
    return name in entries or any(fnmatch.fnmatchcase(name, p) for p in patterns)


def _claiming(name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in _CLAIMING)


def _marker_kind(path: Path) -> str | None:
    try:
        data = json.loads((path / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data.get("kind") if isinstance(data, dict) else None


def _first_link(path: Path, kind: str, fresh: bool) -> Path | None:
    """The first symbolic link among the tool's entries of `path` and below them (never
    followed; the directory entries' own types, so a `pdfs/` of 100k files costs no stat
    each; `fresh`: in what `--fresh` keeps, since it removes the rest as links)."""
    with os.scandir(path) as it:
        stack = sorted((e for e in it if is_owned_name(e.name, kind)
                        and (not fresh or e.name in KEPT_BY_FRESH)),
                       key=lambda e: e.name, reverse=True)
    while stack:
        entry = stack.pop()
        if entry.is_symlink():
            return Path(entry.path)
        if entry.is_dir(follow_symlinks=False):
            try:
                with os.scandir(entry.path) as it:
                    stack += sorted(it, key=lambda e: e.name, reverse=True)
            except OSError:  # unreadable: its writes will say so
                continue
    return None


def check_folder(path: Path, kind: str, flag: str = "--out", fresh: bool = False) -> Folder:
    """What `path` is for a command that writes a `kind` folder there; ConfigError, one
    line, for anything the tool must not write into (a folder that is not the tool's, a
    symbolic link among its entries). Writes nothing."""
    if path.is_symlink() and not path.exists():
        raise ConfigError(f"{path}: a symbolic link to nothing; give a folder")
    if path.exists() and not path.is_dir():
        what = "a file" if path.is_file() else "not a folder (a device or a pipe)"
        raise ConfigError(f"{path}: {what}; {flag} takes a folder")
    if not path.exists():
        return Folder(path, kind, "new")
    try:
        names = sorted(os.listdir(path))
    except OSError as e:
        raise ConfigError(f"{path}: cannot read the folder ({e.strerror})") from None
    if not names:
        return Folder(path, kind, "empty")
    marked = _marker_kind(path)
    if marked is None and all(_claiming(n) for n in names):
        return Folder(path, kind, "empty")
    if marked == kind:
        return _no_links(Folder(path, kind, "ours"), fresh)
    if marked is not None:
        raise ConfigError(f"{path}: a folder of `loralay {marked}`, not of `loralay {kind}`; "
                          f"give another {flag}")
    foreign = [n for n in names if not is_owned_name(n, kind)]
    if kind == BUILD and _older_run(path, names):
        return _no_links(Folder(path, kind, "older"), fresh)
    shown = ", ".join(foreign[:3] or names[:3]) + (", ..." if len(foreign or names) > 3 else "")
    raise ConfigError(f"{path}: not a folder this tool made (it holds {shown}, and no "
                      f"{MARKER} marker); give a new or empty {flag}, nothing was touched")


def _older_run(path: Path, names: list[str]) -> bool:
    """A run folder of a version before the marker: only the tool's entries, and its state."""
    return all(is_owned_name(n, BUILD) for n in names) and \
        any((path / s).is_file() for s in _OLD_STATES)


def made_as(path: Path) -> str | None:
    """Which kind of folder the tool made at `path` (`build` or `export`, as its marker
    says; `build` for a run folder of a version before the marker), None when none: what
    a command that only reads a folder (`publish`) checks before trusting it. Writes
    nothing."""
    marked = _marker_kind(path)
    if marked is not None:
        return marked
    try:
        names = sorted(os.listdir(path))
    except OSError:
        return None
    return BUILD if names and _older_run(path, names) else None


def unwritable(path: Path) -> str | None:
    """Why a folder could not be made or written at `path` (the nearest existing folder
    on its way is not a folder, or is not writable), else None; touches nothing."""
    here = path.absolute()
    while not os.path.lexists(here) and here != here.parent:
        here = here.parent
    if not here.is_dir():
        return f"{here} is not a folder"
    if not os.access(here, os.W_OK | os.X_OK):
        return f"{here} is not writable (permissions or a read-only file system)"
    return None


def _no_links(folder: Folder, fresh: bool) -> Folder:
    link = _first_link(folder.path, folder.kind, fresh and folder.kind == BUILD)
    if link is not None:
        raise ConfigError(link_refusal(link, folder.path))
    return folder


def claim_folder(path: Path, kind: str, flag: str = "--out", fresh: bool = False) -> Folder:
    """Check `path`, then create and mark it if it is not marked yet; a folder that cannot
    be made or written is one ConfigError naming it and the reason."""
    folder = check_folder(path, kind, flag, fresh)
    if folder.status == "ours":
        return folder
    try:
        path.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path / MARKER, json.dumps(
            {"tool": "loralay-build", "kind": kind, "version": __version__}, indent=1) + "\n")
    except OSError as e:
        raise ConfigError(f"{path}: cannot write here ({describe_os_error(e)})") from None
    return folder


def owned_entries(path: Path, kind: str, keep: tuple[str, ...] = ()) -> list[Path]:
    """The entries at the top of `path` the tool wrote (but those in `keep`), sorted."""
    if not path.is_dir():
        return []
    return [path / n for n in sorted(os.listdir(path))
            if is_owned_name(n, kind) and n not in keep]


def remove(entry: Path) -> None:
    """Delete a file or a folder the tool wrote; a symbolic link is removed as a link,
    never followed (shutil.rmtree removes the links inside a folder as links too)."""
    if entry.is_symlink() or not entry.is_dir():
        entry.unlink(missing_ok=True)
    else:
        shutil.rmtree(entry)


_SPACE = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM)
_SQLITE_SPACE = ("disk is full", "readonly database", "unable to open database file",
                 "disk i/o error")


def storage_problem(e: BaseException, where: Path | None) -> str | None:
    """One line for an error of the disk a command writes to (full, read-only, not
    permitted), from Python, SQLite or Arrow; None for any other error."""
    import sqlite3

    path = getattr(e, "filename", None) or where or "the output folder"
    if isinstance(e, OSError) and e.errno in _SPACE:
        reason = describe_os_error(e)
    elif isinstance(e, sqlite3.OperationalError) and any(
            s in str(e).lower() for s in _SQLITE_SPACE):
        reason = f"the run state cannot be written ({str(e).lower()})"
    elif isinstance(e, OSError) and "no space left on device" in str(e).lower():
        reason = "no space left on the device"
    elif isinstance(e, OSError) and "read-only file system" in str(e).lower():
        reason = "read-only file system"
    else:
        return None
    return (f"cannot write {path}: {reason}; free space or fix the folder's permissions, "
            "then rerun the same command (what was written is kept)")


def describe_os_error(e: OSError) -> str:
    """A short reason for the errors a user can act on."""
    names = {errno.ENOSPC: "no space left on the device", errno.EROFS: "read-only file system",
             errno.EACCES: "permission denied", errno.EPERM: "operation not permitted",
             errno.EDQUOT: "disk quota exceeded", errno.ENOTDIR: "not a folder",
             errno.ELOOP: "too many levels of symbolic links",
             errno.ENAMETOOLONG: "file name too long"}
    return names.get(e.errno or 0, e.strerror or str(e))
