"""A named prompt's gated label through the releases services: the gate's suite is
looked up in the label's prompt, and only that prompt's runs let a move through
(``label_set`` once checked the suite in ``default`` and counted ``default``'s runs)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from sysprompt.errors import GateNotPassed, InvalidInput
from sysprompt.evaluations import services as evaluations
from sysprompt.model_endpoints import ECHO
from sysprompt.prompts import services as prompts
from sysprompt.prompts.models import Prompt
from sysprompt.releases import services
from sysprompt.releases.selectors import label_get
from tests.releases.gate_support import Gated, executed, gated
from tests.releases.support import AUTHOR, PUBLISH, user

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _roots(allowed_root: Path) -> None:
    services.production_ensure()


@pytest.fixture
def publisher(db: None) -> User:
    return user("publisher", AUTHOR, PUBLISH)


@pytest.fixture
def triage(publisher: User) -> Prompt:
    """support/triage: releases 1 to 3 of its own, production on release 1."""
    now = timezone.now()
    made = Prompt.objects.create(name="support/triage", created_at=now, updated_at=now)
    for text in ("Use tabs.", "Use tabs, always.", "Use spaces."):
        prompts.template_save(text=text, prompt=made)
        services.release_create(author=None, prompt=made)
    services.label_set(name="production", target={"release": 1}, author=publisher, prompt=made)
    return made


def test_gate_suite_is_looked_up_in_the_label_s_prompt(publisher: User, triage: Prompt) -> None:
    evaluations.suite_create(name="triage-style", author=None, prompt=triage)
    gate = {"suite": "triage-style", "models": [ECHO]}

    services.label_set(name="production", gate=gate, author=publisher, prompt=triage)

    assert label_get("production", prompt=triage).gate is not None
    with pytest.raises(InvalidInput, match="no suite 'triage-style'"):
        services.label_set(name="production", gate=gate, author=publisher)


def test_gate_move_ignores_another_prompt_s_passing_run(publisher: User, triage: Prompt) -> None:
    made: Gated = gated(publisher)  # default: production on release 1, gated by "style"
    assert (made.old, made.good) == (1, 2)
    passing = executed({"release": made.good})  # default's run, which passes its gate
    assert passing.summary is not None and passing.summary["regressions"] == 0
    evaluations.suite_create(name="style", author=None, prompt=triage)
    services.label_set(
        name="production",
        gate={"suite": "style", "models": [ECHO]},
        author=publisher,
        prompt=triage,
    )

    with pytest.raises(GateNotPassed):
        services.label_set(
            name="production", target={"release": 2}, author=publisher, prompt=triage
        )

    assert label_get("production", prompt=triage).target.as_json() == {"release": 1}
    services.label_set(name="production", target={"release": made.good}, author=publisher)
