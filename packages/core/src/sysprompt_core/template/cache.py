"""A cache of parsed templates for a process that renders many times (a server keeps
one per kind of text, in its app configs: never module state)."""

from __future__ import annotations

import threading
from collections import OrderedDict

from sysprompt_core.template import Template
from sysprompt_core.template import compile as compile_template


class ParsedTemplates:
    """Parsed templates keyed by their source, so each version is parsed once per process.

    Keyed by the text itself, not a version number: a number names different texts in
    different databases, a text always parses the same way. Bounded, least recently
    used first out; safe to share between threads.
    """

    def __init__(self, size: int = 32) -> None:
        self._size = size
        self._entries: OrderedDict[str, Template] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, source: str) -> Template:
        with self._lock:
            if (found := self._entries.get(source)) is not None:
                self._entries.move_to_end(source)
                return found
        parsed = compile_template(source)
        with self._lock:
            self._entries[source] = parsed
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)
        return parsed

    def __len__(self) -> int:
        return len(self._entries)
