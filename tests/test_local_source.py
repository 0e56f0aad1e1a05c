"""The local manifest source and the run state it feeds."""

from __future__ import annotations

import json

from loralay_build.conf import load_settings
from loralay_build.records import Candidate, Rejection
from loralay_build.sources import FetchContext, record_fetch_item
from loralay_build.sources.local import fetch
from loralay_build.store.fetch import FetchState


def local(manifest):
    return load_settings("local", None, {"manifest": str(manifest)})


def _write(path, lines):
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")


def test_manifest_lines_become_candidates_and_bad_lines_rejections(tmp_path):
    man = tmp_path / "m.jsonl"
    _write(man, [
        {"id": "a", "file": "pdf/a.pdf", "language": "fr",
         "abstracts": {"en": "Hello there.", "fr": "Bonjour à tous."}, "publication_date": "2019"},
        "{not json",
        {"id": "b", "file": "pdf/b.pdf", "language": "pt", "abstracts": {"en": "Only English."}},
        {"id": "c", "language": "en", "abstracts": {"en": "x"}},
    ])
    with FetchState(tmp_path / "s.sqlite") as st:
        items = list(fetch(FetchContext("local", local(man), st, tmp_path)))
        for item in items:
            record_fetch_item(st, item)
        a = items[0]
        assert isinstance(a, Candidate) and list(a.abstracts) == ["fr", "en"]
        assert a.pdf_path == str((tmp_path / "pdf" / "a.pdf").resolve())
        rejected = [i for i in items if isinstance(i, Rejection)]
        assert [r.id for r in rejected] == ["m.jsonl:2", "b", "c"]
        assert all(r.cls == "bad_metadata" for r in rejected)
        assert "m.jsonl:3" in rejected[1].message and "'pt'" in rejected[1].message
        assert st.status("a", "fetch") == "ok" and st.status("b", "fetch") == "failed"


def test_limit_and_state_survive_reopening(tmp_path):
    man = tmp_path / "m.jsonl"
    _write(man, [{"id": f"d{i}", "file": f"{i}.pdf", "language": "en",
                  "abstracts": {"en": "text"}} for i in range(5)])
    path = tmp_path / "s.sqlite"
    with FetchState(path) as st:
        for item in fetch(FetchContext("local", local(man), st, tmp_path, limit=3)):
            record_fetch_item(st, item)
        st.set_checkpoint("cursor", {"mark": "AoE"})
    with FetchState(path) as st:
        assert [c.id for c in st.candidates()] == ["d0", "d1", "d2"]
        assert st.get_checkpoint("cursor") == {"mark": "AoE"}
        # re-recording keeps the first order and does not duplicate
        for item in fetch(FetchContext("local", local(man), st, tmp_path)):
            record_fetch_item(st, item)
        assert [c.id for c in st.candidates()] == ["d0", "d1", "d2", "d3", "d4"]
