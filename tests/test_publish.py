"""`loralay publish`: against tests/fakehub.py, a Hub on 127.0.0.1 that speaks the HTTP API
`huggingface_hub` uses (the library runs unchanged, in the CLI's own process), so what is
checked is what a Hub would hold: the files of each version's commit, its message, its tag,
and that a download of each tag loads with `datasets` in a new process."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from loralay_build.dataset import Dataset
from loralay_build.diffs import DatasetDiff, Untaken
from loralay_build.errors import ConfigError
from loralay_build.hub import (
    check_repo_id,
    dataset_version,
    is_dataset_path,
    license_counts,
    plan_commit,
    restricted,
)
from loralay_build.locks import RunLock

from .conftest import copy_run, loralay
from .fakehub import FakeHub
from .helpers.publish import hub_env, publish

SHARDS = {"train": "data/train-00000-of-00001-", "validation": "data/validation-00000-of-00001-",
          "test": "data/test-00000-of-00001-"}


def one_line_error(proc: subprocess.CompletedProcess, *words: str) -> str:
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("loralay: "), proc.stderr[-2000:]
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def new_test_shard(ds: Path) -> tuple[str, str, str]:
    """What a refresh would do to the test split, by hand: one more document, the shard
    rewritten under its new content name, the card naming it, a `diff.json` of version 2.
    Returns (old shard, new shard, the new id), paths in the repository."""
    old = next((ds / "data").glob("test-*.parquet"))
    table = pq.read_table(old)
    row = table.slice(0, 1)
    new_id = f"{row.column('article_id')[0].as_py()}-v2"
    ids = pa.array([new_id], type=table.schema.field("article_id").type)
    row = row.set_column(table.schema.get_field_index("article_id"), "article_id", ids)
    tmp = ds / "data" / "test.tmp"
    pq.write_table(pa.concat_tables([table, row]), tmp)
    digest = hashlib.sha256(tmp.read_bytes()).hexdigest()[:12]
    new = ds / "data" / f"test-00000-of-00001-{digest}.parquet"
    tmp.rename(new)
    old.unlink()
    card = ds / "README.md"
    card.write_text(card.read_text().replace(old.name, new.name))
    (ds / "diff.json").write_text(json.dumps({
        "version_before": 1, "version": 2, "added": {"test": [new_id]},
        "duplicates": [], "missing_upstream": [], "dropped": {}}))
    return f"data/{old.name}", f"data/{new.name}", new_id


LOAD = """
import json, sys
from datasets import load_dataset
ds = load_dataset(sys.argv[1])
print(json.dumps({s: sorted(ds[s]["article_id"]) for s in ds}))
"""

DOWNLOAD = """
import sys
from huggingface_hub import snapshot_download
for rev, folder in zip(sys.argv[2::2], sys.argv[3::2]):
    snapshot_download(sys.argv[1], repo_type="dataset", revision=rev, local_dir=folder)
