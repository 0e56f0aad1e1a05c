"""Spiders by name (the child process looks them up here)."""

from __future__ import annotations

from .koreascience import KoreaScienceSpider
from .scielo import ScieloSpider

SPIDERS = {"scielo": ScieloSpider, "koreascience": KoreaScienceSpider}
