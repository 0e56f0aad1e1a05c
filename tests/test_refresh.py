"""`build --refresh` on real inputs: the committed sample built, then refreshed with new
papers (real ones from ../shared/corpus with their true abstracts, a re-saved copy of an
old paper dated before it, an exact copy of another under a new id) while an old id leaves
the manifest, then refreshed again with nothing new. The old files stay byte for byte, the
new rows go to new files the card lists after them, diff.json and the card say what
changed, and a refresh killed in its finish, run again, gives the uninterrupted one."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from .conftest import (
    REPO,
    SAMPLE,
    build_local,
    config,
    copy_run,
    local_refresh_exited_at,
    local_refresh_killed_when,
    loralay,
    rows_as_written,
    shared_path,
)
from .helpers.refresh import DIFF, GONE, V1_KEPT, _lines, make_manifests

pytestmark = pytest.mark.e2e

V2_LINE = ("v2: 4 added (train 2, validation 1, test 1), 2 duplicates dropped, 1 missing "
           "upstream, dropped: corrupted 1")


@pytest.fixture(scope="module")
def manifests(tmp_path_factory) -> tuple[Path, Path]:
    return make_manifests(tmp_path_factory.mktemp("manifests"))


@pytest.fixture(scope="module")
def built_v1(manifests, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("v1") / "ds"
    build_local(manifests[0], out, check=True)
    return out


@pytest.fixture(scope="module")
def refreshed(built_v1, manifests, tmp_path_factory) -> tuple[Path, dict, str]:
    """A copy of v1 refreshed with v2's manifest: (folder, v1's files as they were, stderr)."""
    out = copy_run(built_v1, tmp_path_factory.mktemp("v2") / "ds")
    before = _files(out)
    proc = build_local(manifests[1], out, "--refresh", check=True)
    return out, before, proc.stderr


def _files(out: Path) -> dict[str, tuple[int, int, bytes]]:
    """Each data file and the card: (inode, mtime_ns, bytes)."""
    paths = sorted((out / "data").glob("*.parquet")) + [out / "README.md"]
    paths += [out / "diff.json"] if (out / "diff.json").exists() else []
    return {str(p.relative_to(out)): (p.stat().st_ino, p.stat().st_mtime_ns, p.read_bytes())
            for p in paths}


def _card(out: Path) -> tuple[dict, str]:
    text = (out / "README.md").read_text()
    _, front, body = text.split("---\n", 2)
    return yaml.safe_load(front), body


def _loaded(out: Path) -> dict[str, list[str]]:
    """`load_dataset(DIR)` in a process of its own: each split's ids in order."""
    code = ("import json, sys; from datasets import load_dataset; "
            "ds = load_dataset(sys.argv[1]); "
            "print(json.dumps({s: list(ds[s]['article_id']) for s in ds}))")
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1",
           "HF_DATASETS_CACHE": str(out.parent / "hf-cache")}
    proc = subprocess.run([sys.executable, "-c", code, str(out)], capture_output=True,
                          text=True, check=True, env=env, cwd=REPO)
    return {s: list(v) for s, v in json.loads(proc.stdout.splitlines()[-1]).items()}


def test_a_refresh_keeps_every_old_file_and_row_and_adds_the_new_papers(refreshed, built_v1):
    out, before, err = refreshed
    after = _files(out)
    old_data = {k: v for k, v in before.items() if k.startswith("data/")}
    # the version 1 files, as a build of the same manifest names them (content-named)
    assert sorted(old_data) == sorted(f"data/{f.name}" for f in (built_v1 / "data").iterdir())
    assert [n.split("-")[0].split("/")[1] for n in sorted(old_data)] == [
        "test", "train", "validation"]
    # byte for byte (carried over, not rewritten), renumbered into the split's one total
    # (issue 46, 12): the content's digest names it still
    renamed = {name: next(a for a in after if a.startswith("data/") and
                          a.rsplit("-", 1)[1] == name.rsplit("-", 1)[1]) for name in old_data}
    assert sorted(n.split("/")[1].rsplit("-", 1)[0] for n in renamed.values()) == [
        "test-00000-of-00002", "train-00000-of-00002", "validation-00000-of-00002"]
    for name, (_, _, data) in old_data.items():
        assert after[renamed[name]][2] == data
    written = rows_as_written(out)
    v1_rows = {renamed[f"data/{n}"].split("/")[1]: rows
               for n, rows in rows_as_written(built_v1)}
    new_files = [(name, [r["article_id"] for r in rows]) for name, rows in written
                 if name not in v1_rows]
    assert [(n.rsplit("-", 1)[0], ids) for n, ids in new_files] == [
        ("test-00001-of-00002", ["ko_kiit_voting"]),
        ("train-00001-of-00002", ["en_bmc_trauma", "pt_scielo_rsp_hindex"]),
        ("validation-00001-of-00002", ["es_scielo_malaga"])]
    for name, rows in written:
        if name in v1_rows:
            assert rows == v1_rows[name]
    assert json.loads((out / "diff.json").read_text()) == DIFF
    front, body = _card(out)
    files = {f["split"]: f["path"] for f in front["configs"][0]["data_files"]}
    assert files == {s: [f"data/{n}" for n, _ in written if n.startswith(f"{s}-")]
                     for s in ("train", "validation", "test")}
    assert ("This is version 2." in body and "- v1: 8 documents (train 6, validation 1, "
            "test 1)\n- " + V2_LINE + "\n" in body)
    assert "| train | 8 |" in body and "| **total** | 12 |" in body
    expected = {s: V1_KEPT[s] + DIFF["added"][s] for s in V1_KEPT}
    assert _loaded(out) == expected
    from loralay_build.dataset import Dataset  # what export, show, eval and publish read

    opened = Dataset.open(out)
    assert {s: [n for p, f in files for n in f.read(columns=["article_id"]).column(0).to_pylist()]
            for s, files in opened.splits.items()} == expected
    report = json.loads((out / "report.json").read_text())
    assert report["run"]["dataset_version"] == "2"
    assert report["run"]["refresh"].startswith(V2_LINE + " (since v1")
    assert report["thresholds"] == json.loads((built_v1 / "report.json").read_text()
                                              )["thresholds"]
    assert report["documents"][GONE] == {"status": "kept", "split": "train"} | {
        k: v for k, v in report["documents"][GONE].items() if k not in ("status", "split")}
    assert "resuming: 10 of 17 done; 7 to do, of which 7 new" in err


