"""What a construct builds from, chosen only when a prompt is rendered.

A first turn, ``construct`` and ``compact`` render a template with a library; which
template and which library is the label's business (releases §2), decided *at that
moment*. The prompts app sits below the releases app and never imports it: its
services take a :class:`Chooser`, a function the caller (the API, the editor) gets
from ``sysprompt.releases.selectors.conversation_build``, and call it only when they
render — so a later turn, answered from the stored row, never looks a label up.

:func:`working_copy` is the chooser of a caller that names none: the current template
and the library's newest versions, recorded as built by ``production`` from
``latest`` (what a fresh install serves).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from sysprompt.library.selectors import library_source
from sysprompt.prompts.selectors import CurrentTemplate, template_current
from sysprompt_core.library import FragmentSource
from sysprompt_core.releases import PRODUCTION


@dataclass(frozen=True)
class Build:
    """The template and library a prompt is built from, and what the stored prompt
    records about them: the ``label``, the ``release`` (``None``: latest, the working
    copy) and the split ``arm`` (``None``: no split)."""

    template: CurrentTemplate
    library: FragmentSource
    label: str = PRODUCTION
    release: int | None = None
    arm: int | None = None


class Chooser(Protocol):
    """Chooses the :class:`Build` of a conversation about to be rendered, for its id
    and its owner (whose agent host's label applies when the call names none)."""

    def __call__(self, *, conversation_id: str, owner_id: int | None) -> Build: ...


def working_copy(*, conversation_id: str, owner_id: int | None) -> Build:
    """The working copy, as ``production → latest`` serves it on a fresh install."""
    return Build(template=template_current(), library=library_source())