"""


@pytest.fixture(scope="module")
def history(built_sample, tmp_path_factory):
    """The sample published as v1 (beside a user's file and PDFs), published again, then
    changed as a refresh would change it and published as v2; each step's process and the
    Hub's log at that point."""
    tmp = tmp_path_factory.mktemp("publish")
    ds = copy_run(built_sample[0], tmp / "ds")
    (ds / "notes.txt").write_text("my notes, not the dataset's\n")
    (ds / "data" / "notes.txt").write_text("mine too\n")
    (ds / "pdfs").mkdir()
    (ds / "pdfs" / "paper.pdf").write_bytes(b"%PDF-1.4 not for the Hub")
    with FakeHub() as hub:
        env = hub_env(hub, tmp / "home")
        steps: dict[str, dict] = {}
        for name in ("v1", "again"):
            proc = publish(ds, env, "--allow-restricted")
            steps[name] = {"proc": proc, "log": list(hub.log), "uploads": list(hub.uploads),
                           "commits": len(hub.commit_bodies)}
        v1_tree = hub.tree("tester/sample-lay", "v1")
        old, new, new_id = new_test_shard(ds)
        proc = publish(ds, env, "--allow-restricted")
        steps["v2"] = {"proc": proc, "log": list(hub.log), "uploads": list(hub.uploads),
                       "commits": len(hub.commit_bodies)}
        down = {rev: tmp / f"download-{rev}" for rev in ("v1", "v2")}
        fetched = subprocess.run([sys.executable, "-c", DOWNLOAD, "tester/sample-lay",
                                  *[str(x) for rev, f in down.items() for x in (rev, f)]],
                                 env=env, capture_output=True, text=True, timeout=300)
        yield {"ds": ds, "hub": hub, "steps": steps, "v1_tree": v1_tree, "old": old,
               "new": new, "new_id": new_id, "down": down, "fetched": fetched, "tmp": tmp}


def repo_of(history: dict):
    return history["hub"].repos["tester/sample-lay"]


@pytest.mark.e2e
def test_v1_holds_exactly_the_dataset_and_is_tagged(history):
    proc = history["steps"]["v1"]["proc"]
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "published v1 to tester/sample-lay" in proc.stdout
    tree = history["v1_tree"]
    shards = sorted(p for p in tree if p.startswith("data/"))
    assert [s.rsplit("-", 1)[0] + "-" for s in shards] == sorted(SHARDS.values())
    assert sorted(tree) == sorted([".gitattributes", "README.md", "report.md", "report.json",
                                   *shards])
    for never in ("pdfs/paper.pdf", "notes.txt", "data/notes.txt", ".lock", ".loralay",
                  "state/fetch.sqlite", "report/config.yaml"):
        assert never not in tree
    ds = history["ds"]
    for path in ("report.json", "report.md", *shards[1:]):  # the test shard: v2 rewrote it
        assert tree[path].data == (ds / path).read_bytes()
    repo = repo_of(history)
    commit = repo.commits[repo.tags["v1"]]
    assert commit.title == "Dataset v1: 8 documents (train 6, validation 1, test 1)"
    assert all(tree[s].lfs for s in shards) and not tree["README.md"].lfs


@pytest.mark.e2e
def test_publishing_the_same_version_again_uploads_nothing(history):
    v1, again = history["steps"]["v1"], history["steps"]["again"]
    proc = again["proc"]
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "v1 is already published" in proc.stdout and "nothing uploaded" in proc.stdout
    assert again["uploads"] == v1["uploads"] and again["commits"] == v1["commits"]
    new = again["log"][len(v1["log"]):]
    assert not [r for r in new if r.method == "PUT" or "/commit/" in r.path
                or "/tag/" in r.path or "/preupload/" in r.path]


@pytest.mark.e2e
def test_v2_commit_adds_only_the_new_files_and_v1_is_untouched(history):
    v2 = history["steps"]["v2"]
    proc = v2["proc"]
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "published v2" in proc.stdout and "1 removed" in proc.stdout
    hub = history["hub"]
    body = hub.commit_bodies[-1]
    assert body[0]["value"]["summary"] == "Dataset v2: 1 added (test 1) since v1"
    changed = {(line["key"], line["value"]["path"]) for line in body[1:]}
    assert changed == {("file", "README.md"), ("file", "diff.json"),
                       ("lfsFile", history["new"]), ("deletedFile", history["old"])}
    # the one new shard was uploaded; the unchanged train and validation shards were not
    new_uploads = v2["uploads"][len(history["steps"]["again"]["uploads"]):]
    new_sha = hashlib.sha256((history["ds"] / history["new"]).read_bytes()).hexdigest()
    assert new_uploads == [new_sha]
    repo = repo_of(history)
    assert set(repo.tags) == {"v1", "v2"}
    assert hub.tree("tester/sample-lay", "v1") == history["v1_tree"]
    v2_tree = hub.tree("tester/sample-lay", "v2")
    assert history["old"] not in v2_tree and history["new"] in v2_tree
    assert {p: b for p, b in v2_tree.items() if p.startswith(("data/train", "data/valid"))} == \
        {p: b for p, b in history["v1_tree"].items() if p.startswith(("data/train", "data/valid"))}


@pytest.mark.e2e
def test_each_tag_downloads_into_a_folder_datasets_loads(history):
    assert history["fetched"].returncode == 0, history["fetched"].stderr[-3000:]
    env = {k: v for k, v in os.environ.items() if k != "HF_ENDPOINT"}
    env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1",
               HF_HOME=str(history["tmp"] / "load-home"))
    loaded = {}
    for rev, folder in history["down"].items():
        assert not (folder / "pdfs").exists() and not (folder / "state").exists()
        proc = subprocess.run([sys.executable, "-c", LOAD, str(folder)], env=env,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-3000:]
        loaded[rev] = json.loads(proc.stdout.strip().splitlines()[-1])
    assert {s: len(ids) for s, ids in loaded["v1"].items()} == \
        {"train": 6, "validation": 1, "test": 1}
    assert loaded["v2"]["test"] == sorted(loaded["v1"]["test"] + [history["new_id"]])
    assert loaded["v2"]["train"] == loaded["v1"]["train"]