def test_a_refresh_with_nothing_new_rewrites_nothing_and_says_so_in_one_line(
        refreshed, manifests, tmp_path):
    out = copy_run(refreshed[0], tmp_path / "ds")
    before = _files(out)
    proc = build_local(manifests[1], out, "--refresh", check=True)
    assert _files(out) == before  # same inodes, times and bytes: nothing rewritten
    said = [line for line in proc.stderr.splitlines() if "no file rewritten" in line]
    assert len(said) == 1 and said[0].endswith(
        "done: refresh: nothing new since v2; no file rewritten")
    assert "process: 0/0" in proc.stderr


def test_a_plain_rebuild_of_a_refreshed_folder_builds_as_today(refreshed, manifests,
                                                                 tmp_path):
    out = copy_run(refreshed[0], tmp_path / "ds")
    proc = build_local(manifests[1], out, check=True)
    assert (f"{out} held version 2 of its dataset; this build without --refresh decides "
            "every split again and writes a new version 1") in proc.stderr
    assert not (out / "diff.json").exists()
    names = sorted(p.name.rsplit("-", 1)[0] for p in (out / "data").glob("*.parquet"))
    assert names == ["test-00000-of-00001", "train-00000-of-00001",
                     "validation-00000-of-00001"]
    loaded = _loaded(out)
    assert GONE not in sum(loaded.values(), []) and sum(map(len, loaded.values())) == 11
    assert "- v1: 11 documents" in _card(out)[1]
    fresh = tmp_path / "fresh"
    build_local(manifests[1], fresh, check=True)
    assert rows_as_written(out) == rows_as_written(fresh)


@pytest.mark.stress
@pytest.mark.parametrize("kill", [f"loralay_build.pdf.finish:{name}" for name in (
    "write_images_config", "record_decisions", "write_diff", "commit_base")] + [
    "loralay_build.write:write_card", "loralay_build.write:write_report", "parquet"])
def test_a_refresh_killed_in_its_finish_then_run_again_gives_the_uninterrupted_one(
        kill, refreshed, built_v1, manifests, tmp_path):
    """Killed before its decisions are recorded, after them and before the data, after
    the data and before the card, before the report, before diff.json, before the base is
    committed, and in a Parquet write: run again, the folder equals the uninterrupted
    refresh's, and a third run has nothing new."""
    out = copy_run(built_v1, tmp_path / "ds")
    if kill == "parquet":
        killed = local_refresh_killed_when(out, manifests[1], ".data-tmp-*/*.partial")
        assert killed == -signal.SIGKILL
    else:
        assert local_refresh_exited_at(out, manifests[1], kill) == 9
    build_local(manifests[1], out, "--refresh", check=True)
    want = refreshed[0]
    assert rows_as_written(out) == rows_as_written(want)
    assert (out / "README.md").read_text() == (want / "README.md").read_text()
    assert (out / "diff.json").read_text() == (want / "diff.json").read_text()
    again = build_local(manifests[1], out, "--refresh", check=True)
    assert "nothing new since v2" in again.stderr


def test_refresh_refusals_are_one_line(built_v1, manifests, tmp_path):
    empty = tmp_path / "none"
    proc = build_local(manifests[1], empty, "--refresh")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1] == (
        f"loralay: {empty}: --refresh needs a dataset this tool built there, and holds "
        "none; build it first, without --refresh")
    proc = build_local(manifests[1], built_v1, "--refresh", "--fresh")
    assert proc.returncode == 2 and proc.stderr.strip().splitlines()[-1] == (
        "loralay: --refresh with --fresh: a refresh adds to the dataset that --fresh would "
        "delete; give one of them")
    out = copy_run(built_v1, tmp_path / "ds")
    before = _files(out)
    proc = build_local(manifests[1], out, "--refresh", "--features", "published")
    assert proc.returncode == 2 and proc.stderr.strip().splitlines()[-1] == (
        'loralay: --refresh: `features` is "published", the dataset\'s rows were made with '
        '"compact"; its old rows cannot change: refresh with the same `features`, or '
        "rebuild without --refresh")
    assert _files(out) == before
    shutil.rmtree(out)



