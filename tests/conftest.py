"""Shared fixtures: the `../shared` folder (skipped cleanly when absent) and a local server."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest

from loralay_build.records import Candidate, Rejection
from loralay_build.sources import FetchContext, get_fetcher, record_fetch_item
from loralay_build.state import RunState

from .fakeserver import FakeServer

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("LORALAY_SHARED", REPO.parent / "shared"))


def shared_path(*parts: str) -> Path:
    p = SHARED.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"{p} not present (../shared is absent)")
    return p


def harvest_source(source: str, cfg: dict, state: RunState, out: Path, limit: int | None = None,
                   abandon_after: int | None = None) -> list[Candidate | Rejection]:
    """What the driver does with a fetcher; `abandon_after` drops the generator there, as a
    kill would."""
    gen = get_fetcher(source)(FetchContext(source, cfg, state, out, limit))
    items: list[Candidate | Rejection] = []
    for item in gen:
        record_fetch_item(state, item)
        items.append(item)
        if abandon_after is not None and len(items) >= abandon_after:
            gen.close()
            break
    return items


@pytest.fixture
def shared_corpus() -> list[dict]:
    man = shared_path("corpus", "manifest.jsonl")
    return [json.loads(line) for line in man.read_text().splitlines() if line.strip()]


@pytest.fixture
def fake_server():
    with FakeServer() as srv:
        yield srv


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch):
    """Tests may talk to 127.0.0.1 only: any other address fails loudly."""
    real = socket.socket.connect

    def guarded(self, address):
        host = address[0] if isinstance(address, tuple) else address
        if isinstance(host, str) and not (host.startswith("127.") or host in ("localhost", "::1")
                                          or host.startswith("/")):
            raise RuntimeError(f"test tried to reach {host}: only loopback is allowed")
        return real(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
