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
from pathlib import Path

import pytest

from .conftest import fetched_ids
from .fakeserver import Reply, Request
from .test_oai_source import (
    OAI,
    XML,
    envelope,
    fixture,
    loralay,
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
