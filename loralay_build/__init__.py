"""loralay-build: scientific PDFs to layout-aware summarization datasets.

Kept free of imports so that `loralay --help` and light tools start fast and
optional dependencies fail only where they are used.
"""

__version__ = "0.1.0"