def test_a_dataset_written_with_label_names_is_refused_in_one_line(built_v1, manifests,
                                                                    tmp_path):
    """Before issue 46's ClassLabel, `article_labels` held the names as strings: carried
    beside new rows of ids, a split would mix two schemas and no longer load. The refresh
    refuses before touching anything, naming the file and the column."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from loralay_build.labels import LABELS

    out = copy_run(built_v1, tmp_path / "ds")
    names = pa.array(LABELS, pa.string())
    for path in sorted((out / "data").glob("*.parquet")):  # as the earlier writer did
        table = pq.read_table(path)
        col = table.column("article_labels").combine_chunks()
        flat = pa.DictionaryArray.from_arrays(col.values.cast(pa.int8()), names)
        old = pa.ListArray.from_arrays(col.offsets, flat.cast(pa.string()))
        table = table.set_column(table.schema.get_field_index("article_labels"),
                                 "article_labels", old)
        pq.write_table(table.replace_schema_metadata(None), path, compression="zstd")
    before = _files(out)
    proc = build_local(manifests[1], out, "--refresh")
    last = proc.stderr.strip().splitlines()[-1]
    assert proc.returncode == 2, proc.stderr
    first = sorted((out / "data").glob("train-*.parquet"))[0]  # the first carried file
    assert last == (f"loralay: --refresh: {first} holds `article_labels` as "
                    "list<item: string>, this version writes list<item: int64>; it was "
                    "written by an earlier loralay-build and its old rows cannot change: "
                    "rebuild without --refresh")
    assert _files(out) == before


# -- a network source: HAL against its local test server ----------------------------------


class DatedSearch:
    """HAL's search as far as a refresh needs it: the records whose `submittedDate_tdate`
    an `fq=submittedDate_tdate:[DAY TO *]` admits (all without one), paged on a cursor
    `*` → `c1` → ... of `rows`; past the end, no docs and the same mark back."""

    def __init__(self, docs: list[dict], rows: int) -> None:
        self.docs, self.rows = docs, rows
        self.requests: list = []

    def since(self, req) -> str | None:
        for fq in req.query.get("fq", []):
            m = re.fullmatch(r"submittedDate_tdate:\[(\S+) TO \*\]", fq)
            if m:
                return m.group(1)
        return None

    @property
    def asked(self) -> list[tuple[str, str | None]]:
        return [(r.query["cursorMark"][0], self.since(r)) for r in self.requests]

    def __call__(self, req):
        from .helpers.hal import json_reply

        self.requests.append(req)
        since = self.since(req)
        docs = [d for d in self.docs if since is None or d["submittedDate_tdate"] >= since]
        cursor = req.query["cursorMark"][0]
        index = 0 if cursor == "*" else int(cursor[1:])
        page = docs[index * self.rows:(index + 1) * self.rows]
        return json_reply({"response": {"numFound": len(docs), "start": 0, "docs": page},
                           "nextCursorMark": f"c{index + 1}" if page else cursor})


def test_a_hal_refresh_asks_only_for_what_is_new_and_adds_it(fake_server, tmp_path):
    """v1 harvests four records (two papers kept); HAL then holds two more: a new paper and
    the very PDF of a kept one under a new id. The refresh asks only for what was submitted
    since the newest submission date v1 saw, less a day (a record of that day comes again
    and is skipped); the new paper is added, the copy dropped naming the old id, the old
    files stay byte for byte; a third run asks from the refresh's mark and has nothing new."""
    from .fakeserver import Reply
    from .helpers.hal import PDF_TYPE, corpus_pdf, records, synthetic_doc, write_config

    base = fake_server.url("")
    every = records(base)  # hal-09000000..02: three French papers; 03 English, 04 HTML
    copy = synthetic_doc(5, base, corpus_id="fr_these_mucoviscidose")
    submitted = ["2026-01-05T09:00:00Z", "2026-01-08T10:00:00Z", "2026-02-01T08:00:00Z",
                 "2026-01-09T10:00:00Z", "2026-01-12T16:30:00Z", "2026-02-03T11:00:00Z"]
    for doc, day in zip([*every, copy], submitted):
        doc["submittedDate_tdate"] = day
    search = DatedSearch([every[0], every[1], every[3], every[4]], rows=2)
    fake_server.add_handler("/search/", search)
    bodies = {"/hal-09000000/document": corpus_pdf("fr_ahrf_censure"),
              "/hal-09000001/document": corpus_pdf("fr_these_mucoviscidose"),
              "/hal-09000002/document": corpus_pdf("fr_these_malware_long"),
              "/hal-09000003/document": corpus_pdf("en_hal_reaim"),
              "/hal-09000005/document": corpus_pdf("fr_these_mucoviscidose")}
    pdf_asked: list[str] = []

    def pdf(req):
        pdf_asked.append(req.path)
        return (Reply(200, bodies[req.path], PDF_TYPE) if req.path in bodies
                else Reply(200, "<html>Embargo</html>", PDF_TYPE))

    fake_server.add_handler("/hal-*", pdf)
    out = tmp_path / "hal"
    cfg = write_config(tmp_path, fake_server.url("/search/"))
    args = ("build", "--source", "hal", "--config", str(cfg), "--out", str(out))
    first = loralay(*args)
    assert first.returncode == 0, first.stderr[-2000:]
    assert search.asked == [("*", None), ("c1", None), ("c2", None)]
    assert "submittedDate_tdate" in search.requests[0].query["fl"][0].split(",")
    v1 = {p.name: p.read_bytes() for p in (out / "data").glob("*.parquet")}

    search.requests.clear()
    pdf_asked.clear()
    search.docs += [every[2], copy]  # submitted since
    second = loralay(*args, "--refresh")
    assert second.returncode == 0, second.stderr[-2000:]
    # from v1's newest submission (2026-01-12, hal-09000004) less a day: 3 records, 2 pages
    assert search.asked == [("*", "2026-01-11T00:00:00Z"), ("c1", "2026-01-11T00:00:00Z"),
                            ("c2", "2026-01-11T00:00:00Z")]
    assert sorted(pdf_asked) == ["/hal-09000002/document", "/hal-09000005/document"]
    diff = json.loads((out / "diff.json").read_text())
    assert diff["version"] == 2 and diff["missing_upstream"] == []
    assert sum(diff["added"].values(), []) == ["hal-09000002"]
    assert [(d["id"], d["kept"], d["kind"]) for d in diff["duplicates"]] == [
        ("hal-09000005", "hal-09000001", "same_pdf")]
    for name, data in v1.items():
        assert (out / "data" / name).read_bytes() == data
    assert len(list((out / "data").glob("*.parquet"))) == len(v1) + 1

    search.requests.clear()
    pdf_asked.clear()
    third = loralay(*args, "--refresh")
    assert third.returncode == 0, third.stderr[-2000:]
    assert search.asked == [("*", "2026-02-02T00:00:00Z"), ("c1", "2026-02-02T00:00:00Z")]
    assert pdf_asked == []
    assert "refresh: nothing new since v2; no file rewritten" in third.stderr