@pytest.mark.e2e
def test_a_published_version_whose_files_changed_is_refused(history, tmp_path):
    """The dataset rebuilt without a new version: v2 is on the Hub with other files."""
    ds = copy_run(history["ds"], tmp_path / "ds")
    card = ds / "README.md"
    card.write_text(card.read_text() + "\nedited\n")
    before = len(history["hub"].commit_bodies)
    proc = publish(ds, hub_env(history["hub"], tmp_path / "home"), "--allow-restricted")
    one_line_error(proc, "v2 is already published with other files (README.md)",
                   "nothing was uploaded")
    assert len(history["hub"].commit_bodies) == before


# -- refusals and errors: one line, exit 2, nothing uploaded ---------------------------------

@pytest.fixture
def sample_copy(built_sample, tmp_path):
    return copy_run(built_sample[0], tmp_path / "ds")


@pytest.fixture
def hub(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)  # the conftest's; publishing is online
    with FakeHub() as h:
        yield h


@pytest.mark.e2e
def test_restricted_licences_are_refused_naming_the_count_per_licence(sample_copy, hub,
                                                                      tmp_path):
    proc = publish(sample_copy, hub_env(hub, tmp_path / "home"))
    one_line_error(proc, "8 of 8 rows carry licences", "(unknown 8)", "--allow-restricted",
                   "nothing was uploaded")
    assert hub.log == [] and hub.repos == {}


@pytest.mark.e2e
def test_not_a_built_dataset_is_one_line(hub, tmp_path):
    """A card and one Parquet file in the dataset's layout, made by hand: not published."""
    folder = tmp_path / "notes"
    (folder / "data").mkdir(parents=True)
    (folder / "README.md").write_text("my notes\n")
    pq.write_table(pa.table({"article_id": ["x"]}),
                   folder / "data" / "train-00000-of-00001.parquet")
    assert one_line_error(publish(folder, hub_env(hub, tmp_path / "home"))) == (
        f"loralay: {folder}: not a dataset this tool built (no .loralay marker of `loralay "
        "build`); publish the --out folder of a finished `loralay build`; nothing was "
        "uploaded")
    one_line_error(publish(tmp_path / "absent", hub_env(hub, tmp_path / "home")), "not found")
    assert hub.log == []


