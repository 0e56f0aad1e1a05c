"""Reusable constrained types, so each range is written once and reads as a word.

Strict mode is on in every model: YAML's `"5"` is not an int and `high` is not a
percentile, and the error says so before any document is touched.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated

from pydantic import AfterValidator, BeforeValidator, Field

PositiveSeconds = Annotated[float, Field(gt=0, allow_inf_nan=False)]
NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Share = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
Count = Annotated[int, Field(ge=1)]
NonNegativeCount = Annotated[int, Field(ge=0)]
Percentile = Annotated[float, Field(gt=0, lt=100, allow_inf_nan=False)]
Rate = Annotated[float, Field(gt=0, le=1000, allow_inf_nan=False)]

_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$", re.ASCII)  # 0-9 only: "２０２０" is not sent
_NAME = re.compile(r"^[A-Za-z0-9][\w.-]*$")
_HTTP_URL = re.compile(r"^https?://[^\s/]+", re.IGNORECASE)


def check_proportions(value: list[float]) -> list[float]:
    """The one rule for split shares, read by the settings and by every split (a split
    called directly once accepted a zero train share that the settings refuse)."""
    if len(value) != 3 or any(not 0 <= x <= 1 for x in value) or abs(sum(value) - 1) > 1e-6:
        raise ValueError("three shares (train, validation, test) between 0 and 1 summing to 1")
    if value[0] <= 0:
        raise ValueError("train must get a share above 0")
    return value


def _yaml_date(value: object) -> object:
    """YAML reads an unquoted `2020-01-01` as a date: taken as the same string."""
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return value.isoformat()
    return value


def _iso_date(value: str) -> str:
    """The shape and the calendar: a repository asked for February 30th answers with an
    error the harvest takes for a stop to resume, a traceback or a rerun later."""
    if not _ISO_DATE.match(value):
        raise ValueError("a date as YYYY-MM-DD")
    try:
        dt.date.fromisoformat(value)
    except ValueError:
        raise ValueError("no such day (a date as YYYY-MM-DD)") from None
    return value


def _name(value: str) -> str:
    if not _NAME.match(value):
        raise ValueError("letters, digits, '.', '_' or '-', starting with a letter or digit")
    return value


def _url(value: str) -> str:
    if not _HTTP_URL.match(value):
        raise ValueError("an http:// or https:// URL")
    return value


def _language(value: str) -> str:
    from ..langcodes import is_iso639_1

    if not is_iso639_1(value):
        raise ValueError("an ISO 639-1 language code such as 'fr'")
    return value


Proportions = Annotated[list[Annotated[float, Field(allow_inf_nan=False)]],
                        AfterValidator(check_proportions)]
IsoDate = Annotated[str, BeforeValidator(_yaml_date), AfterValidator(_iso_date)]
Name = Annotated[str, AfterValidator(_name)]
HttpUrl = Annotated[str, AfterValidator(_url)]
Language = Annotated[str, AfterValidator(_language)]
