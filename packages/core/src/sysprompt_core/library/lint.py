"""Lint with the library: the engine's lint, plus what fragments do where they are used.

``library_lint(text, library=…, provider=…, model=…)`` returns, ordered by position:

* the engine's diagnostics with the registry's vocabulary (structure, unknown types and
  names, near misses);
* for each ``[fragment:x]`` and ``[if fragment:x]`` (not literal text), when a library
  is given: a warning when there is no fragment ``x`` (with a "did you mean" when a
  name is close: each distinct unknown name compared with every fragment name, at most
  :data:`SUGGESTION_COMPARISONS` comparisons in one lint, then only "no such
  fragment"); and a warning when including ``x`` leads to a cycle (``fragment
  'core' includes itself: core → env/git → core``) or nests fragments deeper than
  ``FRAGMENT_MAX_DEPTH`` (8), where the inner reference renders as nothing;
* with ``prefix_hint`` (the default), a warning at the first per-conversation value
  when it comes early and much text follows it, uncached for every conversation
  (``sysprompt_core.template.prefix_lint``).

The includes are walked statically, as the renderer would meet them: each fragment's
variant for ``provider`` and ``model`` (compressed when the version has it), all its
``fragment:`` references (in both branches of its blocks), depth first, once per name
and set of fragments including it, at most ``FRAGMENT_MAX_RENDERS`` fragments in all
(past that the renderer gives up too, and lint says so). With ``name``, the text is
that fragment's own: it is on the include chain, so ``[fragment:core]`` inside
``core`` is a cycle.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from sysprompt_core import template as engine
from sysprompt_core.library.compression import compress
from sysprompt_core.library.source import FragmentSource
from sysprompt_core.library.variants import choose_variant
from sysprompt_core.limits import FRAGMENT_MAX_DEPTH, FRAGMENT_MAX_RENDERS
from sysprompt_core.template.lexer import Token, tokenize
from sysprompt_core.template.parser import parse
from sysprompt_core.template.prefix_lint import early_prefix_end
from sysprompt_core.variables.registry import Registry, default_registry
from sysprompt_core.variables.scope import is_per_conversation

__all__ = ["SUGGESTION_COMPARISONS", "library_lint"]

FRAGMENT = "fragment"
_PREFIX = f"{FRAGMENT}:"
SUGGESTION_COMPARISONS = 20_000
"""The most (unknown name, fragment name) pairs one lint compares for its "did you
mean" hints, about half a second of difflib: 2,000 unknown references in a library of
1,000 fragments took 38 s before (issue 24). Past it an unknown reference says only
"no such fragment"."""


def library_lint(
    text: str,
    *,
    library: FragmentSource | None,
    provider: str | None = None,
    model: str | None = None,
    registry: Registry | None = None,
    name: str | None = None,
    prefix_hint: bool = True,
) -> list[engine.Diagnostic]:
    """The diagnostics of ``text`` (see the module docstring); ``name``: the text is
    the source of that fragment."""
    vocabulary = (default_registry() if registry is None else registry).vocabulary()
    diagnostics = engine.lint(text, vocabulary)
    if library is not None and FRAGMENT in vocabulary:
        walk = _Walk(library, provider, model)
        chain = () if name is None else (name,)
        names = _Suggestions(library.names())
        diagnostics += _fragment_diagnostics(text, names, walk, chain)
    hint = early_prefix_end(text, is_per_conversation) if prefix_hint else None
    if hint is not None:
        diagnostics.append(hint)
    diagnostics.sort(key=lambda d: (d.line, d.column))
    return diagnostics


def _fragment_diagnostics(
    text: str, names: _Suggestions, walk: _Walk, chain: tuple[str, ...]
) -> Iterator[engine.Diagnostic]:
    for tag in _fragment_tags(text):
        assert tag.key is not None
        included = tag.key.removeprefix(_PREFIX)
        if included not in names.names:
            yield _warning(tag, f"unknown variable '{tag.key}'{names.hint(included)}")
            continue
        problem = walk.problem(included, chain)
        if problem is not None:
            yield _warning(tag, problem.message(chain))


def _fragment_tags(text: str) -> Iterator[Token]:
    """The ``fragment:`` variables and ``[if]`` tags of ``text`` that are not literal."""
    literal = {finding.ordinal for finding in parse(text).findings}
    for ordinal, tag in enumerate(tokenize(text)):
        if ordinal not in literal and tag.key is not None and tag.key.startswith(_PREFIX):
            yield tag


def _warning(tag: Token, message: str) -> engine.Diagnostic:
    return engine.Diagnostic(tag.line, tag.column, tag.column + len(tag.text), "warning", message)


class _Suggestions:
    """The library's fragment names, and the "did you mean" hint of an unknown one:
    each distinct name looked up once, within :data:`SUGGESTION_COMPARISONS`."""

    def __init__(self, names: frozenset[str]) -> None:
        self.names = names
        self._sorted = sorted(names)
        self._left = SUGGESTION_COMPARISONS
        self._hints: dict[str, str] = {}

    def hint(self, name: str) -> str:
        if name not in self._hints:
            close: list[str] = []
            if len(self._sorted) <= self._left:
                self._left -= len(self._sorted)
                close = difflib.get_close_matches(name, self._sorted, n=1)
            found = f" (did you mean '{_PREFIX}{close[0]}'?)" if close else " (no such fragment)"
            self._hints[name] = f"{found}; it renders as nothing"
        return self._hints[name]


@dataclass(frozen=True)
class _Problem:
    """Where an include goes wrong: ``path`` runs from the included fragment to the
    reference that renders as nothing."""

    kind: Literal["cycle", "depth", "renders"]
    path: tuple[str, ...]

    def message(self, chain: tuple[str, ...]) -> str:
        route = " → ".join((*chain, *self.path))
        last = self.path[-1]
        where = f"there [fragment:{last}] renders as nothing"
        match self.kind:
            case "cycle":
                return f"fragment '{last}' includes itself: {route}; {where}"
            case "depth":
                return f"fragments nest deeper than {FRAGMENT_MAX_DEPTH} levels: {route}; {where}"
            case "renders":
                return (
                    f"the includes of '{self.path[0]}' branch into more than "
                    f"{FRAGMENT_MAX_RENDERS:,} fragment renders; past that, fragments "
                    "render as nothing"
                )


class _Walk:
    """The static include walk over one library, provider and model (memoised)."""

    def __init__(self, library: FragmentSource, provider: str | None, model: str | None):
        self._library = library
        self._provider = provider
        self._model = model
        self._includes: dict[str, tuple[str, ...] | None] = {}
        self._memo: dict[tuple[str, frozenset[str]], _Problem | None] = {}
        self._visits = 0

    def problem(self, name: str, chain: tuple[str, ...]) -> _Problem | None:
        """The first problem met when ``chain`` includes ``name``, or None."""
        if name in chain:
            return _Problem("cycle", (name,))
        if len(chain) >= FRAGMENT_MAX_DEPTH:
            return _Problem("depth", (name,))
        includes = self.includes(name)
        if not includes:
            return None
        key = (name, frozenset(chain))
        if key in self._memo:
            return self._memo[key]
        found: _Problem | None = None
        if self._visits >= FRAGMENT_MAX_RENDERS:
            found = _Problem("renders", (name,))
        else:
            self._visits += 1
            inner = (*chain, name)
            for child in includes:
                problem = self.problem(child, inner)
                if problem is not None:
                    found = _Problem(problem.kind, (name, *problem.path))
                    break
        self._memo[key] = found
        return found

    def includes(self, name: str) -> tuple[str, ...] | None:
        """The fragments ``name``'s variant refers to, in order; None: no variant."""
        if name not in self._includes:
            self._includes[name] = self._read(name)
        return self._includes[name]

    def _read(self, name: str) -> tuple[str, ...] | None:
        variants = self._library.variants(name)
        key = choose_variant(variants.keys(), self._provider, self._model)
        if key is None:
            return None
        variant = variants[key]
        source = compress(variant.text) if variant.compress else variant.text
        tags = (tag.key.removeprefix(_PREFIX) for tag in _fragment_tags(source) if tag.key)
        return tuple(dict.fromkeys(tags))
