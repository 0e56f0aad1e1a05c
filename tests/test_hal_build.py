"""`loralay build --source hal --config test.yaml --out DIR` end to end against a local server.

The search responses are SYNTHETIC records in the shape of the recordings (see
test_hal.py), carrying the true abstracts of real French PDFs from ../shared/corpus,
which the server returns as the downloads; two records are bad on purpose.

Licenses: neither recorded search response has `licence_s`, so the synthetic records
carry it in the shape HAL gives it (one licence URL per record, sources.md §4.3 and
docs/licenses.md): HAL's own copyright page on the first (fr_ahrf_censure's cover page
says "Tous droits réservés"), CC BY 4.0 on the next two, none on the last (like many
old deposits).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml

from .conftest import REPO, loralay
from .fakeserver import Reply
from .helpers.hal import (
    CC_BY_4,
    COPYRIGHT,
    DOCS,
    PDF_TYPE,
    PagedSearch,
    corpus_entry,
    corpus_pdf,
    records,
    serve,
    write_config,
)

pytestmark = pytest.mark.e2e
# what each kept row must say: (license, license_url, license_text, record_url)
EXPECTED_LICENCE = {
    "hal-09000000": ("all-rights-reserved", COPYRIGHT, None, "https://hal.science/hal-09000000v1"),
    "hal-09000001": ("cc-by-4.0", CC_BY_4, None, "https://hal.science/hal-09000001v1"),
    "hal-09000002": ("cc-by-4.0", CC_BY_4, None, "https://hal.science/hal-09000002v1"),
}
UTC_ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def card_front_matter(out: Path) -> dict:
    text = (out / "README.md").read_text(encoding="utf-8")
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("\n---\n", 1)[0].removeprefix("---\n"))


def card_licence_rows(out: Path) -> dict[str, tuple[int, str, str]]:
    """The card's `## Licensing` table: licence id -> (rows, what it is, redistribute)."""
    section = (out / "README.md").read_text(encoding="utf-8").split("## Licensing", 1)[1]
    found = re.findall(r"^\| `([^`]+)` \| ([\d,]+) \| (.+) \| (yes|no) \|$", section, re.M)
    return {lid: (int(n.replace(",", "")), what, free) for lid, n, what, free in found}


def assert_provenance(rows: dict[str, dict]) -> None:
    """Every kept row: its licence as its record says, its record, the served PDF's sha256."""
    for doc_id, row in rows.items():
        license_id, url, text, record = EXPECTED_LICENCE[doc_id]
        corpus_id = DOCS[int(doc_id[-4:])]
        assert (row["license"], row["license_url"], row["license_text"], row["record_url"]) \
            == (license_id, url, text, record), doc_id
        assert row["pdf_sha256"] == hashlib.sha256(corpus_pdf(corpus_id)).hexdigest(), doc_id
        assert UTC_ISO.match(row["retrieved_at"]), (doc_id, row["retrieved_at"])