def test_a_hal_harvest_cut_short_saves_no_high_water_mark(fake_server, tmp_path):
    """The cursor runs in docid order, not by date: a mark saved before the whole query is
    walked could pass the submission dates of pages not yet walked, which a refresh would
    then never ask for. A harvest cut by --limit leaves no mark; a whole one saves it."""
    import sqlite3

    from .helpers.hal import records, serve, write_config

    every = records(fake_server.url(""))
    for doc, day in zip(every, ["2026-01-09", "2026-01-02", "2026-01-05", "2026-01-01",
                                "2026-01-03"]):
        doc["submittedDate_tdate"] = f"{day}T10:00:00Z"
    fake_server.add_handler("/search/", DatedSearch(every, rows=2))
    serve(fake_server)
    out = tmp_path / "hal"
    cfg = write_config(tmp_path, fake_server.url("/search/"))
    args = ("build", "--source", "hal", "--config", str(cfg), "--out", str(out))

    def mark() -> str | None:
        with sqlite3.connect(out / "state" / "fetch.sqlite") as con:
            got = con.execute("SELECT value FROM checkpoints WHERE name='hal.high_water'"
                              ).fetchone()
        return json.loads(got[0]) if got else None

    cut = loralay(*args, "--limit", "1")
    assert cut.returncode == 0, cut.stderr[-2000:]
    assert mark() is None
    whole = loralay(*args)
    assert whole.returncode == 0, whole.stderr[-2000:]
    assert mark() == "2026-01-09T10:00:00Z"


def test_an_arxiv_harvest_asks_the_bucket_only_for_ids_not_yet_seen(fake_server, tmp_path):
    """What a refresh's fetch of arXiv sends: the id list grew by one id (0704.0006); the
    second harvest lists and downloads that id only, every earlier one being recorded."""
    from loralay_build.store.fetch import FetchState

    from .helpers.arxiv import (
        API,
        Bucket,
        corpus_pdf,
        harvest,
        make_config,
        snapshot_lines,
        write_cohan,
    )

    metadata = tmp_path / "snapshot.jsonl"
    metadata.write_text("".join(json.dumps(x) + "\n" for x in snapshot_lines().values()))
    Bucket(fake_server, {
        "arxiv/arxiv/pdf/0704/0704.0001v2.pdf": corpus_pdf("en_arxiv_beyond_summ"),
        "arxiv/arxiv/pdf/0704/0704.0004v1.pdf": corpus_pdf("en_ieee_reqprio"),
        "arxiv/arxiv/pdf/0704/0704.0006v1.pdf": corpus_pdf("en_bmc_trauma")})
    ids = write_cohan(tmp_path / "ids", {"train": ["0704.0001"], "val": ["0704.0004"],
                                          "test": []})
    cfg = make_config(tmp_path, fake_server, ids, metadata)
    with FetchState(tmp_path / "state.sqlite") as state:
        first = harvest(cfg, state, tmp_path / "out")
        assert sorted(i.id for i in first) == ["0704.0001", "0704.0004"]
        sent = len(fake_server.requests)
        write_cohan(ids, {"train": ["0704.0001", "0704.0006"], "val": ["0704.0004"],
                          "test": []})
        second = harvest(cfg, state, tmp_path / "out")
    assert [i.id for i in second] == ["0704.0006"]
    asked = [(r.path, r.query.get("prefix")) for r in fake_server.requests[sent:]]
    assert asked == [(API, ["arxiv/arxiv/pdf/0704/0704.0006v"]),
                     ("/arxiv-dataset/arxiv/arxiv/pdf/0704/0704.0006v1.pdf", None)]


