"""A lint hint for the shared prefix: a per-conversation value that comes too early.

The part of a prompt before its first per-conversation value is the same for every
conversation of an agent host, so providers can cache it; everything after it is sent
again, uncached, for each conversation. :func:`early_prefix_end` looks at the source
as written (all branches, fragments not followed: their values are theirs) and
finds the first tag — a variable or the ``[if]`` of a block, not literal text — whose
key varies (the caller's vocabulary, as for rendering). It gives a warning there when
that tag comes before :data:`EARLY_SHARE` of the template's literal text and more than
:data:`EARLY_MIN_AFTER` characters of literal text follow it: moving it later would
let those characters be cached.
"""

from __future__ import annotations

from sysprompt_core.template.lexer import tokenize
from sysprompt_core.template.lint import Diagnostic
from sysprompt_core.template.parser import parse
from sysprompt_core.template.prefix import Varies

__all__ = ["EARLY_MIN_AFTER", "EARLY_SHARE", "early_prefix_end"]

EARLY_SHARE = 0.8
"""A per-conversation tag is early when less than this share of the literal text comes
before it."""
EARLY_MIN_AFTER = 1000
"""…and more than this many characters of literal text come after it."""


def early_prefix_end(source: str, varies: Varies) -> Diagnostic | None:
    """The hint for ``source`` (see the module docstring), or ``None``."""
    literal = {finding.ordinal for finding in parse(source).findings}
    tags = list(tokenize(source))
    structural = sum(len(tag.text) for ordinal, tag in enumerate(tags) if ordinal not in literal)
    total = len(source) - structural
    seen = 0  # characters of the structural tags before the current one
    for ordinal, tag in enumerate(tags):
        if ordinal in literal:
            continue
        if tag.key is not None and varies(tag.key):
            before = tag.start - seen
            after = total - before
            if before >= EARLY_SHARE * total or after <= EARLY_MIN_AFTER:
                return None
            return Diagnostic(
                tag.line,
                tag.column,
                tag.column + len(tag.text),
                "warning",
                f"the shared prefix ends here at {tag.text}; {after:,} characters after "
                "it are re-sent uncached for each conversation: move it later",
            )
        seen += len(tag.text)
    return None
