"""A fake Hub to publish to, shared by the publish and refresh tests."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from ..conftest import REPO, loralay
from ..fakehub import TOKEN, FakeHub


def hub_env(hub: FakeHub, home: Path, token: str | None = TOKEN) -> dict[str, str]:
    """The environment of a user publishing to `hub`: online, no Xet (the fake speaks the
    plain LFS path), a Hugging Face home of its own (no login of the machine's user)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("HF_HUB_OFFLINE", "HF_TOKEN", "HF_ENDPOINT", "HF_HUB_ENABLE_HF_TRANSFER")}
    env.update(HF_HUB_DISABLE_XET="1", HF_HUB_DISABLE_TELEMETRY="1", HF_HOME=str(home),
               HF_ENDPOINT=hub.url, PYTHONPATH=str(REPO))
    if token is not None:
        env["HF_TOKEN"] = token
    return env


def publish(ds: Path, env: dict[str, str], *extra: str, repo: str = "tester/sample-lay"
            ) -> subprocess.CompletedProcess:
    return loralay("publish", str(ds), "--repo", repo, *extra, env=env, timeout=300)
