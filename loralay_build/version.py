"""The package's version, in a module of its own so that anything may read it without
importing the package root (whose lazy API would otherwise join an import cycle)."""

__version__ = "0.2.0"
