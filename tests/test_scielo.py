"""SciELO fetch through the Scrapy child against a local ArticleMeta + PDF host.

The article JSON is the real recorded ArticleMeta record (shared fixtures), with its
URLs pointed at the local server; PDFs are real SciELO PDFs from the shared corpus.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import signal
import time
from pathlib import Path

import pytest
import yaml

from loralay_build.sources import HarvestStopped, get_fetcher, record_fetch_item

from .conftest import shards_by_digest, shared_path
from .fakeserver import Reply
from .helpers.scielo import PID, _ctx, _pdf, _record, _run, _serve, _variant


@pytest.mark.e2e
def test_pt_and_es_candidates_with_abstracts_and_pdfs(tmp_path, fake_server):
    base = _record()
    recs = {
        PID: _variant(base, PID, "pt", fake_server.url("/pdf/a.pdf")),
        "S1": _variant(base, "S1", "en", fake_server.url("/pdf/en.pdf")),  # not Portuguese
        "S2": _variant(base, "S2", "pt", None),  # no Portuguese PDF
        "S3": _variant(base, "S3", "es", fake_server.url("/pdf/es.pdf")),
    }
    _serve(fake_server, recs)
    fake_server.add("/pdf/a.pdf", Reply(200, _pdf("pt_scielo_rsp_hindex"),
                                        {"Content-Type": "application/pdf"}))
    fake_server.add("/pdf/es.pdf", Reply(200, _pdf("es_scielo_malaga"),
                                         {"Content-Type": "application/pdf"}))
    items = _run(_ctx(tmp_path / "pt", fake_server))
    by_id = {i.id: i for i in items}
    assert set(by_id) == {f"scl-{PID}", "scl-S2"}
    c = by_id[f"scl-{PID}"]
    assert list(c.abstracts) == ["pt", "en", "es"]
    assert c.abstracts["pt"].startswith("OBJETIVO: Descrever o perfil epidemiológico")
    assert c.publication_date == "2010-08" and c.language == "pt"
    assert Path(c.pdf_path).read_bytes() == _pdf("pt_scielo_rsp_hindex")
    assert by_id["scl-S2"].cls == "unavailable"
    assert fake_server.hits("/pdf/en.pdf") == 0

    es = _run(_ctx(tmp_path / "es", fake_server, source="scielo-es"))
    assert [i.id for i in es] == ["scl-S3"]
    assert list(es[0].abstracts)[0] == "es"
    assert Path(es[0].pdf_path).read_bytes()[:5] == b"%PDF-"


@pytest.mark.e2e
def test_a_licence_outside_the_list_is_excluded_before_its_pdf(tmp_path, fake_server):
    """`licenses: [cc-by-4.0]`: the article under `by-nc/3.0` is `license_excluded` and its
    PDF (an HTML page: it would be `unavailable`) is never requested; the `by/4.0` one is
    downloaded. A rerun whose list allows both fetches the excluded one then."""
    base = _record()
    recs = {"S1": _variant(base, "S1", "pt", fake_server.url("/pdf/s1.pdf")),
            "S2": _variant(base, "S2", "pt", fake_server.url("/pdf/s2.pdf"))}
    recs["S1"]["license"], recs["S2"]["license"] = "by/4.0", "by-nc/3.0"
    _serve(fake_server, recs)
    fake_server.add("/pdf/s1.pdf", Reply(200, _pdf("pt_scielo_rsp_hindex"),
                                         {"Content-Type": "application/pdf"}))
    fake_server.add("/pdf/s2.pdf", Reply(200, "<html>login</html>",
                                         {"Content-Type": "application/pdf"}))
    ctx = _ctx(tmp_path, fake_server, licenses=["cc-by-4.0"])
    by_id = {i.id: i for i in _run(ctx)}
    assert by_id["scl-S1"].pdf_path
    assert (by_id["scl-S2"].cls, by_id["scl-S2"].message) == (
        "license_excluded", "licence cc-by-nc-3.0 is not in licenses: cc-by-4.0")
    assert fake_server.hits("/pdf/s2.pdf") == 0
    ctx.state.close()
    wider = _ctx(tmp_path, fake_server, licenses=["cc-by-4.0", "cc-by-nc-3.0"])
    again = {i.id: i for i in _run(wider)}
    assert again["scl-S2"].cls == "unavailable" and fake_server.hits("/pdf/s2.pdf") == 1
    assert "scl-S1" not in again


@pytest.mark.e2e
def test_faults_retry_or_class(tmp_path, fake_server):
    base = _record()
    names = ["P429", "P500", "PHTML", "PTRUNC", "P404"]
    recs = {p: _variant(base, p, "pt", fake_server.url(f"/pdf/{p}.pdf")) for p in names}
    _serve(fake_server, recs)
    body = _pdf("pt_scielo_tinf_brasil_china")
    ok = Reply(200, body, {"Content-Type": "application/pdf"})
    fake_server.add("/pdf/P429.pdf", Reply(429, "slow down", {"Retry-After": "1"}), ok)
    fake_server.add("/pdf/P500.pdf", Reply(500, "oops"), ok)
    fake_server.add("/pdf/PHTML.pdf", Reply(200, "<html>login</html>",
                                            {"Content-Type": "application/pdf"}))
    fake_server.add("/pdf/PTRUNC.pdf", Reply(200, body, truncate_to=1000))
    fake_server.add("/pdf/P404.pdf", Reply(404, "gone"))
    t0 = time.monotonic()
    by_id = {i.id: i for i in _run(_ctx(tmp_path, fake_server))}
    assert hasattr(by_id["scl-P429"], "pdf_path") and by_id["scl-P429"].pdf_path
    assert by_id["scl-P500"].pdf_path
    assert fake_server.hits("/pdf/P429.pdf") == 2 and fake_server.hits("/pdf/P500.pdf") == 2
    for bad in ("scl-PHTML", "scl-PTRUNC", "scl-P404"):
        assert by_id[bad].cls == "unavailable", by_id[bad]
    assert "not a PDF" in by_id["scl-PHTML"].message
    assert fake_server.hits("/pdf/PTRUNC.pdf") == 3  # first try + max_retries
    assert time.monotonic() - t0 > 1.0  # the Retry-After pause was taken


@pytest.mark.e2e
def test_unreachable_pdf_is_retried_by_the_next_run(tmp_path, fake_server):
    base = _record()
    pids = ["U1", "U2"]
    _serve(fake_server, {p: _variant(base, p, "pt", fake_server.url(f"/pdf/{p}.pdf"))
                         for p in pids})
    body = _pdf("pt_scielo_rsp_hindex")
    fake_server.add("/pdf/U1.pdf", Reply(200, body))
    fake_server.add_handler("/pdf/U2.pdf", lambda req: Reply(503, "busy"))
    first = {i.id: i for i in _run(_ctx(tmp_path, fake_server))}
    assert first["scl-U2"].cls == "unreachable" and "HTTP 503" in first["scl-U2"].message
    assert fake_server.hits("/pdf/U2.pdf") == 3  # first try + max_retries
    fake_server.add("/pdf/U2.pdf", Reply(200, body))
    second = _run(_ctx(tmp_path, fake_server))
    assert [i.id for i in second] == ["scl-U2"] and second[0].pdf_path
    assert fake_server.hits("/pdf/U1.pdf") == 1


@pytest.mark.e2e
def test_pdf_403_records_that_host_forbidden_and_the_crawl_goes_on(tmp_path, fake_server):
    """Two PDF hosts; the second refuses: its papers are `forbidden`, the rest is crawled."""
    from urllib.parse import urlsplit

    from loralay_build.http import forbidden_host

    from .fakeserver import FakeServer

    base = _record()
    body = _pdf("pt_scielo_rsp_hindex")
    with FakeServer() as refusing:
        recs = {f"F{i}": _variant(base, f"F{i}", "pt", refusing.url(f"/pdf/F{i}.pdf"))
                for i in range(4)}
        recs.update({f"O{i}": _variant(base, f"O{i}", "pt", fake_server.url(f"/pdf/O{i}.pdf"))
                     for i in range(2)})
        _serve(fake_server, dict(sorted(recs.items())))
        refusing.add_handler("/pdf/*", lambda req: Reply(403, "forbidden"))
        fake_server.add_handler("/pdf/*", lambda req: Reply(200, body))
        by_id = {i.id: i for i in _run(_ctx(tmp_path, fake_server))}
        assert len(by_id) == 6
        host = urlsplit(refusing.url("")).netloc
        for i in range(4):
            item = by_id[f"scl-F{i}"]
            assert item.cls == "forbidden" and forbidden_host(item.message) == host
        assert all(by_id[f"scl-O{i}"].pdf_path for i in range(2))  # the crawl went on
        assert sum(r.path.startswith("/pdf/") for r in refusing.requests) == 1

        refusing.add_handler("/pdf/*", lambda req: Reply(200, body))
        assert _run(_ctx(tmp_path, fake_server)) == []  # not retried unless asked
        ctx = _ctx(tmp_path, fake_server)
        ctx.retry = frozenset({"forbidden"})
        again = _run(ctx)
        assert sorted(i.id for i in again) == [f"scl-F{i}" for i in range(4)]
        assert all(i.pdf_path for i in again)


@pytest.mark.e2e
def test_robots_disallow_is_honoured(tmp_path, fake_server):
    base = _record()
    _serve(fake_server, {PID: _variant(base, PID, "pt", fake_server.url("/pdf/a.pdf"))})
    fake_server.add("/robots.txt", Reply(200, "User-agent: *\nDisallow: /pdf/\n",
                                         {"Content-Type": "text/plain"}))
    fake_server.add("/pdf/a.pdf", Reply(200, _pdf("pt_scielo_rsp_hindex")))
    items = _run(_ctx(tmp_path, fake_server))
    assert [(i.id, i.cls) for i in items] == [(f"scl-{PID}", "unavailable")]
    assert "robots" in items[0].message
    assert fake_server.hits("/pdf/a.pdf") == 0


@pytest.mark.e2e
@pytest.mark.stress
def test_sigkill_part_way_then_resume(tmp_path, fake_server):
    base = _record()
    pids = [f"S{i:02d}" for i in range(8)]
    recs = {p: _variant(base, p, "pt", fake_server.url(f"/pdf/{p}.pdf")) for p in pids}
    _serve(fake_server, recs)
    body = _pdf("pt_scielo_rsp_hindex")
    fake_server.add_handler("/pdf/*", lambda req: Reply(200, body, delay=0.3))
    ctx = _ctx(tmp_path, fake_server)
    gen = get_fetcher("scielo-pt")(ctx)
    first = [next(gen) for _ in range(3)]
    for item in first[:2]:  # the third is yielded but never recorded: a kill mid-record
        record_fetch_item(ctx.state, item)
    pid = int((tmp_path / "crawl" / "scielo-pt" / "child.pid").read_text())
    os.kill(pid, signal.SIGKILL)
    with pytest.raises(HarvestStopped, match="crawl ended with code -9"):
        while True:
            next(gen)
    gen.close()
    ctx.state.close()
    ctx2 = _ctx(tmp_path, fake_server)
    rest = _run(ctx2)
    ids = [i.id for i in first[:2]] + [i.id for i in rest]
    assert sorted(ids) == sorted(f"scl-{p}" for p in pids)  # all, none twice
    assert len(ids) == len(set(ids))


@pytest.mark.e2e
def test_limit_stops_cleanly_and_next_run_continues(tmp_path, fake_server):
    base = _record()
    pids = [f"L{i:02d}" for i in range(6)]
    _serve(fake_server, {p: _variant(base, p, "pt", fake_server.url(f"/pdf/{p}.pdf"))
                         for p in pids})
    body = _pdf("pt_scielo_rsp_hindex")
    fake_server.add_handler("/pdf/*", lambda req: Reply(200, body, delay=0.2))
    first = _run(_ctx(tmp_path, fake_server, limit=2))
    assert len(first) == 2
    work = tmp_path / "crawl" / "scielo-pt"
    assert (work / "clean-stop").read_text() == "shutdown"  # SIGINT: a JOBDIR to resume
    rest = _run(_ctx(tmp_path, fake_server))
    ids = [i.id for i in first + rest]
    assert sorted(ids) == sorted(f"scl-{p}" for p in pids) and len(ids) == len(set(ids))
    assert all(fake_server.hits(f"/pdf/{p}.pdf") == 1 for p in pids)


@pytest.mark.e2e
@pytest.mark.parametrize(("source", "prefix"), [("scielo-pt", "pt_scielo_"), ("scielo-es", "es_")])
def test_cli_build_end_to_end(tmp_path, fake_server, shared_corpus, source, prefix):
    """`loralay build --source scielo-pt|scielo-es` on real PDFs and their true abstracts.

    Licenses: S0 keeps the recording's own `license` (`by-nc`). S1 and S2 differ, in the
    shapes ArticleMeta gives (docs/licenses.md): S1's `license` is `by/4.0`; S2 has no
    `license`, and its article carries the `v540` licence text the recording has on its
    issue (copied to the article), whose Creative Commons link is then its licence."""
    import hashlib
    import re
    import subprocess
    import sys
    from collections import Counter

    import pyarrow.parquet as pq

    base = _record()
    lang = source[-2:]
    papers = [r for r in shared_corpus if r["id"].startswith(prefix)]
    recs = {}
    for i, paper in enumerate(papers):
        rec = _variant(base, f"S{i}", lang, fake_server.url(f"/pdf/{paper['id']}.pdf"))
        rec["article"]["v83"] = [{"l": k, "a": v} for k, v in paper["abstracts"].items()]
        recs[f"S{i}"] = rec
        fake_server.add(f"/pdf/{paper['id']}.pdf", Reply(200, _pdf(paper["id"])))
    assert recs["S0"]["license"] == "by-nc"  # as recorded
    recs["S1"]["license"] = "by/4.0"  # SYNTHETIC, see above
    del recs["S2"]["license"]  # SYNTHETIC, see above
    recs["S2"]["article"]["v540"] = copy.deepcopy(base["issue"]["issue"]["v540"])
    by_nc_3 = "http://creativecommons.org/licenses/by-nc/3.0/"  # the link in that v540 text
    assert all(f'href="{by_nc_3}"' in t["t"] for t in recs["S2"]["article"]["v540"])
    expected = {  # (license, license_url, license_text) of each record
        "scl-S0": ("cc-by-nc", None, None),
        "scl-S1": ("cc-by-4.0", None, None),
        "scl-S2": ("cc-by-nc-3.0", by_nc_3, None),
    }
    sha = {f"scl-S{i}": hashlib.sha256(_pdf(p["id"])).hexdigest() for i, p in enumerate(papers)}
    _serve(fake_server, recs, page_size=1000)
    conf = tmp_path / "local.yaml"
    # no percentile filters (p95 pages, p1 summary length): of only three papers they would
    # drop two, and every record's licence is to be seen in the dataset
    conf.write_text(f"articlemeta_url: {fake_server.url('/api/v1/')}\ncollections: [scl]\n"
                    "download_delay_s: 0\ncontact: loralay-tests@example.org\n"
                    "max_pages_percentile: null\nmin_summary_percentile: null\n")
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "loralay_build.cli", "build", "--source",
                           source, "--out", str(out), "--config", str(conf)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert len(list((out / "pdfs").glob("*.pdf"))) == len(papers) == 3
    report = json.loads((out / "report.json").read_text())
    docs = report["documents"]
    assert sorted(docs) == [f"scl-S{i}" for i in range(3)]
    kept = sorted(i for i, o in docs.items() if o["status"] == "kept")
    # every paper got through extraction and abstract removal
    assert kept == [f"scl-S{i}" for i in range(3)], docs
    rows = [r for f in sorted(out.glob("data/*.parquet")) for r in pq.read_table(f).to_pylist()]
    assert sorted(r["article_id"] for r in rows) == kept
    assert {(r["language"], r["source"]) for r in rows} == {(lang, source)}
    api = fake_server.url("/api/v1/")
    for r in rows:
        doc_id = r["article_id"]
        assert (r["license"], r["license_url"], r["license_text"]) == expected[doc_id], doc_id
        assert r["record_url"] == (f"{api}article/?code={doc_id[4:]}&collection=scl"
                                   "&format=json&body=false")
        assert r["pdf_sha256"] == sha[doc_id], doc_id
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", r["retrieved_at"])
    # three licences: counted in the report; on the card `other` and a table row each
    assert report["licenses"] == dict(Counter(r["license"] for r in rows)) \
        == {"cc-by-4.0": 1, "cc-by-nc": 1, "cc-by-nc-3.0": 1}
    card = (out / "README.md").read_text(encoding="utf-8")
    front = yaml.safe_load(card.split("\n---\n", 1)[0].removeprefix("---\n"))
    assert front["license"] == "other" and "license_name" not in front
    licensing = card.split("## Licensing", 1)[1]
    table = re.findall(r"^\| `([^`]+)` \| (\d+) \| .+ \| yes \|$", licensing, re.M)
    assert {lid: int(n) for lid, n in table} == report["licenses"]


@pytest.mark.e2e
def test_a_crawl_that_reaches_no_server_stops_in_one_line(tmp_path):
    """No network (or a wrong URL) must not pass for an empty harvest."""
    import socket
    import subprocess
    import sys

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again below: connections are refused
    conf = tmp_path / "local.yaml"
    conf.write_text(f"articlemeta_url: http://127.0.0.1:{port}/api/v1/\ncollections: [scl]\n"
                    "download_delay_s: 0\nmax_retries: 1\ntimeout_s: 5\n"
                    "contact: loralay-tests@example.org\n")
    out = subprocess.run([sys.executable, "-m", "loralay_build.cli", "build", "--source",
                          "scielo-pt", "--out", str(tmp_path / "out"), "--config", str(conf)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode != 0
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("loralay: fetch scielo-pt stopped early: scielo-pt crawl reached "
                           "no server ("), last
    assert "ConnectionRefusedError" in last
    assert last.endswith("; no dataset yet")


def _serve_dated(srv, records: dict[str, tuple[str, dict]], down: set[str] | None = None,
                 down_status: list[int] | None = None) -> None:
    """ArticleMeta's identifiers as documented (shared/fixtures/scielo's example): each
    object with its `processing_date`, `from`/`until` bounding it, `offset`/`limit` paging;
    `records` maps a PID to (processing date, record) and may grow between builds; the
    record of a PID in `down` answers `down_status`."""
    down = set() if down is None else down

    def identifiers(req):
        low, high = req.query.get("from", [""])[0], req.query.get("until", ["9999"])[0]
        objs = [{"code": p, "collection": "scl", "processing_date": day}
                for p, (day, _) in records.items() if low <= day <= high]
        off, limit = int(req.query["offset"][0]), int(req.query["limit"][0])
        return Reply(200, json.dumps({"meta": {}, "objects": objs[off: off + limit]}),
                     {"Content-Type": "application/json"})

    srv.add_handler("/api/v1/article/identifiers/", identifiers)
    status = [500] if down_status is None else down_status
    srv.add_handler("/api/v1/article/", lambda req: Reply(status[0], "down")
                    if req.query["code"][0] in down else Reply(
        200, json.dumps(records[req.query["code"][0]][1]), {"Content-Type": "application/json"}))


@pytest.mark.e2e
def test_a_refresh_asks_articlemeta_only_from_the_last_processing_date(tmp_path, fake_server):
    """v1 harvests two Portuguese papers processed on 2024-03-01 and 2024-03-05; ArticleMeta
    then holds two more, processed in June. `--refresh` asks the identifiers `from`
    2024-03-04 (the mark less `refresh_overlap_days` 1), requests the record of the two new
    PIDs only (the one of 2024-03-05 it lists again is skipped as recorded) and adds them;
    a second refresh asks `from` 2024-06-11 and has nothing new."""
    from .conftest import SAMPLE, config, loralay

    base = _record()
    sample = {json.loads(x)["id"]: json.loads(x) for x in SAMPLE.read_text().splitlines()}
    corpus = {json.loads(x)["id"]: json.loads(x) for x in shared_path(
        "corpus", "manifest.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()}
    papers = {"S0": ("2024-03-01", corpus["pt_scielo_rsp_hindex"]),
              "S1": ("2024-03-05", corpus["pt_scielo_tinf_brasil_china"]),
              "S2": ("2024-06-10", corpus["pt_scielo_hoehnea_senna"]),
              "S3": ("2024-06-12", sample["pt_scielo_espera"])}
    records: dict[str, tuple[str, dict]] = {}

    def publish(pid: str) -> None:
        day, paper = papers[pid]
        rec = _variant(base, pid, "pt", fake_server.url(f"/pdf/{pid}.pdf"))
        rec["article"]["v83"] = [{"l": k, "a": v} for k, v in paper["abstracts"].items()]
        records[pid] = (day, rec)
        pdf = (SAMPLE.parent if paper["id"] in sample else shared_path("corpus")) / paper["file"]
        fake_server.add(f"/pdf/{pid}.pdf", Reply(200, pdf.read_bytes()))

    publish("S0")
    publish("S1")
    _serve_dated(fake_server, records)
    cfg = config(tmp_path, articlemeta_url=fake_server.url("/api/v1/"), collections=["scl"],
                 download_delay_s=0, contact="loralay-tests@example.org",
                 max_pages_percentile=None, min_summary_percentile=None)
    out = tmp_path / "out"
    args = ("build", "--source", "scielo-pt", "--out", str(out), "--config", str(cfg))

    def asked() -> tuple[set[str | None], list[str]]:
        """The `from` of every identifiers request, and the PIDs whose record was asked."""
        froms = {(r.query.get("from") or [None])[0] for r in fake_server.requests
                 if r.path == "/api/v1/article/identifiers/"}
        pids = sorted(r.query["code"][0] for r in fake_server.requests
                      if r.path == "/api/v1/article/")
        fake_server.requests.clear()
        return froms, pids

    loralay(*args, check=True)
    assert asked() == ({None}, ["S0", "S1"])
    v1 = shards_by_digest(out)
    assert v1

    publish("S2")
    publish("S3")
    second = loralay(*args, "--refresh", check=True)
    assert asked() == ({"2024-03-04"}, ["S2", "S3"])
    assert "asking only for records since 2024-03-04" in second.stderr
    diff = json.loads((out / "diff.json").read_text())
    assert (diff["version_before"], diff["version"]) == (1, 2)
    assert sorted(sum(diff["added"].values(), [])) == ["scl-S2", "scl-S3"]
    assert diff["missing_upstream"] == []
    now = shards_by_digest(out)  # the old rows stay byte for byte
    assert {k: now[k] for k in v1} == v1

    third = loralay(*args, "--refresh", check=True)
    assert asked() == ({"2024-06-11"}, [])
    assert "refresh: nothing new since v2; no file rewritten" in third.stderr


@pytest.mark.e2e
def test_the_mark_is_kept_only_after_a_whole_crawl_that_lost_nothing(tmp_path, fake_server):
    """Items come out of date order, so the newest processing date listed is kept only
    from a whole crawl: not after `--limit`, nor from the run resuming its JOBDIR (it
    cannot tell what the first part lost), nor when a record's request was lost after its
    retries (D4, the oldest: a mark past it would hide it from every refresh). Then it is
    the newest date listed, records skipped as recorded included."""
    base = _record()
    records = {p: (day, _variant(base, p, "pt", fake_server.url(f"/pdf/{p}.pdf")))
               for p, day in (("D1", "2024-03-05"), ("D2", "2024-03-01"), ("D3", "2024-02-11"))}
    down: set[str] = set()
    status = [500]
    _serve_dated(fake_server, records, down, status)
    body = _pdf("pt_scielo_rsp_hindex")
    fake_server.add_handler("/pdf/*", lambda req: Reply(200, body, delay=0.3))

    def mark(**over) -> object:
        ctx = _ctx(tmp_path, fake_server, **over)
        _run(ctx)
        saved = ctx.state.get_checkpoint("scielo-pt.high_water", None)
        ctx.state.close()
        return saved

    assert mark(limit=1) is None
    assert (tmp_path / "crawl" / "scielo-pt" / "clean-stop").read_text() == "shutdown"
    assert mark() is None  # resumed the JOBDIR, and finished
    records["D4"] = ("2024-01-20", _variant(base, "D4", "pt", fake_server.url("/pdf/D4.pdf")))
    down.add("D4")
    fake_server.requests.clear()
    assert mark() is None  # a new discovery, which could not have D4's record (500s)
    assert {r.query["code"][0] for r in fake_server.requests
            if r.path == "/api/v1/article/"} == {"D4"}
    status[0] = 404
    assert mark() is None  # nor now (a 404, not retried)
    down.clear()
    assert mark() == "2024-03-05"
    # what a clean stop leaves (a JOBDIR and its mark), its queue and seen requests empty
    # here, so that the resumed crawl lists everything again, D5 included: no mark from it
    records["D5"] = ("2024-04-01", _variant(base, "D5", "pt", fake_server.url("/pdf/D5.pdf")))
    work = tmp_path / "crawl" / "scielo-pt"
    shutil.rmtree(work / "jobdir")
    (work / "jobdir").mkdir()
    (work / "clean-stop").write_text("shutdown")
    assert mark() == "2024-03-05"
    assert mark() == "2024-04-01"  # a whole crawl: D5 is listed (and skipped as recorded)
