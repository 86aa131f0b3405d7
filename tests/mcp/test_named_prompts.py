"""``/mcp`` and named prompts: the ``prompt`` argument of ``system-prompt`` and its tools
(a later turn naming another prompt is the API's 409), ``prompt/<name>`` in
``prompts/list`` for the prompts the caller may use (an agent host's allowed ones, none
archived), and the ``list_prompts`` tool. In this process, on the test database."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from sysprompt.prompts import selectors, services
from sysprompt.prompts.models import HostPrompts, Prompt
from tests.mcp.test_endpoint import mcp_post, request

TRIAGE = "support/triage"


def prompt_make(name: str, template: str, *, archived: bool = False) -> Prompt:
    now = timezone.now()
    made = Prompt.objects.create(
        name=name, description=f"The {name} agent.", created_at=now, updated_at=now
    )
    services.template_save(text=template, prompt=made)
    if archived:
        Prompt.objects.filter(pk=made.pk).update(archived=True)
    return made


@pytest.fixture
def named(db: None) -> None:
    prompt_make(TRIAGE, "Triage tickets in [prompt:cwd].")
    prompt_make("support/old", "Old.", archived=True)
    prompt_make("coding/reviewer", "Review.")


def result(user: User, method: str, params: dict[str, Any] | None = None) -> Any:
    status, _, body = mcp_post(Client(), user, request(method, params))
    assert status == 200, body
    return body.get("result", body.get("error"))


def get_prompt(user: User, name: str, **arguments: str) -> Any:
    return result(user, "prompts/get", {"name": name, "arguments": arguments})


@pytest.mark.django_db
def test_mcp_system_prompt_prompt_argument_freezes_the_conversation_from_it(
    named: None, agent_host: User, workdir: Path
) -> None:
    first = get_prompt(
        agent_host, "system-prompt", conversation_id="m-1", cwd=str(workdir), prompt=TRIAGE
    )
    later = get_prompt(agent_host, "system-prompt", conversation_id="m-1", prompt=TRIAGE)
    refused = get_prompt(
        agent_host, "system-prompt", conversation_id="m-1", cwd=str(workdir), prompt="default"
    )
    refused_stored = get_prompt(
        agent_host, "system-prompt", conversation_id="m-1", prompt="default"
    )

    stored = selectors.conversation_prompt_get("m-1", agent_host.pk)
    assert stored is not None and stored.prompt.name == TRIAGE
    assert first["messages"][0]["content"]["text"] == f"Triage tickets in {workdir}."
    assert later["messages"] == first["messages"]
    assert f"prompt {TRIAGE}" in first["description"]
    for error in (refused, refused_stored):
        assert error["data"] == {"status": 409}
        assert TRIAGE in error["message"] and "default" in error["message"]


@pytest.mark.django_db
def test_mcp_tool_prompt_argument_and_answer(named: None, agent_host: User, workdir: Path) -> None:
    arguments = {"conversation_id": "m-2", "cwd": str(workdir), "prompt": TRIAGE}

    got = result(agent_host, "tools/call", {"name": "get_system_prompt", "arguments": arguments})
    unknown = result(
        agent_host,
        "tools/call",
        {
            "name": "get_system_prompt",
            "arguments": {**arguments, "conversation_id": "m-2u", "prompt": "support/nope"},
        },
    )
    archived = result(
        agent_host,
        "tools/call",
        {
            "name": "get_system_prompt",
            "arguments": {**arguments, "conversation_id": "m-2a", "prompt": "support/old"},
        },
    )

    assert got["structuredContent"]["prompt"] == TRIAGE
    assert got["structuredContent"]["text"] == f"Triage tickets in {workdir}."
    assert unknown["isError"] and unknown["structuredContent"]["status"] == 404
    assert archived["isError"] and archived["structuredContent"]["status"] == 410


@pytest.mark.django_db
def test_mcp_prompts_list_and_list_prompts_show_what_the_caller_may_use(
    named: None, agent_host: User, author: User, workdir: Path
) -> None:
    HostPrompts.objects.create(user=agent_host, allowed=["support/"], updated_at=timezone.now())

    hosts = [p["name"] for p in result(agent_host, "prompts/list")["prompts"]]
    authors = [p["name"] for p in result(author, "prompts/list")["prompts"]]
    listed = result(agent_host, "tools/call", {"name": "list_prompts", "arguments": {}})
    answer = get_prompt(agent_host, f"prompt/{TRIAGE}", conversation_id="m-3", cwd=str(workdir))

    assert [name for name in hosts if name.startswith("prompt/")] == [f"prompt/{TRIAGE}"]
    assert [name for name in authors if name.startswith("prompt/")] == [
        "prompt/coding/reviewer",
        "prompt/default",
        f"prompt/{TRIAGE}",
    ]
    assert listed["structuredContent"] == {
        "prompts": [{"name": TRIAGE, "description": f"The {TRIAGE} agent.", "tags": []}]
    }
    assert answer["messages"][0]["content"]["text"] == f"Triage tickets in {workdir}."


@pytest.mark.django_db
def test_mcp_prompts_list_with_default_alone_is_todays(agent_host: User) -> None:
    names = [p["name"] for p in result(agent_host, "prompts/list")["prompts"]]

    assert not any(name.startswith("prompt/") for name in names)
    assert names[0] == "system-prompt"