def test_an_arxiv_snapshot_refresh_asks_the_bucket_only_for_papers_updated_since_the_mark(
        fake_server, tmp_path):
    """`select: snapshot` through the CLI: v1 takes the snapshot's math./cs. papers updated
    since 2020-01-01 and not in Cohan's files (the recorded lines, ids and dates changed;
    their abstracts those of corpus papers). The snapshot then gains a paper of v1 updated
    again, two new papers updated since the mark less the overlap (2021-06-01 - 1 day), one
    of physics, and an unseen paper updated 2021-02-01, before it: the refresh asks the
    bucket for the two new papers only and adds them; a third run asks nothing."""
    import email.utils

    from .helpers.arxiv import (
        API,
        FAST,
        Bucket,
        corpus_pdf,
        manifest_entry,
        prefixes_asked,
        snapshot_paper,
        write_cohan,
        write_snapshot,
    )

    def paper(recorded: str, new_id: str, update: str, corpus_id: str) -> dict:
        """A recorded line as a paper first submitted on its `update_date`."""
        entry = manifest_entry(corpus_id)
        created = email.utils.format_datetime(dt.datetime.fromisoformat(update + "T12:00:00+00:00"),
                                              usegmt=True)
        return snapshot_paper(recorded, new_id, update, abstract=entry["abstracts"]["en"],
                              title=entry["title"],
                              versions=[{"version": "v1", "created": created}])

    def prefix(arxiv_id: str) -> str:
        return f"arxiv/arxiv/pdf/{arxiv_id[:4]}/{arxiv_id}v"

    v1 = [paper("0704.0002", "2101.00002", "2021-03-01", "en_arxiv_beyond_summ"),  # math.CO cs.CG
          paper("0704.0001", "2104.00001", "2021-04-01", "en_hal_reaim"),  # hep-ph
          paper("0704.0004", "2104.00004", "2021-05-10", "en_ieee_reqprio"),  # math.CO
          paper("0704.0005", "1912.00005", "2019-12-31", "en_hal_reaim"),  # before from_date
          paper("0704.0002", "2102.00009", "2021-02-02", "en_hal_reaim"),  # in Cohan's files
          paper("0704.0005", "math/0612345", "2021-06-01", "en_acl_s2orc")]  # math.CA math.FA
    metadata = write_snapshot(tmp_path / "arxiv-metadata-oai-snapshot.json", v1)
    ids = write_cohan(tmp_path / "ids", {"train": ["2102.00009"], "val": [], "test": []})
    pdfs = {"2101.00002": "en_arxiv_beyond_summ", "2104.00004": "en_ieee_reqprio",
            "2107.00010": "en_bmc_trauma", "2106.00012": "en_hal_cover_febs"}
    objects = {prefix(i) + "1.pdf": corpus_pdf(pdfs.get(i, "en_hal_reaim")) for i in (
        *pdfs, "2104.00001", "1912.00005", "2102.00009", "2103.00011", "2108.00013")}
    Bucket(fake_server, {**objects,
                         "arxiv/math/pdf/0612/0612345v1.pdf": corpus_pdf("en_acl_s2orc")})
    cfg = tmp_path / "arxiv.yaml"
    cfg.write_text(yaml.safe_dump({
        "select": "snapshot", "categories": ["cs.", "math."], "from_date": "2020-01-01",
        "split_mode": "chronological", "ids_dir": str(ids), "metadata_path": str(metadata),
        "bucket_api_url": fake_server.url(API),
        "bucket_download_url": fake_server.url("/arxiv-dataset"), **FAST,
        "max_pages_percentile": None, "min_summary_percentile": None}))
    out = tmp_path / "out"
    args = ("build", "--source", "arxiv", "--config", str(cfg), "--out", str(out))
    first = loralay(*args)
    assert first.returncode == 0, first.stderr[-2000:]
    assert prefixes_asked(fake_server) == [prefix("2101.00002"), prefix("2104.00004"),
                                           "arxiv/math/pdf/0612/0612345v"]
    docs = json.loads((out / "report.json").read_text())["documents"]
    assert sorted(k for k, d in docs.items() if d["status"] == "kept") == [
        "2101.00002", "2104.00004", "math0612345"]

    updated = dict(v1[0], update_date="2021-07-20",
                   versions=[*v1[0]["versions"], {"version": "v2",
                                                  "created": "Tue, 20 Jul 2021 08:00:00 GMT"}])
    write_snapshot(metadata, [updated, *v1[1:],
                              paper("0704.0002", "2107.00010", "2021-07-15", "en_bmc_trauma"),
                              paper("0704.0004", "2103.00011", "2021-02-01", "en_hal_reaim"),
                              paper("0704.0004", "2106.00012", "2021-05-31", "en_hal_cover_febs"),
                              paper("0704.0001", "2108.00013", "2021-08-01", "en_hal_reaim")])
    sent = len(fake_server.requests)
    second = loralay(*args, "--refresh")
    assert second.returncode == 0, second.stderr[-2000:]
    asked = [r.path for r in fake_server.requests[sent:]]
    assert prefixes_asked(fake_server, sent) == [prefix("2107.00010"), prefix("2106.00012")]
    assert [p for p in asked if p != API] == [f"/arxiv-dataset/{prefix(i)}1.pdf"
                                              for i in ("2107.00010", "2106.00012")]
    diff = json.loads((out / "diff.json").read_text())
    assert (diff["version"], diff["missing_upstream"], diff["duplicates"]) == (2, [], [])
    assert sorted(sum(diff["added"].values(), [])) == ["2106.00012", "2107.00010"]

    sent = len(fake_server.requests)
    third = loralay(*args, "--refresh")
    assert third.returncode == 0, third.stderr[-2000:]
    assert fake_server.requests[sent:] == []
    assert "refresh: nothing new since v2; no file rewritten" in third.stderr

    # the older line is taken by a refresh that reaches back further (mark 2021-07-20)
    cfg.write_text(cfg.read_text() + "refresh_overlap_days: 400\n")
    sent = len(fake_server.requests)
    fourth = loralay(*args, "--refresh")
    assert fourth.returncode == 0, fourth.stderr[-2000:]
    assert prefixes_asked(fake_server, sent) == [prefix("2103.00011")]
    diff = json.loads((out / "diff.json").read_text())
    assert (diff["version"], sum(diff["added"].values(), [])) == (3, ["2103.00011"])


