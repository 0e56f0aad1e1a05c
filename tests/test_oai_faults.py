"""`--source oai` against repositories that misbehave (issue 41): a resumption token that
comes back (a cycle), a format, set or base URL the repository refuses.

SYNTHETIC: the pages are built from recorded RCAAP records (../shared/fixtures/oai), the
errors are the recorded arXiv `cannotDisseminateFormat` and Bielefeld `ListMetadataFormats`
answers; the faults (a token given again, `noSetHierarchy`, `badArgument`, a 404) are
written here. Every endpoint caps what it serves, so a harvest that would never end on
a faulty build ends all the same and its test fails instead of hanging.
"""

from __future__ import annotations

import copy
import json

import pytest

from .conftest import fetched_ids, loralay
from .fakeserver import Reply, Request
from .helpers.oai import (
    OAI,
    XML,
    envelope,
    fixture,
    move_links,
    records_of,
    set_identifier,
    write_config,
)

CAP = 40  # requests an endpoint answers before it ends every list (a runaway harvest)


def records(base: str, n: int) -> list:
    recs = [copy.deepcopy(r) for r in records_of(
        "oai_dc_rcaap_ListRecords_2015-12-26_page1_with_token.xml")[:n]]
    for i, r in enumerate(recs):
        move_links(r, base)
        set_identifier(r, f"oai:test:{i}")
    return recs


def ident(record) -> str:
    return record.find(f"{{{OAI}}}header/{{{OAI}}}identifier").text


class Cycling:
    """Two one-day windows: the first lists a page per token of `chain` (its first page
    has none) and the last page gives `back` again; the second window is one page."""

    def __init__(self, base: str, chain: list[str], back: str) -> None:
        self.recs = records(base, len(chain) + 2)
        self.chain, self.back = chain, back
        self.requests: list[Request] = []

    def __call__(self, req: Request) -> Reply:
        self.requests.append(req)
        if len(self.requests) > CAP:
            return Reply(200, envelope([], None), XML)
        token = req.query.get("resumptionToken", [None])[0]
        if token is None and req.query.get("from") == ["2024-01-02"]:
            return Reply(200, envelope(self.recs[-1:], None), XML)
        steps = [None, *self.chain]
        at = steps.index(token)
        nxt = self.chain[at] if at < len(self.chain) else self.back
        return Reply(200, envelope([self.recs[at]], nxt), XML)


@pytest.mark.e2e
@pytest.mark.parametrize("chain,back", [(["a"], "a"), (["a", "b"], "a")],
                         ids=["same-token-back", "a-b-a"])
