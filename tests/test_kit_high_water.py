"""The kit's `HighWater` (`sources/kit/harvest.py`), the one rule of "ask only for what is
new": the mark kept across runs in the run state, the overlap, the configured first day
when it is later, a plain run asking as configured, a saved mark that is not a date."""

from __future__ import annotations

import logging
from pathlib import Path

from loralay_build.conf import load_settings
from loralay_build.sources import FetchContext
from loralay_build.sources.kit.harvest import HighWater
from loralay_build.store.fetch import FetchState

NAME = "test.high_water"


def ctx(state: FetchState, tmp_path: Path, refresh: bool, **over: object) -> FetchContext:
    settings = load_settings("oai", overrides={"base_url": "http://127.0.0.1:9/oai",
                                               "contact": "tests@example.org", **over})
    return FetchContext("oai", settings, state, tmp_path, refresh=refresh)


def harvested(state: FetchState, tmp_path: Path, *dates: str) -> None:
    """One whole harvest that saw `dates`."""
    hw = HighWater(ctx(state, tmp_path, refresh=False), NAME)
    hw.start(None)
    for d in dates:
        hw.seen(d)
    hw.save()


def test_the_mark_is_the_newest_date_seen_and_is_kept_across_runs(tmp_path):
    with FetchState(tmp_path / "s.sqlite") as state:
        harvested(state, tmp_path, "2024-02-10", "2024-03-01T10:00:00Z", "2024-02-28")
        assert state.get_checkpoint(NAME) == "2024-03-01T10:00:00Z"
        again = HighWater(ctx(state, tmp_path, refresh=False), NAME)
        assert again.mark == "2024-03-01T10:00:00Z"
        again.seen("2024-03-01")  # a day is earlier than a time of that day
        again.seen(None)
        assert again.mark == "2024-03-01T10:00:00Z"


def test_a_refresh_asks_from_the_mark_less_the_overlap(tmp_path):
    with FetchState(tmp_path / "s.sqlite") as state:
        harvested(state, tmp_path, "2024-03-01T10:00:00Z")
        hw = HighWater(ctx(state, tmp_path, refresh=True), NAME)
        assert hw.start(None) == "2024-02-29"  # one day: the default
        wider = HighWater(ctx(state, tmp_path, refresh=True, refresh_overlap_days=3), NAME)
        assert wider.start("2020-01-01") == "2024-02-27"
        exact = HighWater(ctx(state, tmp_path, refresh=True, refresh_overlap_days=0), NAME)
        assert exact.start(None) == "2024-03-01"


def test_a_configured_first_day_later_than_the_mark_wins(tmp_path):
    with FetchState(tmp_path / "s.sqlite") as state:
        harvested(state, tmp_path, "2024-03-01T10:00:00Z")
        hw = HighWater(ctx(state, tmp_path, refresh=True), NAME)
        assert hw.start("2024-06-01") == "2024-06-01"


def test_a_plain_run_and_a_first_harvest_ask_as_configured(tmp_path):
    with FetchState(tmp_path / "s.sqlite") as state:
        first = HighWater(ctx(state, tmp_path, refresh=True), NAME)  # no mark yet
        assert first.start("2020-01-01") == "2020-01-01"
        harvested(state, tmp_path, "2024-03-01T10:00:00Z")
        plain = HighWater(ctx(state, tmp_path, refresh=False), NAME)
        assert plain.start("2020-01-01") == "2020-01-01"
        assert plain.start(None) is None


def test_a_saved_mark_that_is_not_a_date_warns_and_asks_for_everything(tmp_path, caplog):
    with FetchState(tmp_path / "s.sqlite") as state:
        state.set_checkpoint(NAME, "last tuesday")
        hw = HighWater(ctx(state, tmp_path, refresh=True), NAME)
        with caplog.at_level(logging.WARNING, logger="loralay.fetch"):
            assert hw.start(None) is None
            assert hw.start("2020-01-01") == "2020-01-01"
        assert "'last tuesday' is not a date; asking for everything" in caplog.text


def test_a_refresh_that_saved_no_mark_asks_the_same_first_day_again(tmp_path):
    """A source saves its mark only once the listing it came from is complete: a refresh
    stopped midway saved none, so run again it asks the very same query (and resumes its
    position) instead of asking from dates its unwalked pages may hold older ones than."""
    with FetchState(tmp_path / "s.sqlite") as state:
        harvested(state, tmp_path, "2024-03-01T10:00:00Z")
        stopped = HighWater(ctx(state, tmp_path, refresh=True), NAME)
        assert stopped.start(None) == "2024-02-29"
        stopped.seen("2024-05-20")  # a page walked, then killed: nothing saved
        again = HighWater(ctx(state, tmp_path, refresh=True), NAME)
        assert again.start(None) == "2024-02-29"
        again.seen("2024-05-20")
        again.save()  # the listing is complete
        after = HighWater(ctx(state, tmp_path, refresh=True), NAME)
        assert after.start(None) == "2024-05-19"