def build_hal(fake_server, tmp_path: Path, **over) -> Path:
    fake_server.add_handler("/search/", PagedSearch(records(fake_server.url("")), rows=2))
    serve(fake_server)
    out = tmp_path / "hal"
    cfg = write_config(tmp_path, fake_server.url("/search/"), **over)
    proc = loralay("build", "--source", "hal", "--config", str(cfg), "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-2000:]
    return out


def test_hal_build_produces_a_dataset(fake_server, tmp_path):
    from datasets import load_dataset

    out = build_hal(fake_server, tmp_path)
    report = json.loads((out / "report.json").read_text())
    docs = report["documents"]
    assert docs["hal-09000003"]["class"] == "wrong_language"
    assert docs["hal-09000004"] == {**docs["hal-09000004"], "status": "dropped",
                                    "class": "unavailable", "stage": "fetch"}
    kept = sorted(i for i, o in docs.items() if o["status"] == "kept")
    assert kept == ["hal-09000000", "hal-09000001", "hal-09000002"]
    ds = load_dataset(str(out), cache_dir=str(tmp_path / "cache"))
    rows = {r["article_id"]: r for s in ds for r in ds[s]}
    censure = rows["hal-09000000"]
    assert censure["source"] == "hal" and censure["language"] == "fr"
    assert censure["abstract"] == corpus_entry("fr_ahrf_censure")["abstracts"]["fr"]
    assert [a["language"] for a in censure["other_abstracts"]] == ["en"]
    assert 1 not in censure["article_pages"]  # HAL's cover page is gone
    assert censure["article_pdf_url"].endswith("/hal-09000000/document")
    assert_provenance(rows)
    # two licences among the kept rows: counted in the report, `other` and a table on the card
    assert report["licenses"] == {"cc-by-4.0": 2, "all-rights-reserved": 1}
    assert report["licenses"] == dict(Counter(r["license"] for r in rows.values()))
    front = card_front_matter(out)
    assert front["license"] == "other" and "license_name" not in front
    assert card_licence_rows(out) == {
        "cc-by-4.0": (2, "Creative Commons Attribution 4.0 International (CC BY 4.0)", "yes"),
        "all-rights-reserved": (1, "all rights reserved (no licence granted)", "no")}
    assert {lid: n for lid, (n, _, _) in card_licence_rows(out).items()} == report["licenses"]


def test_licence_allow_list_keeps_only_those_licences(fake_server, tmp_path):
    """`licenses: [cc-by-4.0]`: the all-rights-reserved paper is dropped at the licence stage
    (decided at the fetch, before its PDF); the card's licence is that one id, and the
    report counts it."""
    from datasets import load_dataset

    out = build_hal(fake_server, tmp_path, licenses=["cc-by-4.0"])
    report = json.loads((out / "report.json").read_text())
    docs = report["documents"]
    kept = sorted(i for i, o in docs.items() if o["status"] == "kept")
    assert kept == sorted(i for i, v in EXPECTED_LICENCE.items() if v[0] == "cc-by-4.0") \
        == ["hal-09000001", "hal-09000002"]
    # the only other processed document: its licence is outside the list
    assert docs["hal-09000000"] == {**docs["hal-09000000"], "status": "dropped",
                                    "class": "license_excluded", "stage": "licenses"}
    assert "all-rights-reserved" in docs["hal-09000000"]["message"]
    # the two records without a licence (`unknown`) are outside the list too: excluded
    # before their PDF was fetched, whatever it would have given (wrong_language, and an
    # HTML page: unavailable, without the list)
    for doc_id in ("hal-09000003", "hal-09000004"):
        assert docs[doc_id] == {**docs[doc_id], "status": "dropped",
                                "class": "license_excluded", "stage": "licenses"}
        assert fake_server.hits(f"/{doc_id}/document") == 0
    assert sorted(docs) == [f"hal-0900{i:04d}" for i in range(5)]
    assert report["licenses"] == {"cc-by-4.0": 2}

    ds = load_dataset(str(out), cache_dir=str(tmp_path / "cache"))
    rows = {r["article_id"]: r for s in ds for r in ds[s]}
    assert sorted(rows) == kept
    assert_provenance(rows)
    front = card_front_matter(out)
    assert front["license"] == "cc-by-4.0" and "license_name" not in front
    assert card_licence_rows(out) == {
        "cc-by-4.0": (2, "Creative Commons Attribution 4.0 International (CC BY 4.0)", "yes")}
    report_md = (out / "report.md").read_text(encoding="utf-8")
    assert "| cc-by-4.0 | 2 |" in report_md.split("## Licences", 1)[1]
    assert "license_excluded" in report_md
    assert "all-rights-reserved" not in (out / "README.md").read_text(encoding="utf-8")


def _fetched(db: Path) -> int:
    try:
        with sqlite3.connect(db, timeout=1) as con:
            return con.execute("SELECT COUNT(*) FROM results WHERE stage='fetch'").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def test_harvest_killed_part_way_resumes_from_its_checkpoint(fake_server, tmp_path):
    search = PagedSearch(records(fake_server.url("")), rows=2)
    fake_server.add_handler("/search/", search)
    serve(fake_server)
    out = tmp_path / "hal"
    cfg = write_config(tmp_path, fake_server.url("/search/"), requests_per_second=4)
    cmd = [sys.executable, "-m", "loralay_build.cli", "fetch", "--source", "hal", "--config",
           str(cfg), "--out", str(out)]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    db = out / "state" / "fetch.sqlite"
    deadline = time.monotonic() + 60
    while _fetched(db) < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = _fetched(db)
    assert 3 <= before < 5
    first_run_requests = len(search.requests)
    resumed = loralay("fetch", "--source", "hal", "--config", str(cfg), "--out", str(out))
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    with sqlite3.connect(db) as con:
        ids = [r[0] for r in con.execute("SELECT doc_id FROM results WHERE stage='fetch'")]
        cursor = json.loads(con.execute("SELECT value FROM checkpoints WHERE name='hal.cursor'")
                            .fetchone()[0])
    assert sorted(ids) == [f"hal-0900{i:04d}" for i in range(5)]
    assert search.cursors[first_run_requests] != "*"  # the rerun started from the checkpoint
    assert cursor["cursor"] == "c3"


def test_licence_outside_the_list_is_excluded_before_its_pdf_is_fetched(fake_server, tmp_path):
    """`licenses: [cc-by-4.0]` and the all-rights-reserved record's PDF URL serving a corrupted
    PDF (the magic, then garbage): the record is `license_excluded` (not `corrupted`), and the
    server saw no request for that PDF; the licence stage reports it as before."""
    corrupted = b"%PDF-1.4\n" + b"\x00garbage, no objects, no xref\n" * 40
    fake_server.add_handler("/search/", PagedSearch(records(fake_server.url("")), rows=2))
    serve(fake_server)  # every other record's PDF, as in the plain build
    fake_server.add("/hal-09000000/document", Reply(200, corrupted, PDF_TYPE))
    out = tmp_path / "hal"
    cfg = write_config(tmp_path, fake_server.url("/search/"), licenses=["cc-by-4.0"])
    proc = loralay("build", "--source", "hal", "--config", str(cfg), "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-2000:]
    docs = json.loads((out / "report.json").read_text())["documents"]
    assert docs["hal-09000000"] == {**docs["hal-09000000"], "status": "dropped",
                                    "class": "license_excluded", "stage": "licenses"}
    assert docs["hal-09000000"]["message"] == \
        "licence all-rights-reserved is not in licenses: cc-by-4.0"
    assert fake_server.hits("/hal-09000000/document") == 0
    assert not list((out / "pdfs").glob("hal-09000000*"))
    assert sorted(i for i, o in docs.items() if o["status"] == "kept") == \
        ["hal-09000001", "hal-09000002"]
    # the list widened: the excluded record is fetched now (its PDF for the first time)
    cfg = write_config(tmp_path, fake_server.url("/search/"), licenses=["cc-by-4.0",
                                                                        "all-rights-reserved"])
    proc = loralay("build", "--source", "hal", "--config", str(cfg), "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-2000:]
    docs = json.loads((out / "report.json").read_text())["documents"]
    assert fake_server.hits("/hal-09000000/document") == 1
    assert docs["hal-09000000"]["class"] == "corrupted", docs["hal-09000000"]
