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
from sysprompt.prompts.models import Prompt
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
    """Chooses the :class:`Build` of a conversation about to be rendered, for its id,
    its owner (whose agent host's label applies when the call names none) and the
    prompt it is (or is being) frozen from (``None``: ``default``; the services always
    pass it)."""

    def __call__(
        self, *, conversation_id: str, owner_id: int | None, prompt: Prompt | None = None
    ) -> Build: ...


def working_copy(
    *, conversation_id: str, owner_id: int | None, prompt: Prompt | None = None
) -> Build:
    """The prompt's working copy (``None``: ``default``'s), as ``production → latest``
    serves it on a fresh install."""
    return Build(template=template_current(prompt), library=library_source())
