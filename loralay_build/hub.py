"""`loralay publish DIR --repo OWNER/NAME`: a built dataset onto the Hugging Face Hub, one
commit and one tag (`v1`, `v2`, ...) per dataset version.

What goes up is the dataset and nothing else: the card `README.md`, the shards of `data/`
(and of `images/` when built), `report.md`, `report.json` and `diff.json`; never `pdfs/`,
`state/`, `report/` (its `config.yaml` names local paths and your contact address), the lock,
the marker or any file of yours beside them, and in `data/` and `images/` only files named
as shards.

The version is `dataset_version`'s: `diff.json`'s `version` when a refresh wrote one, else 1
(a dataset never refreshed). The tag is the record of what was published, so the run folder
is never written: a version whose tag is on the Hub with the same files uploads nothing and
says so; with other files it is refused (the dataset changed without a new version). A new
version's commit adds only the files that are new or changed (compared by the remote's LFS
sha256 or git blob id; shards are named after their content, so an unchanged one keeps its
name and is not uploaded again) and removes the earlier version's shards that this one no
longer has; the earlier tag keeps them.

Checked before any request, each a one-line `ConfigError`: the repository id, the folder
(one this tool built and finished: its marker and its report, `check_built`; then read as
every reader reads a dataset, `dataset.Dataset`), `diff.json`, the rows' licences
(a licence that lets nobody but its holder redistribute, `unknown` included, refuses
unless `allow_restricted`), and the token. The run folder's lock is held shared, so a
build rewriting the dataset meanwhile is refused, never read half-way.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .atomic import MARKER
from .dataset import Dataset
from .diffs import DatasetDiff
from .errors import ConfigError
from .jsonfile import read_json
from .licenses import OPEN_REDISTRIBUTABLE, UNKNOWN
from .locks import ReadLock
from .owned import BUILD, EXPORT, made_as
from .paths import DATA_DIR, DIFF_JSON, IMAGES_DIR, README, REPORT_JSON, REPORT_MD, SHARD_NAME
from .reportfile import ReportSummary
from .version import __version__

# DIFF_JSON is written by a refresh beside the card: what changed since the version before
# (docs/publishing.md has the shape this module reads)
TOP_FILES = (README, REPORT_MD, REPORT_JSON, DIFF_JSON)
SHARD_FOLDERS = (DATA_DIR, IMAGES_DIR)
_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,95}/[A-Za-z0-9][A-Za-z0-9_.-]{0,95}$")
_TAG = re.compile(r"^v(\d+)$")


# -- the version ---------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Version:
    """A dataset version: its number, and the counts its commit message names."""

    number: int
    summary: str

    @property
    def tag(self) -> str:
        return f"v{self.number}"

    def commit_message(self) -> str:
        return f"Dataset {self.tag}: {self.summary}"


def _counts(per_split: Mapping[str, int]) -> str:
    return ", ".join(f"{s} {n:,}" for s, n in per_split.items())


def dataset_version(root: str | Path) -> Version:
    """The version a publish of `root` makes: `diff.json`'s `version` when a refresh wrote
    one (its message counts what was added and dropped), else 1, a dataset never refreshed
    (its message counts the kept documents per split, `report.json["splits"]`)."""
    root = Path(root)
    if (root / DIFF_JSON).exists():
        diff = DatasetDiff.read(root / DIFF_JSON)
        return Version(diff.version, diff.summary() + diff.since())
    per_split = ReportSummary.read(root / REPORT_JSON).kept \
        if (root / REPORT_JSON).exists() else {}
    if not per_split:
        return Version(1, "the first version")
    return Version(1, f"{sum(per_split.values()):,} documents ({_counts(per_split)})")


# -- the licences --------------------------------------------------------------------------

def license_counts(ds: Dataset) -> dict[str, int]:
    """Rows per licence id, from every shard's `license` column; for a dataset without
    one (`--features published`), `report.json["licenses"]`; with neither, every row is
    `unknown` (a licence is never guessed)."""
    counts: Counter[str] = Counter()
    rows = 0
    has_column = True
    for path, pf in ds.files():
        rows += pf.metadata.num_rows
        if "license" not in pf.schema_arrow.names:
            has_column = False
            continue
        try:
            values = pf.read(columns=["license"]).column(0).to_pylist()
        except Exception as e:  # noqa: BLE001 (pyarrow's errors: one line naming the file)
            raise ConfigError(f"{path}: its license column cannot be read ({e})") from None
        counts.update(v or UNKNOWN for v in values)
    if has_column:
        return dict(counts)
    report = ds.root / REPORT_JSON
    licenses = read_json(report).get("licenses") if report.exists() else None
    if isinstance(licenses, dict) and licenses:
        return {str(k): int(v) for k, v in licenses.items()}
    return {UNKNOWN: rows}


def restricted(counts: Mapping[str, int]) -> dict[str, int]:
    """The licences that let nobody but their holder redistribute (not in the `open`
    shorthand: `arxiv-nonexclusive-distrib-1.0`, `all-rights-reserved`, `unknown`, ...)
    with their row counts, most rows first."""
    found = {lid: n for lid, n in counts.items() if n and lid not in OPEN_REDISTRIBUTABLE}
    return dict(sorted(found.items(), key=lambda kv: (-kv[1], kv[0])))


# -- the files -----------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class LocalFile:
    path_in_repo: str
    path: Path
    size: int
    sha256: str
    git_sha1: str  # the git blob id, which the Hub gives for a file not stored in LFS


def _hashed(root: Path, rel: str) -> LocalFile:
    path = root / rel
    size = path.stat().st_size
    sha256, sha1 = hashlib.sha256(), hashlib.sha1(b"blob %d\0" % size)
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            sha256.update(block)
            sha1.update(block)
    return LocalFile(rel, path, size, sha256.hexdigest(), sha1.hexdigest())


def is_dataset_path(path_in_repo: str) -> bool:
    """A path `publish` uploads (and so may replace or remove on the Hub): the top files,
    and shard-named files in `data/` and `images/`; never `.gitattributes` or a file
    someone added on the Hub."""
    folder, _, name = path_in_repo.rpartition("/")
    if not folder:
        return name in TOP_FILES
    return folder in SHARD_FOLDERS and bool(SHARD_NAME.match(name))


def local_files(root: Path, ds: Dataset) -> list[LocalFile]:
    """The dataset's files, hashed: the top files present, every shard of `data/` and
    (when built) `images/`. A symbolic link among them is refused (the tool never reads
    its folder through one)."""
    folders = [ds] + ([Dataset.open(root, IMAGES_DIR)] if (root / IMAGES_DIR).exists() else [])
    rels = [name for name in TOP_FILES if os.path.lexists(root / name)]
    rels += [p.relative_to(root).as_posix() for d in folders for p, _ in d.files()]
    for rel in rels:
        for here in (root / rel, (root / rel).parent):
            if here.is_symlink():
                raise ConfigError(f"{here}: a symbolic link; publish uploads only the "
                                  "dataset's own files: replace the link by the file")
        if not (root / rel).is_file():
            raise ConfigError(f"{root / rel}: not a file")
    return [_hashed(root, rel) for rel in rels]


def same(local: LocalFile, remote: Any) -> bool:
    """The Hub already holds this content at this path (`remote`: a `RepoFile`)."""
    if remote.lfs is not None:
        return bool(remote.lfs.sha256 == local.sha256)
    return bool(remote.blob_id == local.git_sha1)


@dataclass
class UploadPlan:
    add: list[LocalFile] = field(default_factory=list)
    unchanged: list[LocalFile] = field(default_factory=list)
    delete: list[str] = field(default_factory=list)


def plan_commit(local: list[LocalFile], remote: Mapping[str, Any]) -> UploadPlan:
    """What a commit on top of `remote` ({path: RepoFile}) changes so that its dataset
    files are exactly `local`."""
    plan = UploadPlan()
    for f in local:
        there = remote.get(f.path_in_repo)
        (plan.unchanged if there is not None and same(f, there) else plan.add).append(f)
    mine = {f.path_in_repo for f in local}
    plan.delete = sorted(p for p in remote if is_dataset_path(p) and p not in mine)
    return plan


# -- the Hub -------------------------------------------------------------------------------

@dataclass
class Published:
    repo: str
    version: Version
    commit: str
    uploaded: list[str]
    unchanged: int
    deleted: list[str]
    already: bool = False
    url: str = ""


def check_repo_id(repo: str) -> str:
    if not _REPO_ID.match(repo) or ".." in repo or "--" in repo or repo.endswith(".git"):
        raise ConfigError(f"--repo {repo!r}: not a Hub repository id (OWNER/NAME: letters, "
                          "digits, '-', '_', '.'; e.g. my-name/hal-lay)")
    return repo


def _message(e: BaseException) -> str:
    text = " ".join(str(e).split())
    return text[:200] or type(e).__name__


def _transport_errors() -> tuple[type[Exception], ...]:
    """The HTTP client's own errors (a refused connection, a timeout): `huggingface_hub`
    2.x sends through httpx2, earlier versions through httpx."""
    import importlib

    for name in ("httpx2", "httpx"):
        try:
            return (importlib.import_module(name).HTTPError,)
        except (ImportError, AttributeError):
            continue
    return ()


@contextmanager
def _hub_errors(endpoint: str, repo: str, step: list[str]) -> Iterator[None]:
    """The library's errors, each one line naming the repository and what was being done."""
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled, RepositoryNotFoundError

    transport = _transport_errors()
    try:
        yield
    except RuntimeError as e:  # the library wraps an upload's error, the cause is the news
        cause = e.__cause__
        if isinstance(cause, Exception) and isinstance(
                cause, (HfHubHTTPError, OfflineModeIsEnabled, *transport)):
            news: Exception = cause
            with _hub_errors(endpoint, repo, step):
                raise news from None
        raise
    except OfflineModeIsEnabled:
        raise ConfigError("HF_HUB_OFFLINE is set: publishing needs the network (unset "
                          "it); nothing was uploaded") from None
    except RepositoryNotFoundError:
        raise ConfigError(f"{repo}: no such dataset repository at {endpoint}, or the token "
                          f"cannot see it ({step[0]})") from None
    except HfHubHTTPError as e:
        status = e.response.status_code if e.response is not None else None
        if status == 401:
            why = ("refused the token (401): set HF_TOKEN to a token with write access, "
                   "or log in with `hf auth login`")
        elif status == 403:
            why = f"refused (403): the token may not write to {repo}"
        elif status == 412:
            why = f"{repo} changed while publishing (412): run the same command again"
        elif status is not None and status >= 500:
            why = (f"answered {status} (after the retries huggingface_hub makes): the Hub "
                   "is failing, run the same command again later")
        else:
            why = f"answered {status}: {_message(e)}"
        raise ConfigError(f"{endpoint} {why} ({step[0]}; no tag was made)") from None
    except Exception as e:
        if not isinstance(e, transport):
            raise
        raise ConfigError(f"cannot reach {endpoint} ({_message(e)}) while {step[0]}; "
                          "nothing was tagged: run the same command again") from None