@pytest.mark.e2e
def test_an_export_folder_or_an_unfinished_build_is_refused_saying_what_it_is(
        built_sample, hub, tmp_path):
    env = hub_env(hub, tmp_path / "home")
    vila = tmp_path / "vila"
    export = loralay("export", "vila", str(built_sample[0]), "--out", str(vila))
    assert export.returncode == 0, export.stderr[-2000:]
    assert one_line_error(publish(vila, env)) == (
        f"loralay: {vila}: a folder of `loralay export` (its .loralay marker says so), not a "
        "dataset: publish the dataset folder it was exported from, the --out of its "
        "`loralay build`; nothing was uploaded")
    ds = copy_run(built_sample[0], tmp_path / "ds")
    (ds / "report.json").unlink()  # as a build killed before its first finish leaves it
    assert one_line_error(publish(ds, env, "--allow-restricted")) == (
        f"loralay: {ds}: a build that has not finished (no report.json): rerun the same "
        "`loralay build`, then publish; nothing was uploaded")
    assert hub.log == []


@pytest.mark.e2e
@pytest.mark.parametrize("repo", ["sample-lay", "a/b/c", "-x/y", "me/ds..x", "me/"])
def test_a_bad_repo_id_is_one_line(sample_copy, hub, tmp_path, repo):
    proc = publish(sample_copy, hub_env(hub, tmp_path / "home"), repo=repo)
    one_line_error(proc, "not a Hub repository id")
    assert hub.log == []


@pytest.mark.e2e
def test_a_missing_token_is_one_line(sample_copy, hub, tmp_path):
    proc = publish(sample_copy, hub_env(hub, tmp_path / "home", token=None), "--allow-restricted")
    one_line_error(proc, "no Hugging Face token", "HF_TOKEN", "hf auth login")
    assert hub.log == []


@pytest.mark.e2e
def test_a_token_the_hub_refuses_is_one_line(sample_copy, hub, tmp_path):
    proc = publish(sample_copy, hub_env(hub, tmp_path / "home", token="hf_wrong"),
                   "--allow-restricted")
    one_line_error(proc, "refused the token (401)", "creating the repository")
    assert hub.repos == {}


@pytest.mark.e2e
def test_a_server_error_is_one_line_and_tags_nothing(sample_copy, hub, tmp_path):
    hub.fail("POST", "/api/datasets/tester/sample-lay/commit/", 500)
    proc = publish(sample_copy, hub_env(hub, tmp_path / "home"), "--allow-restricted")
    one_line_error(proc, "answered 500", "uploading and committing", "no tag was made")
    assert repo_tags(hub) == {}


@pytest.mark.e2e
def test_a_transient_server_error_is_retried_by_the_library(sample_copy, hub, tmp_path):
    hub.fail("POST", "/api/datasets/tester/sample-lay/preupload/", 503, times=1)
    proc = publish(sample_copy, hub_env(hub, tmp_path / "home"), "--allow-restricted")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert [r.status for r in hub.requests("POST", "/preupload/")] == [503, 200]
    assert set(repo_tags(hub)) == {"v1"}


def repo_tags(hub: FakeHub) -> dict[str, str]:
    repo = hub.repos.get("tester/sample-lay")
    return dict(repo.tags) if repo else {}


@pytest.mark.e2e
def test_a_running_build_is_refused(sample_copy, hub, tmp_path):
    with RunLock(sample_copy):
        proc = publish(sample_copy, hub_env(hub, tmp_path / "home"), "--allow-restricted")
    one_line_error(proc, "a build is running (pid", "when it is done")
    assert hub.log == []


@pytest.mark.e2e
def test_private_creates_a_private_repository(sample_copy, hub, tmp_path):
    proc = publish(sample_copy, hub_env(hub, tmp_path / "home"), "--allow-restricted",
                   "--private")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert hub.repos["tester/sample-lay"].private


# -- units -----------------------------------------------------------------------------------

def test_the_version_of_a_dataset_never_refreshed_is_1_with_the_kept_counts(tmp_path):
    (tmp_path / "report.json").write_text(json.dumps(
        {"splits": {"train": {"count": 6}, "validation": {"count": 1}, "test": {"count": 1}}}))
    v = dataset_version(tmp_path)
    assert (v.number, v.tag) == (1, "v1")
    assert v.commit_message() == "Dataset v1: 8 documents (train 6, validation 1, test 1)"


