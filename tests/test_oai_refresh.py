"""`loralay build --source oai --refresh` end to end, as a user runs it, against a
repository served on 127.0.0.1 that honours `from`/`until` as OAI-PMH says (a record is
listed when its datestamp's day is within them) and pages its lists behind resumption
tokens.

SYNTHETIC, built here from the real recorded RCAAP records (../shared/fixtures/oai): their
datestamps are rewritten to spread over days (some full UTC times, some days, as
repositories give them), three of them get a shared corpus PDF's true abstracts and a PDF
link on the fake server, one becomes a deleted record (a header with `status="deleted"`),
and two are added after the first build as the repository's new records.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from lxml import etree

from .conftest import REPO, fetched_ids, loralay, shared_path
from .fakeserver import Reply, Request
from .helpers.oai import (
    OAI,
    XML,
    World,
    dc_abstracts,
    dc_link,
    envelope,
    keep,
    move_links,
    records_of,
    write_config,
)

RCAAP = "oai_dc_rcaap_ListRecords_2015-12-26_page1_with_token.xml"
WINDOW_DAYS = 3650  # the refresh's windows: two, from its start to today


def header(record: etree._Element, name: str) -> etree._Element:
    return record.find(f"{{{OAI}}}header/{{{OAI}}}{name}")


def ident(record: etree._Element) -> str:
    return header(record, "identifier").text


def stamped(record: etree._Element, datestamp: str) -> etree._Element:
    header(record, "datestamp").text = datestamp
    return record


def deleted(record: etree._Element, datestamp: str) -> etree._Element:
    """The record as a repository that keeps deletions lists it once it is withdrawn."""
    gone = etree.Element(f"{{{OAI}}}record", nsmap={None: OAI})
    head = etree.SubElement(gone, f"{{{OAI}}}header", status="deleted")
    etree.SubElement(head, f"{{{OAI}}}identifier").text = ident(record)
    etree.SubElement(head, f"{{{OAI}}}datestamp").text = datestamp
    return gone


def no_records() -> bytes:
    root = etree.Element(f"{{{OAI}}}OAI-PMH", nsmap={None: OAI})
    etree.SubElement(root, f"{{{OAI}}}responseDate").text = "2026-11-27T00:00:00Z"
    etree.SubElement(root, f"{{{OAI}}}request", verb="ListRecords").text = "http://x/oai"
    etree.SubElement(root, f"{{{OAI}}}error", code="noRecordsMatch").text = "none"
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


@dataclass
class Repository:
    """ListRecords over `records` (in the repository's own order, not by date): `from` and
    `until` compared on the datestamp's day, `per_page` records a page, the token naming
    the query and the offset. A token in `hang` is answered 30 s late (a kill then)."""

    records: list[etree._Element]
    per_page: int = 2
    hang: set[str] = field(default_factory=set)
    requests: list[Request] = field(default_factory=list)

    def listing(self, req: Request) -> Reply:
        verb = req.query.get("verb", [None])[0]
        if verb in ("Identify", "ListMetadataFormats"):  # what `--dry-run` asks, once each
            name = f"oai_pmh_bielefeld-pub_{verb}_2020.xml"
            return Reply(200, shared_path("fixtures", "oai", name).read_bytes(), XML)
        self.requests.append(req)
        token = req.query.get("resumptionToken", [None])[0]
        if token is None:
            frm = req.query.get("from", [""])[0]
            until = req.query.get("until", ["9999-12-31"])[0]
            offset = 0
        else:
            frm, until, at = token.split("|")
            offset = int(at)
        matching = [r for r in self.records
                    if frm <= header(r, "datestamp").text[:10] <= until]
        if not matching:
            return Reply(200, no_records(), XML)
        page = matching[offset:offset + self.per_page]
        more = offset + self.per_page < len(matching)
        reply = Reply(200, envelope(page, f"{frm}|{until}|{offset + self.per_page}"
                                    if more else None), XML)
        if token in self.hang:
            self.hang.discard(token)
            reply.delay = 30
        return reply

    def asked(self, since: int = 0) -> list[tuple[str | None, str | None, str | None]]:
        """(from, until, token) of each ListRecords request since the `since`-th."""
        return [(r.query.get("from", [None])[0], r.query.get("until", [None])[0],
                 r.query.get("resumptionToken", [None])[0]) for r in self.requests[since:]]


def repository(base: str) -> tuple[World, list[etree._Element]]:
    """Eight recorded RCAAP records: 0 and 3 kept papers, 6 a third one (new later)."""
    recs = [copy.deepcopy(r) for r in records_of(RCAAP)[:8]]
    for r in recs:
        move_links(r, base)
    world = World([], split=0)
    for i, corpus_id in {0: "pt_scielo_hoehnea_senna", 3: "pt_scielo_tinf_brasil_china",
                         6: "pt_scielo_rsp_hindex"}.items():
        keep(world, base, recs[i], corpus_id, dc_abstracts, dc_link)
    for r, stamp in zip(recs[:6], ["2015-12-20T09:00:00Z", "2015-12-21", "2015-12-22T23:59:59Z",
                                   "2015-12-23", "2015-12-25T10:00:00Z",
                                   "2015-12-26T02:01:20Z"]):
        stamped(r, stamp)
    return world, recs


def serve(fake_server, world: World, repo: Repository) -> None:
    world.serve(fake_server)  # the PDFs, and 404 for the other records' links
    fake_server.add_handler("/oai", repo.listing)


def kept(out: Path) -> set[str]:
    docs = json.loads((out / "report.json").read_text())["documents"]
    return {i for i, o in docs.items() if o["status"] == "kept"}


def row_ids(out: Path) -> list[str]:
    import pyarrow.parquet as pq

    return sorted(i for f in (out / "data").glob("*.parquet")
                  for i in pq.read_table(f, columns=["article_id"]).column(0).to_pylist())


def data_files(out: Path) -> dict[str, tuple[int, int, bytes]]:
    return {p.name: (p.stat().st_ino, p.stat().st_mtime_ns, p.read_bytes())
            for p in (out / "data").iterdir()}


def pdf_requests(fake_server, since: int) -> list[str]:
    return [r.path for r in fake_server.requests[since:] if r.path.startswith("/files/")]


def test_an_oai_refresh_asks_from_the_mark_adds_the_new_and_withdraws_the_deleted(
        fake_server, tmp_path):
    """v1 harvests six records (two papers kept; the newest datestamp 2015-12-26T02:01:20Z).
    The repository then gains two records (one a paper) and deletes a kept one. The refresh
    asks `from=2015-12-25` (the mark's day less one) and nothing from the beginning,
    downloads only the new paper, adds it, lists the deleted one as missing upstream and
    keeps its row; a second refresh asks from the new mark and has nothing new."""
    base = fake_server.url("").rstrip("/")
    world, recs = repository(base)
    repo = Repository(recs[:6])
    serve(fake_server, world, repo)
    out = tmp_path / "oai"
    cfg = write_config(tmp_path, fake_server.url("/oai"), "oai_dc", ["pt"],
                       window_days=WINDOW_DAYS)
    args = ("build", "--source", "oai", "--config", str(cfg), "--out", str(out))
    first = loralay(*args)
    assert first.returncode == 0, first.stderr[-3000:]
    assert repo.asked() == [(None, None, None), (None, None, "|9999-12-31|2"),
                            (None, None, "|9999-12-31|4")]  # the whole repository
    assert kept(out) == {ident(recs[0]), ident(recs[3])}
    v1_rows = row_ids(out)

    # the repository since: a deletion (its datestamp the deletion's) and two new records
    repo.records[3] = deleted(recs[3], "2016-01-04T12:00:00Z")
    repo.records += [stamped(recs[6], "2016-01-05T08:00:00Z"), stamped(recs[7], "2016-01-06")]
    sent, sent_all = len(repo.requests), len(fake_server.requests)
    second = loralay(*args, "--refresh")
    assert second.returncode == 0, second.stderr[-3000:]
    asked = repo.asked(sent)
    first_until = (dt.date(2015, 12, 25) + dt.timedelta(days=WINDOW_DAYS - 1)).isoformat()
    assert asked[:3] == [("2015-12-25", first_until, None),  # the mark's day less one
                         (None, None, f"2015-12-25|{first_until}|2"),
                         (None, None, f"2015-12-25|{first_until}|4")]
    next_day = (dt.date.fromisoformat(first_until) + dt.timedelta(days=1)).isoformat()
    assert [a[:2] for a in asked[3:]] == [(next_day, dt.date.today().isoformat())]
    assert all(a[0] is not None or a[2] is not None for a in asked)  # none from the start
    assert pdf_requests(fake_server, sent_all) == ["/files/pt_scielo_rsp_hindex.pdf"]
    diff = json.loads((out / "diff.json").read_text())
    assert diff["version"] == 2
    assert sum(diff["added"].values(), []) == [ident(recs[6])]
    assert diff["missing_upstream"] == [ident(recs[3])]
    assert row_ids(out) == sorted(v1_rows + [ident(recs[6])])  # the deleted one's row stays
    assert "was deleted upstream; withdrawn" in second.stderr
    with sqlite3.connect(out / "state" / "fetch.sqlite") as con:
        mark = json.loads(con.execute("SELECT value FROM checkpoints WHERE "
                                      "name='oai.high_water'").fetchone()[0])
    assert mark == "2016-01-06"  # a day beside times: the newest all the same

    files = data_files(out)
    sent = len(repo.requests)
    third = loralay(*args, "--refresh")
    assert third.returncode == 0, third.stderr[-3000:]
    assert repo.asked(sent)[0][0] == "2016-01-05"
    assert "refresh: nothing new since v2; no file rewritten" in third.stderr
    assert data_files(out) == files


def test_a_deleted_record_never_harvested_is_skipped(fake_server, tmp_path):
    """A deletion of a record this folder never had: nothing withdrawn, nothing recorded."""
    base = fake_server.url("").rstrip("/")
    world, recs = repository(base)
    repo = Repository(recs[:6] + [deleted(recs[7], "2015-12-27")])
    serve(fake_server, world, repo)
    out = tmp_path / "oai"
    cfg = write_config(tmp_path, fake_server.url("/oai"), "oai_dc", ["pt"])
    proc = loralay("build", "--source", "oai", "--config", str(cfg), "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = fetched_ids(out)
    assert got == {ident(r) for r in recs[:6]}
    assert "withdrawn" not in proc.stderr


def test_a_refresh_killed_midway_resumes_its_own_query(fake_server, tmp_path):
    """The refresh records a new record dated 2016-01-10, then is killed while the next
    page of its window is asked: the mark is not raised (its window is not all recorded;
    `ListedMark`). Run again, it asks the same query from the saved token, so the record
    of that page, dated 2016-01-03, below 2016-01-10 less the overlap, is not lost."""
    base = fake_server.url("").rstrip("/")
    world, recs = repository(base)
    repo = Repository(recs[:6], per_page=1)
    serve(fake_server, world, repo)
    out = tmp_path / "oai"
    cfg = write_config(tmp_path, fake_server.url("/oai"), "oai_dc", ["pt"],
                       window_days=WINDOW_DAYS, timeout_s=60)
    args = ("build", "--source", "oai", "--config", str(cfg), "--out", str(out))
    first = loralay(*args)
    assert first.returncode == 0, first.stderr[-3000:]

    newest, paper = stamped(recs[7], "2016-01-10T08:00:00Z"), stamped(recs[6], "2016-01-03")
    repo.records += [newest, paper]  # asked from 2015-12-25: records 4, 5, newest, paper
    first_until = (dt.date(2015, 12, 25) + dt.timedelta(days=WINDOW_DAYS - 1)).isoformat()
    paper_page = f"2015-12-25|{first_until}|3"
    repo.hang.add(paper_page)
    sent = len(repo.requests)
    proc = subprocess.Popen([sys.executable, "-m", "loralay_build.cli", *args, "--refresh"],
                            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 300
    while paper_page in repo.hang and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert repo.asked(sent)[0][0] == "2015-12-25"
    with sqlite3.connect(out / "state" / "fetch.sqlite") as con:
        mark = json.loads(con.execute("SELECT value FROM checkpoints WHERE "
                                      "name='oai.high_water'").fetchone()[0])
    assert mark == "2015-12-26T02:01:20Z"  # v1's: the refresh's window is not done

    sent = len(repo.requests)
    again = loralay(*args, "--refresh")
    assert again.returncode == 0, again.stderr[-3000:]
    assert repo.asked(sent)[0] == (None, None, paper_page)  # resumed at its page
    assert all(a[0] in (None, "2015-12-25") or a[0] > first_until for a in repo.asked(sent))
    diff = json.loads((out / "diff.json").read_text())
    assert sum(diff["added"].values(), []) == [ident(paper)]

    sent = len(repo.requests)
    plain = loralay(*args)  # a plain rerun asks as configured: the whole repository
    assert plain.returncode == 0, plain.stderr[-3000:]
    assert repo.asked(sent)[0] == (None, None, None)


def test_the_refresh_windows_start_at_the_mark_less_the_overlap_and_stay_within_until(
        tmp_path):
    """The windows a harvest will ask, with `from` and `until` configured: a plain run's
    from `from`; a refresh's from the mark's day less one, cut in `window_days` to `until`;
    a mark past `until` (a wider earlier query) asks `until`'s day only."""
    from loralay_build.conf import load_settings
    from loralay_build.http import PoliteClient
    from loralay_build.sources import FetchContext
    from loralay_build.sources.oai import OaiHarvest, Window
    from loralay_build.store.fetch import FetchState

    settings = load_settings("oai", overrides={
        "base_url": "http://127.0.0.1:9/oai", "contact": "tests@example.org",
        "from": "2015-01-01", "until": "2015-06-30", "window_days": 60})
    today = dt.date(2026, 1, 1)

    def harvest_windows(state: FetchState, refresh: bool) -> list[Window]:
        """The windows a harvest asks."""
        ctx = FetchContext("oai", settings, state, tmp_path, refresh=refresh)
        harvest = OaiHarvest(ctx, settings, PoliteClient(settings.http_fields()), today)
        return harvest.windows

    with FetchState(tmp_path / "fetch.sqlite") as state:
        state.set_checkpoint("oai.high_water", "2015-04-10T08:00:00Z")
        assert harvest_windows(state, refresh=False)[0] == Window("2015-01-01", "2015-03-01")
        assert harvest_windows(state, refresh=True) == [Window("2015-04-09", "2015-06-07"),
                                                        Window("2015-06-08", "2015-06-30")]
        state.set_checkpoint("oai.high_water", "2016-01-10")
        assert harvest_windows(state, refresh=True) == [Window("2015-06-30", "2015-06-30")]


def test_a_refresh_from_another_source_or_query_is_refused_naming_the_key(
        fake_server, tmp_path):
    """Built with `oai`, then refreshed with `--source local` (a manifest of one sample
    PDF), or with another `set` or `metadata_prefix`: each is refused in one line naming
    the key and both values, before any request and with nothing written; the same query
    with another date window is a refresh."""
    from .conftest import SAMPLE, build_local

    base = fake_server.url("").rstrip("/")
    world, recs = repository(base)
    repo = Repository(recs[:6])
    serve(fake_server, world, repo)
    out = tmp_path / "oai"
    url = fake_server.url("/oai")
    cfg = write_config(tmp_path, url, "oai_dc", ["pt"])
    first = loralay("build", "--source", "oai", "--config", str(cfg), "--out", str(out))
    assert first.returncode == 0, first.stderr[-3000:]
    files, sent = data_files(out), len(fake_server.requests)
    report = (out / "report.json").read_bytes()

    line = json.loads(SAMPLE.read_text().splitlines()[0])
    manifest = tmp_path / "one.jsonl"
    manifest.write_text(json.dumps(dict(line, file=str(SAMPLE.parent / line["file"]))) + "\n")
    local = build_local(manifest, out, "--refresh")
    assert local.returncode == 2, local.stderr[-2000:]
    assert local.stderr.strip().splitlines()[-1] == (
        f'loralay: --refresh: `source` is "local", the dataset in {out} was built with '
        '"oai"; a refresh adds papers from the same source and query: refresh with '
        '`source` "oai", or build the other one into a new --out')
    for key, value, was in (("set", "driver", "null"),
                            ("metadata_prefix", "oai_openaire", '"oai_dc"')):
        (tmp_path / key).mkdir()
        other = write_config(tmp_path / key, url, "oai_dc", ["pt"], **{key: value})
        proc = loralay("build", "--source", "oai", "--config", str(other), "--out", str(out),
                       "--refresh")
        assert proc.returncode == 2, proc.stderr[-2000:]
        assert proc.stderr.strip().splitlines()[-1] == (
            f'loralay: --refresh: `{key}` is "{value}", the dataset in {out} was built with '
            f"{was}; a refresh adds papers from the same source and query: refresh with "
            f"`{key}` {was}, or build the other one into a new --out")
    assert len(fake_server.requests) == sent  # refused before any request
    assert data_files(out) == files and (out / "report.json").read_bytes() == report

    later = tmp_path / "later"
    later.mkdir()
    window = write_config(later, url, "oai_dc", ["pt"], from_date="2015-12-24")
    proc = loralay("build", "--source", "oai", "--config", str(window), "--out", str(out),
                   "--refresh", "--dry-run")
    assert proc.returncode == 0, proc.stderr[-2000:]
