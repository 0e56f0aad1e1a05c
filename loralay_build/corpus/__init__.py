"""Corpus-wide steps: they read per-document summaries, never whole documents."""