def test_a_dataset_built_before_bases_were_recorded_refreshes_the_same(
        refreshed, built_v1, manifests, tmp_path):
    """A folder of an earlier version of the tool has decisions but no base (and a finish
    state without a schema version, stamped when opened): its dataset is taken as version
    1 (its files read from data/) and refreshed as any other."""
    import sqlite3

    out = copy_run(built_v1, tmp_path / "ds")
    with sqlite3.connect(out / "state" / "finish.sqlite") as con:
        con.execute("DROP TABLE base_decisions")
        con.execute("DELETE FROM checkpoints WHERE name = 'dataset'")
        con.execute("PRAGMA user_version = 0")  # written before state files had versions
    build_local(manifests[1], out, "--refresh", check=True)
    want = refreshed[0]
    assert rows_as_written(out) == rows_as_written(want)
    assert (out / "README.md").read_text() == (want / "README.md").read_text()
    assert (out / "diff.json").read_text() == (want / "diff.json").read_text()


def test_a_pubmed_harvest_asks_only_for_ids_not_yet_seen(fake_server, tmp_path):
    """What a refresh's fetch of PubMed sends: its id list grew by PMC42; the second
    harvest asks the OAI service, the cloud metadata and the bucket about PMC42 only."""
    from loralay_build.conf import load_settings

    from .helpers.arxiv import write_cohan
    from .helpers.pubmed import FAST, GETRECORD, SYNTHETIC_MULTI, Pmc, harvest, oai_envelope
    from .helpers.pubmed import corpus_pdf as pmc_pdf

    pmc = Pmc(fake_server)
    pmc.article("10858524", shared_path(*GETRECORD).read_bytes(), pmc_pdf("en_bmc_trauma"),
                "1")
    pmc.article("42", oai_envelope(SYNTHETIC_MULTI.encode(), "42"),
                pmc_pdf("en_ieee_reqprio"), "3")
    ids = write_cohan(tmp_path / "ids", {"train": ["PMC10858524"], "val": [], "test": []})
    path = tmp_path / "pubmed-test.yaml"
    path.write_text(yaml.safe_dump({
        "ids_dir": str(ids), "oai_url": fake_server.url("/oai"),
        "pdf_metadata_url": fake_server.url("/cloud/metadata/{pmcid_ver}.json"),
        "s3_https_url": fake_server.url("/s3/{bucket}"), "email": "team@example.org",
        **FAST}), encoding="utf-8")
    cfg, state, out = load_settings("pubmed", path), tmp_path / "state.sqlite", tmp_path / "o"
    assert [i.id for i in harvest(cfg, state, out)] == ["PMC10858524"]
    sent = len(fake_server.requests)
    write_cohan(ids, {"train": ["PMC10858524"], "val": ["PMC42"], "test": []})
    assert [i.id for i in harvest(cfg, state, out)] == ["PMC42"]
    asked = fake_server.requests[sent:]
    assert [r.path for r in asked] == ["/oai", "/cloud/metadata/PMC42.3.json",
                                       "/s3/pmc-oa-opendata/PMC42.3/PMC42.3.pdf"]
    assert asked[0].query["identifier"] == ["oai:pubmedcentral.nih.gov:42"]