def _token() -> str:
    from huggingface_hub import constants, get_token

    if constants.HF_HUB_OFFLINE:
        raise ConfigError("HF_HUB_OFFLINE is set: publishing needs the network (unset it); "
                          "nothing was uploaded")
    token = get_token()
    if not token:
        raise ConfigError("no Hugging Face token: set HF_TOKEN, or log in with "
                          "`hf auth login`; nothing was uploaded")
    return token


def _quiet() -> None:
    """No line per HTTP request (the CLI logs INFO; `-v` keeps them), and no progress
    bars unless stderr is a terminal, so an error stays one line in a log."""
    import logging
    import sys

    from huggingface_hub.utils import disable_progress_bars

    if logging.getLogger().getEffectiveLevel() > logging.DEBUG:
        logging.getLogger("httpx2").setLevel(logging.WARNING)
    if not sys.stderr.isatty():
        disable_progress_bars()


def _human(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def publish(root: str | Path, repo: str, *, private: bool = False,
            allow_restricted: bool = False, endpoint: str | None = None,
            echo: Callable[[str], None] = print) -> Published:
    """Publish the dataset in `root` to the dataset repository `repo` (see the module)."""
    root = Path(root)
    check_repo_id(repo)
    with ReadLock(root, "a build"):
        check_built(root)
        ds = Dataset.open(root)
        if not (root / README).is_file():
            raise ConfigError(f"{root}: no {README} (the card); give the --out folder of a "
                              "finished build")
        version = dataset_version(root)
        counts = license_counts(ds)
        refused = restricted(counts)
        if refused and not allow_restricted:
            rows = sum(refused.values())
            listed = ", ".join(f"{lid} {n:,}" for lid, n in refused.items())
            raise ConfigError(
                f"{root}: {rows:,} of {sum(counts.values()):,} rows carry licences that do "
                f"not let you redistribute them ({listed}); keep only what you may share "
                "(`licenses: [open]` in --config) and rebuild, or pass --allow-restricted "
                "if you hold the rights; nothing was uploaded")
        files = local_files(root, ds)
        token = _token()
        return _push(repo, version, files, token, private, endpoint, echo)


def check_built(root: Path) -> None:
    """Only what this tool built and finished goes up: its marker says `loralay build` made
    the folder, and the finish's report is there (a folder of Parquet files and a card made
    otherwise, or a build killed before its first finish, is not a dataset to publish)."""
    if not root.is_dir():
        return  # `Dataset.open` names what is there instead
    kind = made_as(root)
    if kind == EXPORT:
        raise ConfigError(f"{root}: a folder of `loralay export` (its {MARKER} marker says "
                          "so), not a dataset: publish the dataset folder it was exported "
                          "from, the --out of its `loralay build`; nothing was uploaded")
    if kind != BUILD:
        raise ConfigError(f"{root}: not a dataset this tool built (no {MARKER} marker of "
                          "`loralay build`); publish the --out folder of a finished "
                          "`loralay build`; nothing was uploaded")
    report = root / REPORT_JSON
    if not report.is_file() or ReportSummary.read(report).verdict is None:
        why = "its report.json has no verdict" if report.is_file() else "no report.json"
        raise ConfigError(f"{root}: a build that has not finished ({why}): rerun the same "
                          "`loralay build`, then publish; nothing was uploaded")


def _push(repo: str, version: Version, files: list[LocalFile], token: str,
          private: bool, endpoint: str | None, echo: Callable[[str], None]) -> Published:
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi
    from huggingface_hub.hf_api import RepoFile

    _quiet()
    api = HfApi(endpoint=endpoint, token=token)
    where = api.endpoint
    step = ["creating the repository"]
    kind = "dataset"
    with _hub_errors(where, repo, step):
        api.create_repo(repo, repo_type=kind, private=True if private else None, exist_ok=True)
        if private:
            step[0] = "reading the repository"
            if not api.dataset_info(repo).private:
                raise ConfigError(f"{repo}: already on {where} and public; --private cannot "
                                  "make it private (change its visibility on the Hub, or "
                                  "leave out --private); nothing was uploaded")
        step[0] = "listing its tags"
        refs = api.list_repo_refs(repo, repo_type=kind)
        tags = {t.name: t.target_commit for t in refs.tags}
        newer = sorted((int(m.group(1)) for t in tags if (m := _TAG.match(t))), reverse=True)
        if newer and newer[0] > version.number and version.tag not in tags:
            raise ConfigError(f"{repo}: already has v{newer[0]}, newer than this dataset's "
                              f"{version.tag}; nothing was uploaded")
        head = next((b.target_commit for b in refs.branches if b.name == "main"), None)
        step[0] = "listing its files"

        def tree(rev: str) -> dict[str, Any]:
            return {f.path: f for f in api.list_repo_tree(repo, repo_type=kind, revision=rev,
                                                          recursive=True)
                    if isinstance(f, RepoFile)}

        tagged = tags.get(version.tag)
        if tagged is not None:
            plan = plan_commit(files, tree(tagged))
            if plan.add or plan.delete:
                differ = [f.path_in_repo for f in plan.add] + plan.delete
                raise ConfigError(
                    f"{repo}: {version.tag} is already published with other files "
                    f"({', '.join(differ[:3])}{', ...' if len(differ) > 3 else ''}); this "
                    "dataset changed without a new version: a refresh makes the next one; "
                    "nothing was uploaded")
            echo(f"{repo}: {version.tag} is already published (commit {tagged[:8]}); "
                 "nothing uploaded")
            return Published(repo, version, tagged, [], len(files), [], already=True,
                             url=f"{where}/datasets/{repo}/tree/{version.tag}")
        plan = plan_commit(files, tree(head or "main"))
        commit = head or ""
        if plan.add or plan.delete:
            ops: list[Any] = [CommitOperationAdd(f.path_in_repo, str(f.path)) for f in plan.add]
            ops += [CommitOperationDelete(p) for p in plan.delete]
            description = "\n".join(
                [f"Published by loralay-build {__version__}."]
                + [f"- added {f.path_in_repo}" for f in plan.add]
                + [f"- removed {p}" for p in plan.delete]
                + [f"- unchanged: {len(plan.unchanged)} files"])
            step[0] = "uploading and committing"
            info = api.create_commit(repo, ops, commit_message=version.commit_message(),
                                     commit_description=description, repo_type=kind,
                                     revision="main", parent_commit=head)
            commit = info.oid
        step[0] = f"tagging {version.tag}"
        api.create_tag(repo, tag=version.tag, revision=commit, repo_type=kind,
                       tag_message=version.commit_message())
    size = sum(f.size for f in plan.add)
    url = f"{where}/datasets/{repo}/tree/{version.tag}"
    if plan.add or plan.delete:
        echo(f"published {version.tag} to {repo}: {len(plan.add)} files uploaded "
             f"({_human(size)}), {len(plan.unchanged)} unchanged, {len(plan.delete)} removed; "
             f"commit {commit[:8]}, tag {version.tag}")
    else:
        echo(f"{repo}: the files of {version.tag} were already there (commit {commit[:8]}); "
             f"nothing uploaded, tagged {version.tag}")
    echo(f"  {version.commit_message()}")
    echo(f"  {url}")
    return Published(repo, version, commit, [f.path_in_repo for f in plan.add],
                     len(plan.unchanged), plan.delete, url=url)
