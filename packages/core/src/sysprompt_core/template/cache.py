"""A cache of parsed templates for a process that renders many times (a server keeps
one, in an app config: never module state), bounded by the memory it holds.

``get(source)`` → the parsed :class:`Template` from the cache, or parsed now → its
retained size measured once (:func:`retained_bytes`: the source, every node, the
references and findings) → kept, least recently used ones dropped until the total is
within ``max_bytes`` again; a template larger than the whole bound is returned without
being kept. So many different large templates (previews, say) cannot make the process
grow past the bound, whatever their number.
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict

from sysprompt_core.limits import DEFAULT_PARSE_CACHE_BYTES
from sysprompt_core.template import Template
from sysprompt_core.template import compile as compile_template
from sysprompt_core.template.nodes import Block, Node, Variable


class ParsedTemplates:
    """Parsed templates keyed by their source, so each text is parsed once per process.

    Keyed by the text itself, not a version number: a number names different texts in
    different databases, a text always parses the same way. Holds at most ``max_bytes``
    (as :func:`retained_bytes` counts), least recently used first out; safe to share
    between threads.
    """

    def __init__(self, max_bytes: int = DEFAULT_PARSE_CACHE_BYTES) -> None:
        self._max_bytes = max_bytes
        self._entries: OrderedDict[str, tuple[Template, int]] = OrderedDict()
        self._total = 0
        self._lock = threading.Lock()

    def get(self, source: str) -> Template:
        with self._lock:
            if (found := self._entries.get(source)) is not None:
                self._entries.move_to_end(source)
                return found[0]
        parsed = compile_template(source)
        size = retained_bytes(parsed)
        if size > self._max_bytes:
            return parsed
        with self._lock:
            if source not in self._entries:
                self._entries[source] = (parsed, size)
                self._total += size
                self._evict()
        return parsed

    @property
    def max_bytes(self) -> int:
        return self._max_bytes

    @property
    def retained(self) -> int:
        """The bytes the kept templates hold together, as :func:`retained_bytes` counts."""
        return self._total

    def _evict(self) -> None:
        while self._total > self._max_bytes:
            _, (_, size) = self._entries.popitem(last=False)
            self._total -= size

    def __len__(self) -> int:
        return len(self._entries)


def retained_bytes(template: Template) -> int:
    """What ``template`` holds in memory, in bytes: the source text, every node of its
    tree and their strings, its references and findings (``sys.getsizeof`` of each;
    a string shared by two nodes counts twice, so this errs on the large side)."""
    size = sys.getsizeof(template) + sys.getsizeof(template.source)
    size += sys.getsizeof(template.references) + sum(map(sys.getsizeof, template.references))
    size += sys.getsizeof(template.findings) + sum(map(sys.getsizeof, template.findings))
    pending: list[tuple[Node, ...]] = [template.nodes]
    while pending:
        nodes = pending.pop()
        size += sys.getsizeof(nodes)
        for node in nodes:
            size += sys.getsizeof(node)
            if type(node) is Variable:
                size += sys.getsizeof(node.key)
            elif type(node) is Block:
                size += sys.getsizeof(node.key)
                pending.append(node.then)
                pending.append(node.otherwise)
    return size
