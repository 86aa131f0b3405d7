"""A later turn with another cwd, model or provider gets the frozen prompt (the cache
promise) and is told: every prompt answer carries the frozen ``cwd``, ``model`` and
``provider``, and ``resolve`` says which of them this turn's differ from
(``context_mismatch``), still at one indexed read and no write."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

CONVERSATION = "/api/conversations/{}/system-prompt/{}"


def turn(client: APIClient, action: str, cwd: Path | str, **body: Any) -> Any:
    return client.post(CONVERSATION.format("c1", action), {"cwd": str(cwd), **body}, format="json")


@pytest.fixture
def frozen(agent_client: APIClient, workdir: Path) -> dict[str, Any]:
    first = turn(agent_client, "resolve", workdir, model="m-1", provider="openai")
    assert first.status_code == 201
    data: dict[str, Any] = first.json()
    return data


@pytest.mark.parametrize(
    ("body", "differs"),
    [
        ({"model": "m-1", "provider": "openai"}, []),
        ({}, []),  # a model or provider left out is no difference
        ({"cwd": "{workdir}/./", "model": "m-1"}, []),  # compared normalised
        ({"cwd": "{other}"}, ["cwd"]),
        ({"model": "m-2"}, ["model"]),
        ({"model": ""}, ["model"]),
        ({"provider": "anthropic", "model": "m-2", "cwd": "{other}"}, ["cwd", "model", "provider"]),
    ],
)
def test_resolve_later_turn_names_what_differs_from_the_frozen_context(
    agent_client: APIClient,
    workdir: Path,
    allowed_root: Path,
    frozen: dict[str, Any],
    body: dict[str, str],
    differs: list[str],
) -> None:
    other = allowed_root / "other"
    other.mkdir()
    cwd = body.pop("cwd", str(workdir)).format(workdir=workdir, other=other)

    with CaptureQueriesContext(connection) as queries:
        answer = turn(agent_client, "resolve", cwd, **body)

    assert answer.status_code == 200
    data = answer.json()
    assert data.pop("context_mismatch", []) == differs  # absent when nothing differs
    assert data == frozen
    assert (data["cwd"], data["model"], data["provider"]) == (str(workdir), "m-1", "openai")
    statements = [q["sql"].split()[0].upper() for q in queries.captured_queries]
    assert statements == ["SELECT", "SELECT"]  # the token, the stored prompt: no write


def test_every_prompt_answer_carries_the_frozen_context(
    agent_client: APIClient, workdir: Path, frozen: dict[str, Any]
) -> None:
    constructed = turn(agent_client, "construct", workdir, model="m-2").json()
    compacted = turn(agent_client, "compact", workdir, provider="anthropic").json()
    got = agent_client.get("/api/conversations/c1/system-prompt").json()

    assert (frozen["cwd"], frozen["model"], frozen["provider"]) == (str(workdir), "m-1", "openai")
    assert "context_mismatch" not in frozen
    assert (constructed["model"], constructed["provider"]) == ("m-2", "openai")
    # What a call leaves out is kept: the model of the construct, the provider given.
    assert (compacted["model"], compacted["provider"]) == ("m-2", "anthropic")
    assert (got["cwd"], got["model"], got["provider"]) == (str(workdir), "m-2", "anthropic")
    assert "context_mismatch" not in constructed and "context_mismatch" not in got