def test_the_version_comes_from_diff_json(tmp_path):
    (tmp_path / "diff.json").write_text(json.dumps({
        "version_before": 2, "version": 3, "added": {"train": ["a", "b"], "test": ["c"]},
        "duplicates": [{"dropped": "d", "kept": "a"}], "missing_upstream": ["e", "f"],
        "dropped": {"corrupted": 1}}))
    v = dataset_version(tmp_path)
    assert v.tag == "v3"
    assert v.summary == ("3 added (train 2, test 1), 1 duplicates dropped, 2 missing "
                         "upstream, dropped: corrupted 1 since v2")


def test_the_commit_message_and_the_changelog_line_are_one_summary(tmp_path):
    """diff.json as a refresh writes it reads back as the same record, and publish's
    message is the changelog's line (untaken counts included), not a second wording."""
    diff = DatasetDiff(1, 2, {"test": ["n"]}, [], ["gone"], {"scanned": 2},
                       Untaken([{"id": "p", "old_pdf_sha256": "a", "new_pdf_sha256": "b"}]))
    (tmp_path / "diff.json").write_text(diff.write_text())
    assert json.loads((tmp_path / "diff.json").read_text())["schema_version"] == 2
    assert DatasetDiff.read(tmp_path / "diff.json") == diff
    v = dataset_version(tmp_path)
    assert diff.line() == ("v2: 1 added (test 1), 1 missing upstream, dropped: scanned 2, "
                           "1 changed PDFs not taken")
    assert v.commit_message() == f"Dataset {diff.line()} since v1"


def test_a_report_json_of_a_later_schema_is_refused_in_one_line(tmp_path):
    (tmp_path / "report.json").write_text(json.dumps(
        {"schema_version": 9, "verdict": "ok", "splits": {"train": {"count": 1}}}))
    with pytest.raises(ConfigError, match=r"report.json: schema_version 9; this loralay"):
        dataset_version(tmp_path)
    (tmp_path / "report.json").write_text(json.dumps({"splits": {"train": 3}}))
    with pytest.raises(ConfigError, match=r"report.json: 'splits' is not"):
        dataset_version(tmp_path)


def test_a_diff_json_of_schema_1_reads_and_one_of_a_later_schema_is_refused(tmp_path):
    old = {"version_before": 1, "version": 2, "added": {"train": ["a"]}, "duplicates": [],
           "missing_upstream": [], "dropped": {}}
    assert DatasetDiff.from_json(old).untaken == Untaken()
    (tmp_path / "diff.json").write_text(json.dumps({**old, "schema_version": 9}))
    with pytest.raises(ConfigError, match=r"diff.json: schema_version 9; this loralay reads"):
        dataset_version(tmp_path)


@pytest.mark.parametrize("diff", ['{"version": 0}', '{"version": "2"}', "[]", "{",
                                  '{"version": 2, "added": ["x"]}',
                                  '{"version": 2, "dropped": {"x": "1"}}'])
def test_a_malformed_diff_json_is_one_line(tmp_path, diff):
    (tmp_path / "diff.json").write_text(diff)
    with pytest.raises(ConfigError, match="diff.json"):
        dataset_version(tmp_path)


def test_restricted_licences_are_those_outside_open():
    counts = {"cc-by-4.0": 5, "unknown": 2, "arxiv-nonexclusive-distrib-1.0": 3,
              "all-rights-reserved": 1, "cc0-1.0": 1, "cc-by-nc-nd-3.0-br": 1}
    assert restricted(counts) == {"arxiv-nonexclusive-distrib-1.0": 3, "unknown": 2,
                                  "all-rights-reserved": 1}