def test_publishing_a_refresh_uploads_only_its_new_shards(built_v1, manifests, tmp_path):
    """v1 published, refreshed, published as v2: the v2 commit adds the three new shards
    and rewrites the card, the reports and diff.json; no v1 shard's bytes are sent again."""
    import hashlib

    from .fakehub import FakeHub
    from .helpers.publish import hub_env, publish

    ds = copy_run(built_v1, tmp_path / "ds")
    with FakeHub() as hub:
        env = hub_env(hub, tmp_path / "home")
        first = publish(ds, env, "--allow-restricted")
        assert first.returncode == 0, first.stderr[-2000:]
        v1_files = {p.name for p in (ds / "data").glob("*.parquet")}
        sent = len(hub.uploads)
        build_local(manifests[1], ds, "--refresh", check=True)
        second = publish(ds, env, "--allow-restricted")
        assert second.returncode == 0, second.stderr[-2000:]
        body = hub.commit_bodies[-1]
        assert body[0]["value"]["summary"] == f"Dataset {V2_LINE} since v1"
        changed = sorted((line["key"], line["value"]["path"]) for line in body[1:])
        # the v1 shards renumbered into each split's one total (issue 46, 12): a rename
        # on the Hub (their bytes are not sent again), beside the new shards
        v1_digests = {n.rsplit("-", 1)[1] for n in v1_files}
        named = sorted(f"data/{p.name}" for p in (ds / "data").glob("*.parquet")
                       if p.name not in v1_files)
        new = [n for n in named if n.rsplit("-", 1)[1] not in v1_digests]
        assert len(new) == 3 and len(named) == 6
        assert changed == sorted([("file", "README.md"), ("file", "diff.json"),
                                  ("file", "report.json"), ("file", "report.md"),
                                  *(("lfsFile", n) for n in named),
                                  *(("deletedFile", f"data/{n}") for n in v1_files)])
        assert sorted(hub.uploads[sent:]) == sorted(
            hashlib.sha256((ds / n).read_bytes()).hexdigest() for n in new)
        assert set(hub.repos["tester/sample-lay"].tags) == {"v1", "v2"}


def test_a_dry_run_of_a_refresh_says_so_and_writes_nothing(built_v1, manifests):
    before = _files(built_v1)
    proc = build_local(manifests[1], built_v1, "--refresh", "--dry-run", check=True)
    assert (f"--refresh: would add what is new to the dataset in {built_v1} (a new version); "
            "its rows, splits and files would stay as they are") in proc.stdout
    assert _files(built_v1) == before


def test_a_refresh_that_adds_no_row_leaves_data_untouched_and_still_makes_a_version(
        refreshed, manifests, tmp_path):
    """v3's only new input is one more copy of a kept paper: dropped, naming it; a version
    is made (diff.json, the card's changelog), and not one data file is rewritten."""
    out = copy_run(refreshed[0], tmp_path / "ds")
    lines = _lines(manifests[1])
    extra = dict(next(d for d in lines if d["id"] == "en_bmc_trauma"), id="bmc_again")
    v3 = tmp_path / "v3.jsonl"
    v3.write_text("".join(json.dumps(d) + "\n" for d in [*lines, extra]))
    before = {k: v for k, v in _files(out).items() if k.startswith("data/")}
    build_local(v3, out, "--refresh", check=True)
    assert {k: v for k, v in _files(out).items() if k.startswith("data/")} == before
    assert json.loads((out / "diff.json").read_text()) == {
        "schema_version": 2, "version_before": 2, "version": 3, "added": {},
        "duplicates": [{"id": "bmc_again", "kept": "en_bmc_trauma", "kind": "same_pdf",
                        "similarity": 1.0, "via": None, "dataset": None}],
        "missing_upstream": [GONE], "dropped": {}, "pdf_changed": [],
        "split_moves_refused": []}
    front, body = _card(out)
    assert "This is version 3." in body and (
        "- " + V2_LINE + "\n- v3: 0 added, 1 duplicates dropped, 1 missing upstream\n") in body
    assert _card(out)[0]["configs"] == _card(refreshed[0])[0]["configs"]


def test_fresh_removes_a_refresh_s_diff_json(refreshed):
    from loralay_build.pdf.preflight import fresh_deletions
    from loralay_build.runfolder import RunFolder

    assert refreshed[0] / "diff.json" in fresh_deletions(RunFolder(refreshed[0]))


def test_a_sharded_refresh_gives_what_a_plain_one_gives(refreshed, manifests, tmp_path):
    """v1 and its refresh each processed in two shards, then finished: the same files."""
    out = tmp_path / "ds"
    for manifest, more in ((manifests[0], ()), (manifests[1], ("--refresh",))):
        for k in ("0", "1"):
            build_local(manifest, out, "--shard", k, "--num-shards", "2", *more, check=True)
        build_local(manifest, out, "--finish", *more, check=True)
    assert rows_as_written(out) == rows_as_written(refreshed[0])
    assert (out / "diff.json").read_text() == (refreshed[0] / "diff.json").read_text()


