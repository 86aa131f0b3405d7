"""An evaluation run whose prompt tiktoken cannot count shows its results all the same,
the count "unavailable" with the reason (issue 31, point 3): the run's page and its
results through the API, with a counter that does not cut runs of whitespace so that
tiktoken really panics (the echo model, run in-process)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import User

from sysprompt.evaluations import results, services
from sysprompt.evaluations.execution import run_execute
from sysprompt.evaluations.models import Run
from sysprompt.prompts import services as prompts
from sysprompt.releases import services as releases
from sysprompt_core import tokens
from tests.editor.library_support import web
from tests.releases.support import AUTHOR, PUBLISH, user

pytestmark = pytest.mark.django_db

TEMPLATE = "".join(f"[var:v{n}]" for n in range(16)) + "end."
VARIABLES = {f"v{n}": " " * 65_000 for n in range(16)}


@pytest.fixture
def uncut(monkeypatch: pytest.MonkeyPatch) -> None:
    counter = tokens.TokenCounter(run=10**7)
    monkeypatch.setattr(tokens, "_counter", lambda: counter)


def test_evaluation_results_show_tokens_unavailable_when_tiktoken_fails(
    author: User, workdir: Path, uncut: None
) -> None:
    releases.production_ensure()
    prompts.template_save(text="Be brief.")
    number = releases.release_create(message="first", author=None).release.number
    publisher = user("publisher", AUTHOR, PUBLISH)
    releases.label_set(name="production", target={"release": number}, author=publisher)
    prompts.template_save(text=TEMPLATE)
    services.suite_create(name="style", author=author)
    fields = {
        "name": "spaces",
        "messages": [{"role": "user", "content": "q"}],
        "checks": [{"type": "max_chars", "value": 500}],
        "context": {"cwd": str(workdir), "variables": VARIABLES},
    }
    services.case_create(suite="style", fields=fields, author=None)
    run = services.run_create(suite="style", candidate="latest", author=author, model="echo")
    assert run_execute(run.pk) == "finished"

    [result] = results.run_results_json(Run.objects.get(pk=run.pk))
    html = web(author).get(f"/evaluations/runs/{run.pk}/").content.decode()

    candidate = result["candidate"]["counted"]
    assert candidate["prompt_tokens"] is None
    assert candidate["error"].startswith("tiktoken failed on a part of")
    assert result["baseline"]["counted"]["prompt_tokens"] == 3  # "Be brief." counted
    assert "candidate's prompt tokens unavailable" in html
