"""Scheduling, state and progress: the only place that knows about executors and SQLite."""