@pytest.mark.e2e  # the sample's build
def test_licence_counts_come_from_the_rows(built_sample, tmp_path):
    ds = copy_run(built_sample[0], tmp_path / "ds")
    shard = next((ds / "data").glob("train-*.parquet"))
    table = pq.read_table(shard)
    i = table.schema.get_field_index("license")
    values = ["cc-by-4.0"] * (table.num_rows - 1) + [None]
    pq.write_table(table.set_column(i, "license", pa.array(values, pa.string())), shard)
    assert license_counts(Dataset.open(ds)) == {"cc-by-4.0": 5, "unknown": 3}


@pytest.mark.parametrize("path, ours", [
    ("README.md", True), ("report.json", True), ("diff.json", True),
    ("data/train-00000-of-00001-0123456789ab.parquet", True),
    ("images/test-00000-of-00002.parquet", True), (".gitattributes", False),
    ("data/notes.txt", False), ("report/config.yaml", False), ("pdfs/x.pdf", False),
    ("other/train-00000-of-00001.parquet", False)])
def test_only_the_dataset_paths_are_ever_replaced_or_removed(path, ours):
    assert is_dataset_path(path) is ours


class _Remote:
    def __init__(self, sha256: str | None = None, blob_id: str | None = None) -> None:
        self.lfs = type("L", (), {"sha256": sha256})() if sha256 else None
        self.blob_id = blob_id


def test_a_commit_adds_what_is_new_or_changed_and_removes_old_shards(tmp_path):
    from loralay_build.hub import LocalFile

    def local(rel: str, sha: str, sha1: str = "") -> LocalFile:
        return LocalFile(rel, tmp_path / rel, 1, sha, sha1)

    files = [local("README.md", "r", "git-new"), local("data/train-00000-of-00001-aaaaaaaaaaaa"
                                                       ".parquet", "same")]
    remote = {"README.md": _Remote(blob_id="git-old"),
              "data/train-00000-of-00001-aaaaaaaaaaaa.parquet": _Remote(sha256="same"),
              "data/test-00000-of-00001-bbbbbbbbbbbb.parquet": _Remote(sha256="gone"),
              ".gitattributes": _Remote(blob_id="g"), "extra.txt": _Remote(blob_id="e")}
    plan = plan_commit(files, remote)
    assert [f.path_in_repo for f in plan.add] == ["README.md"]
    assert [f.path_in_repo for f in plan.unchanged] == [
        "data/train-00000-of-00001-aaaaaaaaaaaa.parquet"]
    assert plan.delete == ["data/test-00000-of-00001-bbbbbbbbbbbb.parquet"]


def test_repo_ids():
    assert check_repo_id("me/hal-lay") == "me/hal-lay"
    for bad in ("hal-lay", "a/b/c", "me/x.git", "me/a--b", "/x"):
        with pytest.raises(ConfigError, match="not a Hub repository id"):
            check_repo_id(bad)


@pytest.mark.e2e  # the sample's build
def test_the_files_are_the_dataset_s_own(built_sample, tmp_path):
    """The top files present, every shard of data/ and images/; nothing else of the folder."""
    from loralay_build.hub import local_files

    ds = copy_run(built_sample[0], tmp_path / "ds")
    (ds / "images").mkdir()
    pq.write_table(pa.table({"article_id": ["x"]}), ds / "images" / "train-00000-of-00001.parquet")
    (ds / "images" / "notes.txt").write_text("mine")
    (ds / "data" / "notes.txt").write_text("mine")
    (ds / "notes.txt").write_text("mine")
    rels = sorted(f.path_in_repo for f in local_files(ds, Dataset.open(ds)))
    shards = sorted(p.relative_to(ds).as_posix() for p in (ds / "data").glob("*.parquet"))
    assert rels == sorted(["README.md", "report.md", "report.json",
                           "images/train-00000-of-00001.parquet", *shards])


