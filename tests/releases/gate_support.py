"""What the gate's tests share: production on release A ("tabs"), release B beside it,
a suite whose case passes on A, and runs executed in-process with the echo model (the
gate names it: a gate counts echo's runs only when it does)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User

from sysprompt.evaluations import services as evaluations
from sysprompt.evaluations.execution import run_execute
from sysprompt.evaluations.models import Run
from sysprompt.model_endpoints import ECHO
from sysprompt.prompts import services as prompts
from sysprompt.releases import services as releases

TABS = {"type": "contains", "value": "tabs"}
"""Passes when the echo model's answer (it quotes the prompt's first line) has tabs."""


@dataclass(frozen=True)
class Gated:
    """production on ``old`` and gated by suite ``style``; ``good`` keeps tabs, ``bad``
    loses them."""

    old: int
    good: int
    bad: int


def release_of(text: str) -> int:
    prompts.template_save(text=text)
    return releases.release_create(message=text, author=None).release.number


def gated(publisher: User, **gate: Any) -> Gated:
    old = release_of("Use tabs.")
    good = release_of("Use tabs, always.")
    bad = release_of("Use spaces.")
    evaluations.suite_create(name="style", author=None)
    add_case("indent", TABS)
    releases.label_set(
        name="production",
        target={"release": old},
        gate={"suite": "style", "models": [ECHO], **gate},
        author=publisher,
    )
    return Gated(old, good, bad)


def add_case(name: str, *checks: dict[str, Any], **fields: Any) -> None:
    """A case of suite ``style``: one user question, ``checks``."""
    evaluations.case_create(
        suite="style",
        fields={
            "name": name,
            "messages": [{"role": "user", "content": "?"}],
            "checks": list(checks),
            **fields,
        },
        author=None,
    )


def executed(
    candidate: object, baseline: object = None, suite: str = "style", **models: str
) -> Run:
    """A run of ``suite`` created and executed to its end (``models``: ``model``, or
    ``candidate_model`` and ``baseline_model``; left out: the default, echo)."""
    run = evaluations.run_create(
        suite=suite,
        candidate=candidate,
        baseline={"label": "production"} if baseline is None else baseline,
        author=None,
        **models,
    )
    run_execute(run.pk)
    return Run.objects.get(pk=run.pk)
