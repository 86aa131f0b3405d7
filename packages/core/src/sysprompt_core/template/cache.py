"""A cache of parsed templates for a process that renders many times (a server keeps
one, in an app config: never module state), bounded by the memory it holds.

``get(source)`` → the parsed :class:`Template` from the cache, or parsed now → its
retained size measured once (:func:`retained_bytes`: every distinct object it holds,
as the allocator rounds it: the source, the tree's tuples, blocks, variables and
strings, the references and findings; within 10% of what ``tracemalloc`` sees it
keep) → kept, least recently used ones dropped until the total is within
``max_bytes`` again; a template larger than the whole bound is returned without being
kept. ``get(source, keep=False)`` (a draft being previewed: typed text, different at
every keystroke) uses a kept parse but keeps nothing. So many different large
templates cannot make the cache hold more than the bound, whatever their number, and
previews of drafts make it hold nothing.
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

    def get(self, source: str, *, keep: bool = True) -> Template:
        """``source`` parsed: the kept one when there is one, else parsed now and kept
        (``keep``: a text parsed once, such as a draft being previewed, is not kept and
        evicts nothing)."""
        with self._lock:
            if (found := self._entries.get(source)) is not None:
                self._entries.move_to_end(source)
                return found[0]
        parsed = compile_template(source)
        if not keep:
            return parsed
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


_SMALL_OBJECT = 512
"""Objects up to this size come from CPython's small-object allocator, in 16-byte
steps; larger ones from ``malloc``, which adds its own header."""


def _allocated(size: int) -> int:
    """What the allocator really takes for an object of ``size`` bytes."""
    return (size + 15) & ~15 if size <= _SMALL_OBJECT else size + 16


def retained_bytes(template: Template) -> int:
    """What ``template`` holds in memory, in bytes, as the allocator hands it out: every
    distinct object of it counted once (the source text, the tuples of the tree, each
    ``Block``, each ``Variable`` and literal string, the references and findings),
    each rounded up as the allocator rounds it (:func:`_allocated`). A ``Variable``
    reached from many places is one object, counted once; a literal the interpreter
    shares (a one-character string, the empty tuple) is counted once too."""
    seen: set[int] = set()
    size = 0

    def count(obj: object) -> None:
        nonlocal size
        if id(obj) not in seen:
            seen.add(id(obj))
            size += _allocated(sys.getsizeof(obj))

    for part in (template, template.source, template.references, template.findings):
        count(part)
    for key in template.references:
        count(key)
    for finding in template.findings:
        count(finding)
    pending: list[tuple[Node, ...]] = [template.nodes]
    while pending:
        nodes = pending.pop()
        if id(nodes) in seen:
            continue
        count(nodes)
        for node in nodes:
            if id(node) in seen:
                continue
            count(node)
            if type(node) is Variable:
                count(node.key)
            elif type(node) is Block:
                count(node.key)
                pending.append(node.then)
                pending.append(node.otherwise)
    return size