@pytest.mark.e2e  # the sample's build
def test_a_link_among_the_files_is_refused(built_sample, tmp_path):
    from loralay_build.hub import local_files

    ds = copy_run(built_sample[0], tmp_path / "ds")
    outside = tmp_path / "elsewhere.json"
    outside.write_text("{}")
    (ds / "report.json").unlink()
    (ds / "report.json").symlink_to(outside)
    with pytest.raises(ConfigError, match="report.json: a symbolic link"):
        local_files(ds, Dataset.open(ds))


@pytest.mark.e2e
def test_endpoint_option_wins_and_an_unreachable_hub_is_one_line(sample_copy, hub, tmp_path):
    import socket

    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    env = hub_env(hub, tmp_path / "home")
    env["HF_ENDPOINT"] = dead
    proc = publish(sample_copy, env, "--allow-restricted", "--endpoint", hub.url)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert set(repo_tags(hub)) == {"v1"}
    proc = publish(sample_copy, env, "--allow-restricted", repo="tester/other")
    one_line_error(proc, f"cannot reach {dead}", "creating the repository")


@pytest.mark.e2e
def test_private_on_a_public_repository_is_refused(sample_copy, hub, tmp_path):
    env = hub_env(hub, tmp_path / "home")
    assert publish(sample_copy, env, "--allow-restricted").returncode == 0
    commits = len(hub.commit_bodies)
    proc = publish(sample_copy, env, "--allow-restricted", "--private")
    one_line_error(proc, "already on", "public; --private cannot make it private")
    assert len(hub.commit_bodies) == commits


@pytest.mark.e2e
def test_a_publish_stopped_before_its_tag_tags_when_run_again(sample_copy, hub, tmp_path):
    env = hub_env(hub, tmp_path / "home")
    hub.fail("POST", "/api/datasets/tester/sample-lay/tag/", 503, times=1)
    one_line_error(publish(sample_copy, env, "--allow-restricted"), "answered 503",
                   "tagging v1")
    assert repo_tags(hub) == {} and len(hub.commit_bodies) == 1
    uploads = list(hub.uploads)
    proc = publish(sample_copy, env, "--allow-restricted")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "already there" in proc.stdout and "nothing uploaded, tagged v1" in proc.stdout
    assert len(hub.commit_bodies) == 1 and hub.uploads == uploads
    assert repo_tags(hub) == {"v1": hub.repos["tester/sample-lay"].branches["main"]}


def test_the_read_lock_is_shared_and_creates_nothing(tmp_path):
    from loralay_build.errors import RunLocked
    from loralay_build.locks import ReadLock

    with ReadLock(tmp_path):  # a folder without a .lock: read without one, none made
        assert not (tmp_path / ".lock").exists()
    with RunLock(tmp_path):
        pass
    with ReadLock(tmp_path), ReadLock(tmp_path):  # readers never exclude each other
        with pytest.raises(RunLocked):  # a build is refused while one reads
            with RunLock(tmp_path):
                pass
    running = rf"a build is running \(pid {os.getpid()}\)"
    with RunLock(tmp_path), pytest.raises(RunLocked, match=running):
        with ReadLock(tmp_path):
            pass


@pytest.mark.e2e
def test_a_failed_shard_upload_is_one_line(sample_copy, hub, tmp_path):
    """The library wraps an LFS upload's error in a RuntimeError; the line gives the Hub's."""
    hub.fail("PUT", "/lfs-upload/", 400)
    proc = publish(sample_copy, hub_env(hub, tmp_path / "home"), "--allow-restricted")
    one_line_error(proc, "answered 400", "uploading and committing", "no tag was made")
    assert hub.commit_bodies == [] and repo_tags(hub) == {}


def test_a_file_given_as_the_folder_is_one_line(tmp_path):
    from loralay_build.hub import publish as run

    (tmp_path / "f").write_text("x")
    with pytest.raises(ConfigError, match="f: not a folder"):
        run(tmp_path / "f", "me/x", echo=lambda line: None)
