"""KoreaScience fetch through the Scrapy child against a local server.

The HTML is synthetic (tests/fixtures/koreascience/README.md); abstracts and PDFs are
the real ones of Korean corpus papers, read in place from the shared corpus.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loralay_build.sources import get_fetcher, record_fetch_item
from loralay_build.sources.crawl.spiders.koreascience import split_abstracts

from .conftest import shards_by_digest
from .fakeserver import Reply
from .helpers.koreascience import FIX, HTML, _ctx, _page, _paper


@pytest.mark.e2e
def test_search_pages_to_candidates(tmp_path, fake_server):
    tsp, tsp_pdf = _paper("ko_hufs_tsp")
    vote, _ = _paper("ko_kiit_voting")
    pat, _ = _paper("ko_ssrn_kopdp")

    def search(req):
        assert req.query["pubs"] == ["korean"] and req.query["pubYr"] == ["2015"]
        page = req.query["pageNo"][0]
        return Reply(200, (FIX / f"search_page{page}.html").read_bytes(), HTML)

    fake_server.add_handler("/search/advanced.page", search)
    fake_server.add("/article/JAKO201510000000001.page",
                    Reply(200, _page("article.html", "JAKO201510000000001", tsp,
                                     "/article/JAKO201510000000001.pdf"), HTML))
    fake_server.add("/article/JAKO201510000000002.page",
                    Reply(200, _page("article_no_pdf.html", "JAKO201510000000002", vote, ""),
                          HTML))
    fake_server.add("/article/JAKO201510000000003.page",
                    Reply(200, _page("article.html", "JAKO201510000000003", pat,
                                     "/article/JAKO201510000000003.pdf"), HTML))
    fake_server.add("/article/JAKO201510000000001.pdf",
                    Reply(200, tsp_pdf, {"Content-Type": "application/pdf"}))
    fake_server.add("/article/JAKO201510000000003.pdf",
                    Reply(200, "<html>error</html>", HTML))
    ctx = _ctx(tmp_path, fake_server)
    items = []
    for item in get_fetcher("koreascience")(ctx):
        record_fetch_item(ctx.state, item)
        items.append(item)
    by_id = {i.id: i for i in items}
    assert set(by_id) == {"JAKO201510000000001", "JAKO201510000000002",
                          "JAKO201510000000003"}
    c = by_id["JAKO201510000000001"]
    assert c.language == "ko" and list(c.abstracts) == ["ko", "en"]
    assert c.abstracts["ko"] == tsp["abstracts"]["ko"]
    assert c.abstracts["en"] == tsp["abstracts"]["en"]
    assert c.publication_date == "2015-06-30"
    assert Path(c.pdf_path).read_bytes() == tsp_pdf
    assert by_id["JAKO201510000000002"].cls == "unavailable"
    assert by_id["JAKO201510000000003"].cls == "unavailable"
    assert fake_server.hits("/article/JAKO201510000000001.page") == 1  # linked twice
    assert fake_server.hits("/search/advanced.page") == 2  # no page 3: pager absent

    # a rerun yields nothing again
    again = list(get_fetcher("koreascience")(ctx))
    assert again == []


@pytest.mark.e2e
def test_cli_build_end_to_end(tmp_path, fake_server):
    """`loralay build --source koreascience` on the three real Korean papers of the corpus.

    KoreaScience's pages state no licence (docs/licenses.md): every row is `unknown`."""
    import hashlib
    import re
    import subprocess
    import sys

    import pyarrow.parquet as pq
    import yaml

    names = ["ko_hufs_tsp", "ko_kiit_voting", "ko_ssrn_kopdp"]
    fake_server.add_handler("/search/advanced.page", lambda req: Reply(
        200, (FIX / f"search_page{req.query['pageNo'][0]}.html").read_bytes(), HTML))
    sha = {}
    for n, name in enumerate(names, start=1):
        rec, pdf = _paper(name)
        doc_id = f"JAKO20151000000000{n}"
        sha[doc_id] = hashlib.sha256(pdf).hexdigest()
        fake_server.add(f"/article/{doc_id}.page", Reply(
            200, _page("article.html", doc_id, rec, f"/article/{doc_id}.pdf"), HTML))
        fake_server.add(f"/article/{doc_id}.pdf", Reply(200, pdf, {"Content-Type":
                                                                    "application/pdf"}))
    conf = tmp_path / "local.yaml"
    conf.write_text(f"search_url: {fake_server.url('/search/advanced.page')}\n"
                    "years: [2015]\ndownload_delay_s: 0\ncontact: loralay-tests@example.org\n")
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "loralay_build.cli", "build", "--source",
                           "koreascience", "--out", str(out), "--config", str(conf)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    docs = json.loads((out / "report.json").read_text())["documents"]
    assert sorted(docs) == [f"JAKO20151000000000{n}" for n in (1, 2, 3)]
    kept = [i for i, o in docs.items() if o["status"] == "kept"]
    # every paper got through extraction and abstract removal; of only three (fewer than
    # percentile_min_candidates) the run's own percentiles (p95 pages, p5 summary length)
    # mean nothing and drop none
    assert sorted(kept) == sorted(docs)
    assert json.loads((out / "report.json").read_text())["thresholds"]["not_applied"] == \
        "3 candidates < 200 (percentile_min_candidates)"
    rows = [r for f in sorted(out.glob("data/*.parquet"))
            for r in pq.read_table(f).to_pylist()]
    assert sorted(r["article_id"] for r in rows) == sorted(kept)
    for r in rows:
        assert r["language"] == "ko" and r["source"] == "koreascience"
        assert [a["language"] for a in r["other_abstracts"]] == ["en"]
        doc_id = r["article_id"]
        assert (r["license"], r["license_url"], r["license_text"]) == ("unknown", None, None)
        assert r["record_url"] == fake_server.url(f"/article/{doc_id}.page")
        assert r["pdf_sha256"] == sha[doc_id], doc_id
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", r["retrieved_at"])
    assert json.loads((out / "report.json").read_text())["licenses"] == {"unknown": len(rows)}
    card = (out / "README.md").read_text(encoding="utf-8")
    front = yaml.safe_load(card.split("\n---\n", 1)[0].removeprefix("---\n"))
    assert (front["license"], front["license_name"]) == ("other", "unknown")
    assert re.search(rf"^\| `unknown` \| {len(rows)} \| .+ \| no \|$", card, re.M)


