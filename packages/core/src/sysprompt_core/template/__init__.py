"""The sysprompt template language (described in ``docs/template-language.md``).

Pure Python, no Django. The pipeline::

    source ──lexer──▶ tokens ──parser──▶ nodes ──render(values)──▶ text

* ``lexer``  — one verbose regular expression (``PATTERN``) finds the tags; every other
  character is text. ``split`` gives the flat stream the parser eats; ``tokenize``
  gives immutable ``Token`` objects with line and column for tooling.
* ``parser`` — one left-to-right pass with a stack pairs ``[if]``/``[else]``/``[endif]``,
  applies the standalone-line rule, and turns unmatched tags back into text.
* ``nodes``  — text, ``Variable`` and ``Block``; ``render_nodes`` walks them with an
  explicit stack (no recursion) and looks a key up only when the walk reaches it;
  ``render_nodes_within`` does the same within a size limit (``Template.render_within``)
  and measures, in the same walk, the shared prefix: how much of the text is the same
  for every conversation, given which keys vary (``prefix``; ``Template.prefix_end``
  says where in the source it ends).
* ``lint``   — diagnostics with line and column; rendering itself never fails.

Every step is linear in the size of the source plus the output, whatever the input.
``compile`` parses once; the resulting ``Template`` renders any number of times.
"""

from __future__ import annotations

from dataclasses import dataclass

from sysprompt_core.errors import PromptTooLarge
from sysprompt_core.template.lint import Diagnostic, Vocabulary, lint
from sysprompt_core.template.nodes import (
    Bounded,
    Node,
    Values,
    literal_size,
    render_nodes,
    render_nodes_within,
)
from sysprompt_core.template.parser import Finding, parse
from sysprompt_core.template.prefix import Prefixed, PrefixEnd, PrefixStop, Varies, locate

__all__ = [
    "Bounded",
    "Diagnostic",
    "PrefixEnd",
    "PrefixStop",
    "Prefixed",
    "PromptTooLarge",
    "Template",
    "Values",
    "Varies",
    "Vocabulary",
    "compile",
    "lint",
    "references",
    "render",
]


@dataclass(frozen=True, slots=True, eq=False)
class Template:
    """A parsed template: parse once, render many times."""

    source: str
    nodes: tuple[Node, ...]
    references: frozenset[str]
    findings: tuple[Finding, ...]
    literal_bytes: int
    """The UTF-8 bytes of the literal text of every branch (``literal_size``)."""

    def render(self, values: Values) -> str:
        """The rendered text; ``values`` is keyed ``"type:name"``, ``None`` = absent."""
        return render_nodes(self.nodes, values)

    def render_prompt(self, values: Values) -> str | None:
        """The system prompt: ``None`` when the text is empty or only whitespace (§7)."""
        text = render_nodes(self.nodes, values)
        return None if text.isspace() or not text else text

    def render_within(self, values: Values, limit: int, varies: Varies | None = None) -> Bounded:
        """The rendered text in at most ``limit`` UTF-8 bytes, and the keys dropped to
        fit: a value that would cross the limit makes its variable not exist, blocks
        included (see ``render_nodes_within``); :class:`PromptTooLarge` when the
        literal text alone is over the limit. With it, the shared prefix, ``varies``
        saying which keys differ between conversations."""
        return render_nodes_within(self.nodes, values, limit, varies, self.literal_bytes)

    def prefix_end(self, rendered: Bounded, values: Values) -> PrefixEnd | None:
        """Where in :attr:`source` the shared prefix of ``rendered`` (a
        :meth:`render_within` of this template with ``values``) ends: the tag that
        ended it; ``None`` when nothing ended it (the whole text is shared)."""
        if rendered.stop is None:
            return None
        absent = rendered.dropped
        literal = {finding.ordinal for finding in self.findings}
        get = values.get

        def exists(key: str) -> bool:
            return key not in absent and get(key) is not None

        return locate(self.source, literal, rendered.stop, exists)


def compile(source: str) -> Template:  # noqa: A001 - the name the language gives it
    """Parse ``source`` once into a ``Template``."""
    nodes, refs, findings = parse(source)
    return Template(source, nodes, refs, findings, literal_size(nodes))


def render(template: str, values: Values) -> str:
    """Render ``template`` with ``values`` (a missing key or ``None`` = does not exist)."""
    return render_nodes(parse(template).nodes, values)


def references(template: str) -> set[str]:
    """Every ``"type:name"`` the template refers to in variables or structural tags."""
    return set(parse(template).references)
