"""Typed settings: one pydantic model per source on top of the common one.

    load_settings(source, config_file=None, overrides=None) -> the source's settings
    settings.document()  -> DocumentSettings (per-document stages; hashed for staleness)
    settings.corpus()    -> CorpusSettings (the finish)

Every key is declared once, with its type, range, default and meaning; a wrong value is a
`ConfigError` with one line before any work starts.
"""

from ..errors import ConfigError
from .common import (
    PLACEHOLDER_CONTACT,
    CommonSettings,
    CorpusSettings,
    DocumentSettings,
    HttpFields,
    LimitSettings,
)
from .load import check_contact, load_settings, read_config_file, settings_class
from .sources import (
    ArxivSettings,
    CiteSumSettings,
    HalSettings,
    KoreaScienceSettings,
    LocalSettings,
    OaiSettings,
    PubmedSettings,
    ScieloSettings,
)
from .view import describe_settings

__all__ = [
    "PLACEHOLDER_CONTACT", "ArxivSettings", "CiteSumSettings", "CommonSettings",
    "ConfigError",
    "CorpusSettings", "DocumentSettings", "HalSettings", "HttpFields", "KoreaScienceSettings",
    "LimitSettings", "LocalSettings", "OaiSettings", "PubmedSettings", "ScieloSettings",
    "check_contact", "describe_settings",
    "load_settings", "read_config_file", "settings_class",
]