def test_a_token_given_again_stops_its_window_and_the_next_window_goes_on(
        fake_server, tmp_path, chain, back):
    repo = Cycling(fake_server.url("").rstrip("/"), chain, back)
    fake_server.add_handler("/oai", repo)
    out = tmp_path / "out"
    cfg = write_config(tmp_path, fake_server.url("/oai"), "oai_dc", ["pt"],
                       from_date="2024-01-01", until_date="2024-01-02", window_days=1)
    proc = loralay("fetch", "--source", "oai", "--config", str(cfg), "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-2000:]
    # each page asked for once: the first window's pages, then the second window's
    assert len(repo.requests) == len(chain) + 2
    assert fetched_ids(out) == {ident(r) for r in repo.recs}
    said = [ln for ln in proc.stderr.splitlines() if "already asked for" in ln]
    assert len(said) == 1, proc.stderr[-2000:]
    assert f"token {back}" in said[0] and "window 1/2" in said[0]


# --- a query the repository refuses (issue 41, item 13) --------------------------------------
def oai_error(code: str, text: str) -> bytes:
    return (f'<?xml version="1.0" encoding="UTF-8"?><OAI-PMH xmlns="{OAI}">'
            f"<responseDate>2026-12-01T00:00:00Z</responseDate>"
            f'<request verb="ListRecords">http://x/oai</request>'
            f'<error code="{code}">{text}</error></OAI-PMH>').encode()


class Refusing:
    """Bielefeld's recorded `Identify` and `ListMetadataFormats`; `ListRecords` answered
    `listed` (at most CAP times, then an empty list)."""

    def __init__(self, listed: Reply) -> None:
        self.listed = listed
        self.verbs: list[str] = []

    def __call__(self, req: Request) -> Reply:
        verb = req.query.get("verb", ["?"])[0]
        self.verbs.append(verb)
        if verb == "Identify":
            return Reply(200, fixture("oai_pmh_bielefeld-pub_Identify_2020.xml"), XML)
        if verb == "ListMetadataFormats":
            return Reply(200, fixture("oai_pmh_bielefeld-pub_ListMetadataFormats_2020.xml"), XML)
        if len(self.verbs) > CAP:
            return Reply(200, envelope([], None), XML)
        return self.listed


BIELEFELD_FORMATS = "rdf, oai_datacite, xMetaDissPlus, epicur, mods, oai_dc, OpenAPC"
NOT_FOUND = Reply(404, b"<html><body>Not Found</body></html>", {"Content-Type": "text/html"})
REFUSALS = {
    "format": (Reply(200, fixture("oai_dc_arxiv_error_cannotDisseminateFormat.xml"), XML), {},
               ["does not offer metadata_prefix 'jpcoar_2.0' (cannotDisseminateFormat",
                f"it offers {BIELEFELD_FORMATS}; set metadata_prefix to one this tool reads: "
                "oai_datacite, xMetaDissPlus, oai_dc"]),
    "no-sets": (Reply(200, oai_error("noSetHierarchy", "This repository does not support "
                                     "sets"), XML), {"set": "theses"},
                ["has no sets (noSetHierarchy", "remove set 'theses'"]),
    "bad-set": (Reply(400, oai_error("badArgument", "Invalid set: theses"), XML),
                {"set": "theses"},
                ["refuses the request (badArgument: Invalid set: theses) for metadata_prefix "
                 "'jpcoar_2.0', set 'theses'", "?verb=ListSets"]),
    "404": (NOT_FOUND, {}, ["base_url http://127.0.0.1:", "/oai answers HTTP 404",
                            "check base_url"]),
}


def fetch_lines(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if "fetch oai stopped" in ln]


@pytest.mark.e2e
@pytest.mark.parametrize("fault", list(REFUSALS))
def test_a_refused_query_says_what_to_change_and_writes_no_card(fake_server, tmp_path, fault):
    listed, over, said = REFUSALS[fault]
    repo = Refusing(listed)
    fake_server.add_handler("/oai", repo)
    out = tmp_path / "out"
    cfg = write_config(tmp_path, fake_server.url("/oai"), "jpcoar_2.0", ["en"],
                       from_date="2024-01-01", until_date="2024-01-20", window_days=7,
                       **over)
    proc = loralay("build", "--source", "oai", "--config", str(cfg), "--out", str(out))
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    lines = fetch_lines(proc.stderr)
    assert lines and all(s in lines[0] for s in said), proc.stderr[-2000:]
    assert "rerun" not in lines[0]
    # asked once: neither retried nor the other windows asked the same refused question
    assert repo.verbs.count("ListRecords") == 1
    assert not (out / "README.md").exists() and not (out / "data").exists()
    report = (out / "report.md").read_text()
    assert all(s in report for s in said) and "the harvest stopped early" in report
    stopped = json.loads((out / "report.json").read_text())["stopped"]
    assert stopped.startswith("fetch oai stopped: oai: ") and stopped in lines[0]


@pytest.mark.e2e
def test_a_harvest_stopped_for_now_is_in_the_report_and_says_to_rerun(fake_server, tmp_path):
    repo = Refusing(Reply(500, b"busy", {"Content-Type": "text/plain"}))
    fake_server.add_handler("/oai", repo)
    out = tmp_path / "out"
    cfg = write_config(tmp_path, fake_server.url("/oai"), "oai_dc", ["en"], attempts=2,
                       max_retries=0)
    proc = loralay("build", "--source", "oai", "--config", str(cfg), "--out", str(out))
    assert proc.returncode != 0
    lines = fetch_lines(proc.stderr)
    assert lines and "rerun the same command to resume" in lines[0], proc.stderr[-2000:]
    assert "HTTP 500" in (out / "report.md").read_text()
    assert not (out / "README.md").exists()


@pytest.mark.e2e
@pytest.mark.parametrize("prefix,listed,ok,said", [
    ("oai_dc", NOT_FOUND, True, ["PUB - Publications at Bielefeld University",
                                 "metadata_prefix 'oai_dc' is offered"]),
    ("jpcoar_2.0", NOT_FOUND, False, ["does not offer metadata_prefix 'jpcoar_2.0'",
                                      f"it offers {BIELEFELD_FORMATS}"]),
], ids=["offered", "not-offered"])
def test_dry_run_asks_identify_and_list_metadata_formats_once(fake_server, tmp_path, prefix,
                                                              listed, ok, said):
    repo = Refusing(listed)
    fake_server.add_handler("/oai", repo)
    cfg = write_config(tmp_path, fake_server.url("/oai"), prefix, ["en"])
    proc = loralay("build", "--source", "oai", "--config", str(cfg), "--out",
                   str(tmp_path / "out"), "--dry-run")
    assert (proc.returncode == 0) is ok, proc.stdout + proc.stderr
    assert all(s in proc.stdout + proc.stderr for s in said), proc.stdout + proc.stderr
    assert repo.verbs == ["Identify", "ListMetadataFormats"]
    assert not (tmp_path / "out").exists()


@pytest.mark.e2e
def test_dry_run_of_a_base_url_that_is_no_endpoint_names_it(fake_server, tmp_path):
    fake_server.add("/oai", NOT_FOUND)
    cfg = write_config(tmp_path, fake_server.url("/oai"), "oai_dc", ["en"])
    proc = loralay("build", "--source", "oai", "--config", str(cfg), "--out",
                   str(tmp_path / "out"), "--dry-run")
    assert proc.returncode != 0
    said = proc.stdout + proc.stderr
    assert f"base_url {fake_server.url('/oai')} answers HTTP 404" in said, said
    assert fake_server.hits("/oai") == 1