def test_a_refresh_says_what_it_does_not_take_changed_pdfs_and_split_moves(tmp_path):
    """`split_mode: given`, two sample papers (train, test). The refresh's manifest gives the
    first one a PDF with other bytes (qpdf's re-save) and moves the second to validation:
    both rows stay as they were, and diff.json, the card's changelog and the log say what
    was not taken and how to take it; a rebuild without --refresh then takes both."""
    import hashlib

    by_id = {d["id"]: d for d in _lines(SAMPLE)}
    first, second = "en_onecol_timing_note", "es_scielo_suelos"
    papers = [dict(by_id[first], file=str(SAMPLE.parent / by_id[first]["file"]),
                   split="train"),
              dict(by_id[second], file=str(SAMPLE.parent / by_id[second]["file"]),
                   split="test")]
    resaved = tmp_path / "resaved.pdf"
    subprocess.run(["qpdf", papers[0]["file"], str(resaved)], check=True)
    old_sha, new_sha = (hashlib.sha256(Path(f).read_bytes()).hexdigest()
                        for f in (papers[0]["file"], resaved))
    assert old_sha != new_sha
    v1, v2 = tmp_path / "v1.jsonl", tmp_path / "v2.jsonl"
    v1.write_text("".join(json.dumps(d) + "\n" for d in papers))
    v2.write_text(json.dumps(dict(papers[0], file=str(resaved))) + "\n"
                  + json.dumps(dict(papers[1], split="validation")) + "\n")
    given = ("--config", str(config(tmp_path, split_mode="given")))
    out = tmp_path / "ds"
    build_local(v1, out, *given, check=True)
    rows = rows_as_written(out)

    proc = build_local(v2, out, *given, "--refresh", check=True)
    diff = json.loads((out / "diff.json").read_text())
    assert diff["pdf_changed"] == [{"id": first, "old_pdf_sha256": old_sha,
                                    "new_pdf_sha256": new_sha}]
    assert diff["split_moves_refused"] == [{"id": second, "kept": "test",
                                            "asked": "validation"}]
    assert diff["version"] == 2 and diff["added"] == {}
    assert rows_as_written(out) == rows  # frozen: the old sha256, the old split
    line = "v2: 0 added, 1 changed PDFs not taken, 1 split moves refused"
    assert f"- {line}" in _card(out)[1]
    assert (f"refresh: 1 old documents' PDFs changed upstream (e.g. {first}: sha256 "
            f"{old_sha[:12]}, now {new_sha[:12]}); their rows are kept as they were "
            "(diff.json `pdf_changed`): rebuild without --refresh to take them") in proc.stderr
    assert (f"refresh: 1 old documents are given another split (e.g. {second}: kept in "
            "test, given validation); a refresh keeps their split (diff.json "
            "`split_moves_refused`): rebuild without --refresh") in proc.stderr

    again = build_local(v2, out, *given, "--refresh", check=True)
    assert "refresh: nothing new since v2; no file rewritten" in again.stderr

    build_local(v2, out, *given, check=True)  # the rebuild the lines advise
    rebuilt = {r["article_id"]: (name.split("-")[0], r["pdf_sha256"])
               for name, file_rows in rows_as_written(out) for r in file_rows}
    assert rebuilt == {first: ("train", new_sha), second: ("validation", rebuilt[second][1])}


def test_every_file_of_a_refreshed_split_is_one_shard_set_and_loads(refreshed):
    """After a refresh no `train-00000-of-00001` beside `train-00001-of-00002` (issue 46,
    12): each split's files are `{split}-{i:05d}-of-{n:05d}` for i < n, one n, in `data/`
    and in the card; `load_dataset` in a new process reads every row."""
    import re
    import subprocess
    import sys

    out, _, _ = refreshed
    front, _ = _card(out)
    listed = {f["split"]: f["path"] for f in front["configs"][0]["data_files"]}
    for split in ("train", "validation", "test"):
        names = sorted(p.name for p in (out / "data").glob(f"{split}-*.parquet"))
        found = [re.fullmatch(rf"{split}-(\d{{5}})-of-(\d{{5}})-[0-9a-f]{{12}}\.parquet", n)
                 for n in names]
        assert all(found), names
        totals = {int(m.group(2)) for m in found if m}
        assert len(totals) == 1, names
        n = totals.pop()
        assert [int(m.group(1)) for m in found if m] == list(range(n)), names
        assert listed[split] == [f"data/{name}" for name in names]
    code = ("import sys, json; from datasets import load_dataset; "
            "d = load_dataset(sys.argv[1]); print(json.dumps({s: d[s].num_rows for s in d}))")
    proc = subprocess.run([sys.executable, "-c", code, str(out)], capture_output=True,
                          text=True, timeout=600,
                          env={**os.environ, "HF_DATASETS_CACHE": str(out.parent / "cache")})
    assert proc.returncode == 0, proc.stderr[-2000:]
    expected = {s: len(V1_KEPT[s]) + len(DIFF["added"][s]) for s in V1_KEPT}
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == expected