def test_paragraph_languages_on_real_abstracts():
    for name in ("ko_hufs_tsp", "ko_kiit_voting", "ko_ssrn_kopdp"):
        rec, _ = _paper(name)
        found = split_abstracts([rec["abstracts"]["ko"], rec["abstracts"]["en"]])
        assert found == {"ko": rec["abstracts"]["ko"], "en": rec["abstracts"]["en"]}


@pytest.mark.e2e
def test_scrapy_check_contracts_offline(tmp_path, fake_server):
    """`scrapy check` runs both spiders' contracts against the local server."""
    import os
    import subprocess
    import sys

    fake_server.add_handler("/search/advanced.page", lambda req: Reply(
        200, (FIX / "search_page1.html").read_bytes(), HTML))
    fake_server.add("/api/v1/article/identifiers/", Reply(200, json.dumps(
        {"objects": [{"code": "S0034-89102010000400007", "collection": "scl"}]})))
    env = dict(os.environ, LORALAY_CHECK_BASE=fake_server.url("/"),
               SCRAPY_SETTINGS_MODULE="tests.crawlcheck.settings",
               PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    out = subprocess.run([sys.executable, "-m", "scrapy", "check"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "Ran 2 contracts" in out.stderr and "OK" in out.stderr


@pytest.mark.e2e
def test_pdf_403_records_forbidden_without_more_pdf_requests(tmp_path, fake_server):
    """The PDF host is the site itself: after a 403 on one PDF, the article pages are
    still crawled, their PDFs are `forbidden` without a request."""
    from loralay_build.http import forbidden_host

    tsp, _ = _paper("ko_hufs_tsp")
    pat, _ = _paper("ko_ssrn_kopdp")
    fake_server.add_handler("/search/advanced.page", lambda req: Reply(
        200, (FIX / f"search_page{req.query['pageNo'][0]}.html").read_bytes(), HTML))
    for n, rec in (("1", tsp), ("2", pat), ("3", pat)):
        doc_id = f"JAKO20151000000000{n}"
        fake_server.add(f"/article/{doc_id}.page", Reply(
            200, _page("article.html", doc_id, rec, f"/article/{doc_id}.pdf"), HTML))
    fake_server.add_handler("/article/*", lambda req: Reply(403, "denied"))  # the PDFs
    ctx = _ctx(tmp_path, fake_server)
    items = []
    for item in get_fetcher("koreascience")(ctx):
        record_fetch_item(ctx.state, item)
        items.append(item)
    assert len(items) == 3 and {i.cls for i in items} == {"forbidden"}
    host = fake_server.url("").split("//")[1]
    assert {forbidden_host(i.message) for i in items} == {host}
    assert sum(r.path.endswith(".pdf") for r in fake_server.requests) == 1
    assert all(fake_server.hits(f"/article/JAKO20151000000000{n}.page") == 1 for n in "123")


def _results(ids: list[str], page: int, size: int) -> str:
    """A result page of the advanced search, SYNTHETIC like search_page1.html (the structure
    of docs/sources.md §6): the `article.srched-box` links of `ids[page]` (newest first),
    and the pager `"N / M pages"` on every page but the last."""
    pages = max(1, -(-len(ids) // size))
    boxes = "".join(f'<article class="srched-box"><h3 class="h4"><a href="/article/{i}.page">'
                    f"{i}</a></h3></article>\n" for i in ids[(page - 1) * size: page * size])
    pager = (f'<nav aria-label="Page Navigation"><ul><li class="list-inline-item float-right ">'
             f"<span>{page} / {pages} pages</span></li></ul></nav>" if page < pages else "")
    return (f'<!DOCTYPE html><html lang="ko"><head><meta charset="utf-8"></head><body>'
            f'<div class="row"><div id="search-result"><section>\n{boxes}</section>'
            f"{pager}</div></div></body></html>")


@pytest.mark.e2e
def test_a_refresh_pages_only_until_an_article_already_recorded(tmp_path, fake_server):
    """v1 harvests two articles of 2015 (one a page: two result pages); the search then
    lists two more before them (newest first). `--refresh` asks pages 1 to 3 (page 3 holds
    an article recorded by v1) and not page 4, requests the two new articles only and adds
    them; a second refresh asks page 1 only (it holds the newest, now recorded) and has
    nothing new."""
    from .conftest import SAMPLE, config, loralay

    sample = {json.loads(x)["id"]: json.loads(x) for x in SAMPLE.read_text().splitlines()}
    listed: list[str] = []  # newest first, as a date-sorted search would list them

    def publish(doc_id: str, name: str) -> None:
        if name in sample:
            rec, pdf = sample[name], (SAMPLE.parent / sample[name]["file"]).read_bytes()
        else:
            rec, pdf = _paper(name)
        fake_server.add(f"/article/{doc_id}.page", Reply(
            200, _page("article.html", doc_id, rec, f"/article/{doc_id}.pdf"), HTML))
        fake_server.add(f"/article/{doc_id}.pdf", Reply(200, pdf, {"Content-Type":
                                                                   "application/pdf"}))
        listed.insert(0, doc_id)

    fake_server.add_handler("/search/advanced.page", lambda req: Reply(200, _results(
        listed, int(req.query["pageNo"][0]), int(req.query["pageSize"][0])), HTML))
    publish("JAKO201510000000001", "ko_hufs_tsp")
    publish("JAKO201510000000002", "ko_ssrn_kopdp")
    cfg = config(tmp_path, search_url=fake_server.url("/search/advanced.page"), years=[2015],
                 page_size=1, download_delay_s=0, contact="loralay-tests@example.org",
                 max_pages_percentile=None, min_summary_percentile=None)
    out = tmp_path / "out"
    args = ("build", "--source", "koreascience", "--out", str(out), "--config", str(cfg))

    def asked() -> tuple[list[int], list[str]]:
        """The result pages asked for, and the articles whose page was."""
        pages = sorted(int(r.query["pageNo"][0]) for r in fake_server.requests
                       if r.path == "/search/advanced.page")
        articles = sorted(r.path[9:-5] for r in fake_server.requests
                          if r.path.endswith(".page") and r.path.startswith("/article/"))
        fake_server.requests.clear()
        return pages, articles

    loralay(*args, check=True)
    assert asked() == ([1, 2], ["JAKO201510000000001", "JAKO201510000000002"])
    v1 = shards_by_digest(out)
    assert v1

    publish("JAKO201510000000003", "ko_kiit_voting")
    publish("JAKO201510000000004", "ko_kci_wifi_parks")
    loralay(*args, "--refresh", check=True)
    assert asked() == ([1, 2, 3], ["JAKO201510000000003", "JAKO201510000000004"])
    diff = json.loads((out / "diff.json").read_text())
    assert (diff["version_before"], diff["version"]) == (1, 2)
    assert sorted(sum(diff["added"].values(), [])) == ["JAKO201510000000003",
                                                       "JAKO201510000000004"]
    assert diff["missing_upstream"] == []
    now = shards_by_digest(out)  # the old rows stay byte for byte
    assert {k: now[k] for k in v1} == v1

    third = loralay(*args, "--refresh", check=True)
    assert asked() == ([1], [])
    assert "refresh: nothing new since v2; no file rewritten" in third.stderr

    loralay(*args, check=True)  # a plain build still walks every page, as before
    assert asked()[0] == [1, 2, 3, 4]
