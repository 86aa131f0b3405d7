"""A cache of parsed templates for a process that renders many times (a server keeps
one per kind of text, in its app configs: never module state)."""

from __future__ import annotations

import functools

from sysprompt_core.template import compile as compile_template


class ParsedTemplates:
    """Parsed templates keyed by their source, so each version is parsed once per process.

    Keyed by the text itself, not a version number: a number names different texts in
    different databases, a text always parses the same way. Bounded, least recently
    used first out; safe to share between threads (``functools.lru_cache``: a text
    being parsed holds no lock, so two threads may parse it at once, to the same
    result).
    """

    def __init__(self, size: int = 32) -> None:
        self.get = functools.lru_cache(maxsize=size)(compile_template)

    def __len__(self) -> int:
        return self.get.cache_info().currsize
