"""A text tiktoken cannot count is a failed count, never a failed request (issue 31,
point 3), through the real API and database.

Sixteen ``[var:…]`` values of 65,000 spaces side by side: the counter cuts the run and
counts it (these tests' first case). With a counter that does not cut it
(:func:`uncut`), tiktoken really panics (``pyo3_runtime.PanicException``); the preview
and the impact report still answer 200, the counts null and ``tokens_error`` saying why.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from sysprompt_core import tokens
from tests.api.release_support import IMPACT, TEST_CONTEXTS, create_release, put_label

pytestmark = pytest.mark.django_db

PREVIEW = "/api/system-prompt/preview"
TEMPLATE = "".join(f"[var:v{n}]" for n in range(16)) + "end."
VARIABLES = {f"v{n}": " " * 65_000 for n in range(16)}


@pytest.fixture
def uncut(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process counts without cutting runs of whitespace: tiktoken gets the run."""
    counter = tokens.TokenCounter(run=10**7)
    monkeypatch.setattr(tokens, "_counter", lambda: counter)


def attack(client: APIClient, workdir: Path, **more: str) -> Any:
    body = {"cwd": str(workdir), "template": TEMPLATE, "variables": VARIABLES, **more}
    response = client.post(PREVIEW, body, format="json")
    assert response.status_code == 200, response.content[:300]
    return response.json()


@pytest.mark.parametrize("model", ["gpt-4o", "gpt-4", "qwen3"])
def test_preview_of_sixteen_runs_of_spaces_is_counted(
    author_client: APIClient, workdir: Path, model: str
) -> None:
    shown = attack(author_client, workdir, provider="openai", model=model)

    assert len(shown["system_prompt"]) == 65_000 * 16 + 4
    assert shown["system_prompt_tokens"] > 8000
    assert shown["tokens_error"] is None


@pytest.mark.usefixtures("uncut")
def test_preview_that_tiktoken_fails_on_answers_with_the_count_unavailable(
    author_client: APIClient, workdir: Path
) -> None:
    shown = attack(author_client, workdir, provider="openai", model="gpt-4o")

    assert len(shown["system_prompt"]) == 65_000 * 16 + 4
    assert (shown["system_prompt_tokens"], shown["shared_prefix_tokens"]) == (None, 0)
    assert shown["tokens_error"].startswith("tiktoken failed on a part of 1,040,004 characters")
    body = {"cwd": str(workdir), "template": "Hi there.", "provider": "openai", "model": "gpt-4o"}
    again = author_client.post(PREVIEW, body, format="json").json()
    assert (again["system_prompt_tokens"], again["tokens_error"]) == (3, None)


@pytest.mark.usefixtures("uncut")
def test_impact_report_that_tiktoken_fails_on_answers_with_the_counts_unavailable(
    publisher_client: APIClient, workdir: Path, production: None
) -> None:
    publisher_client.put("/api/system-prompt", {"template": TEMPLATE}, format="json")
    create_release(publisher_client)
    put_label(publisher_client, "production", {"release": 1})
    publisher_client.put("/api/system-prompt", {"template": TEMPLATE + "!"}, format="json")
    context = {"name": "ci", "cwd": str(workdir), "provider": "openai", "variables": VARIABLES}
    assert publisher_client.post(TEST_CONTEXTS, context, format="json").status_code == 201

    response = publisher_client.post(
        IMPACT, {"label": "production", "candidate": "latest"}, format="json"
    )

    assert response.status_code == 200, response.content[:300]
    [row] = response.json()["contexts"]
    assert row["changed"] and row["chars_after"] == 65_000 * 16 + 5
    assert (row["tokens_before"], row["tokens_after"]) == (None, None)
    assert row["tokens_error"].startswith("tiktoken failed on a part of")
