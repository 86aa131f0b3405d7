"""Benchmarks, run as scripts: ``.venv/bin/python benchmarks/<name>.py``."""
