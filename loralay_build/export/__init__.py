"""Exports of a built dataset into other tools' formats (VILA's token JSON)."""

from .cohan import export_cohan
from .vila import VilaOptions
from .vila_write import export_vila

__all__ = ["VilaOptions", "export_cohan", "export_vila"]
