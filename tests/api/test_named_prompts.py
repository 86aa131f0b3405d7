"""Named prompts through the API (named prompts §1, §2, §4): each prompt's template,
conversations frozen from one prompt and scoped to their agent host, the host-addressed
routes, an agent host's default and allowed prompts, references of several prompts.

Real agent hosts (users in the "Agent hosts" group with their tokens) and prompt
authors call the real views; prompts are rows as the prompts API makes them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from sysprompt.accounts.services import agent_host_ensure
from sysprompt.events.models import AuditRecord
from sysprompt.prompts.models import ConversationPrompt, Prompt, PromptAlias, TemplateVersion
from tests.api.test_api import run_together
from tests.conftest import token_client
from tests.releases.support import AUTHOR, PUBLISH, user

pytestmark = pytest.mark.django_db

VIEW = "sysprompt.view_conversationprompt"
CHANGE = "sysprompt.change_conversationprompt"
DELETE = "sysprompt.delete_conversationprompt"


def prompt(name: str, **fields: Any) -> Prompt:
    now = timezone.now()
    return Prompt.objects.create(name=name, created_at=now, updated_at=now, **fields)


def host(name: str) -> tuple[User, APIClient]:
    made = agent_host_ensure(name=name)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {made.token}")
    return User.objects.get(username=name), client


def turn(
    client: APIClient, action: str, cwd: Path, conversation_id: str = "conv-42", **body: Any
) -> Any:
    return client.post(
        f"/api/conversations/{conversation_id}/system-prompt/{action}",
        {"cwd": str(cwd), **body},
        format="json",
    )


def host_turn(
    client: APIClient, username: str, action: str, cwd: Path, conversation_id: str, **body: Any
) -> Any:
    return client.post(
        f"/api/agent-hosts/{username}/conversations/{conversation_id}/system-prompt/{action}",
        {"cwd": str(cwd), **body},
        format="json",
    )


def put_template(client: APIClient, name: str | None, text: str, **headers: str) -> Any:
    path = "/api/system-prompt" if name is None else f"/api/prompts/{name}/-/system-prompt"
    return client.put(path, {"template": text}, format="json", headers=headers)


@pytest.fixture
def author() -> User:
    return user("ada", AUTHOR, PUBLISH, VIEW, CHANGE, DELETE)


@pytest.fixture
def ada(author: User) -> APIClient:
    return token_client(author)


@pytest.fixture
def support(ada: APIClient) -> Prompt:
    """support/triage, with a template of its own."""
    made = prompt("support/triage")
    assert put_template(ada, "support/triage", "Triage tickets in [prompt:cwd].").status_code == 200
    return made


# --- each prompt's template ---------------------------------------------------------------


def test_template_of_a_prompt_saves_and_lists_its_own_versions(
    ada: APIClient, support: Prompt
) -> None:
    put_template(ada, None, "The default one.")
    saved = put_template(ada, "support/triage", "Triage, again.")

    mine = ada.get("/api/prompts/support/triage/-/system-prompt/versions").json()["results"]
    default = ada.get("/api/system-prompt/versions").json()["results"]

    assert saved.json()["version"] == 3  # numbers count across the deployment
    assert [v["version"] for v in mine] == [3, 1]
    assert [v["version"] for v in default] == [2]
    assert ada.get("/api/system-prompt").json()["template"] == "The default one."
    got = ada.get("/api/prompts/support/triage/-/system-prompt")
    assert got.json()["template"] == "Triage, again."
    assert got.headers["ETag"] == saved.headers["ETag"]


def test_template_if_match_is_per_prompt_when_another_prompt_saves_between(
    ada: APIClient, support: Prompt
) -> None:
    etag = ada.get("/api/prompts/support/triage/-/system-prompt").headers["ETag"]
    put_template(ada, None, "Someone saves default meanwhile.")

    kept = put_template(ada, "support/triage", "Mine.", **{"If-Match": etag})
    stale = put_template(ada, "support/triage", "Stale.", **{"If-Match": etag})

    assert kept.status_code == 200
    assert stale.status_code == 412
    assert stale.headers["ETag"] == kept.headers["ETag"]
    assert TemplateVersion.objects.filter(prompt=support).count() == 2


def test_template_of_a_restricted_prompt_is_403_for_a_non_member_and_changes_nothing(
    support: Prompt,
) -> None:
    support.editor_groups.add(Group.objects.create(name="support-team"))
    outsider = token_client(user("bob", AUTHOR))
    before = list(TemplateVersion.objects.values_list("number", "text"))

    refused = put_template(outsider, "support/triage", "Hijacked.")
    bad_body = outsider.put(
        "/api/prompts/support/triage/-/system-prompt", {"template": 3}, format="json"
    )

    assert refused.status_code == 403
    assert "support-team" in refused.json()["detail"]
    assert bad_body.status_code == 403  # permission before validation
    assert list(TemplateVersion.objects.values_list("number", "text")) == before
    refusals = AuditRecord.objects.filter(action="prompt.refused", prompt="support/triage")
    assert [record.actor for record in refusals] == ["bob", "bob"]  # who tried, each time
    member = user("carol", AUTHOR)
    member.groups.add(Group.objects.get(name="support-team"))
    assert put_template(token_client(member), "support/triage", "Allowed.").status_code == 200


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/api/prompts/Support/-/system-prompt", 400),
        ("/api/prompts/a..b%20c/-/system-prompt", 400),
        ("/api/prompts/nobody/-/system-prompt", 404),
        ("/api/prompts/nobody/-/system-prompt/versions", 404),
        ("/api/prompts/nobody/-/system-prompt/variables", 404),
        ("/api/prompts/nobody/-/system-prompt/references", 404),
    ],
)
def test_template_routes_refuse_a_prompt_name_when_bad_or_unknown(
    ada: APIClient, path: str, status: int
) -> None:
    response = ada.get(path)

    assert response.status_code == status
    if status == 400:
        assert list(response.json()) == ["prompt"]


def test_preview_of_a_prompt_renders_its_own_template(
    ada: APIClient, support: Prompt, workdir: Path
) -> None:
    response = ada.post(
        "/api/prompts/support/triage/-/system-prompt/preview",
        {"cwd": str(workdir)},
        format="json",
    )

    assert response.status_code == 200
    assert response.json()["system_prompt"] == f"Triage tickets in {workdir}."


# --- conversations frozen from one prompt ---------------------------------------------------


def test_two_prompts_with_different_templates_resolve_differently(
    ada: APIClient, support: Prompt, workdir: Path
) -> None:
    put_template(ada, None, "Code in [prompt:cwd].")
    _, client = host("bot")

    coding = turn(client, "resolve", workdir, "c-1")
    triage = turn(client, "resolve", workdir, "c-2", prompt="support/triage")

    assert (coding.status_code, triage.status_code) == (201, 201)
    assert (coding.json()["prompt"], coding.json()["system_prompt"]) == (
        "default",
        f"Code in {workdir}.",
    )
    assert (triage.json()["prompt"], triage.json()["system_prompt"]) == (
        "support/triage",
        f"Triage tickets in {workdir}.",
    )
    listed = ada.get("/api/conversations", {"prompt": "support/triage"}).json()["results"]
    assert [(row["conversation_id"], row["prompt"], row["host"]) for row in listed] == [
        ("c-2", "support/triage", "bot")
    ]


def test_later_turn_naming_another_prompt_is_409_naming_both(
    support: Prompt, workdir: Path
) -> None:
    _, client = host("bot")
    first = turn(client, "resolve", workdir, prompt="support/triage")

    same = turn(client, "resolve", workdir, prompt="support/triage")
    unnamed = turn(client, "resolve", workdir)
    other = turn(client, "resolve", workdir, prompt="default")
    construct = turn(client, "construct", workdir, prompt="default")

    assert (same.status_code, unnamed.status_code) == (200, 200)
    assert same.json()["system_prompt"] == first.json()["system_prompt"]
    assert other.status_code == 409
    assert "'support/triage'" in other.json()["detail"] and "'default'" in other.json()["detail"]
    assert construct.status_code == 409
    assert ConversationPrompt.objects.get().prompt_id == support.pk


def test_later_turn_naming_a_former_name_of_its_prompt_answers(
    support: Prompt, workdir: Path
) -> None:
    _, client = host("bot")
    first = turn(client, "resolve", workdir, prompt="support/triage")
    support.name = "support/inbox"
    support.save()
    PromptAlias.objects.create(name="support/triage", prompt=support, created_at=timezone.now())

    later = turn(client, "resolve", workdir, prompt="support/triage")

    assert later.status_code == 200
    assert later.json() == {**first.json(), "prompt": "support/inbox"}


def test_archived_prompt_is_410_for_a_new_conversation_but_answers_later_turns(
    support: Prompt, workdir: Path
) -> None:
    _, client = host("bot")
    first = turn(client, "resolve", workdir, "old", prompt="support/triage")
    support.archived = True
    support.save()

    refused = turn(client, "resolve", workdir, "new", prompt="support/triage")
    later = turn(client, "resolve", workdir, "old", prompt="support/triage")

    assert refused.status_code == 410
    assert "support/triage" in refused.json()["detail"]
    assert (later.status_code, later.json()) == (200, first.json())
    assert not ConversationPrompt.objects.filter(conversation_id="new").exists()


@pytest.mark.parametrize(("name", "status"), [("Not A Name", 400), ("nobody/here", 404)])
def test_resolve_refuses_a_prompt_when_bad_or_unknown_and_stores_nothing(
    workdir: Path, name: str, status: int
) -> None:
    _, client = host("bot")

    response = turn(client, "resolve", workdir, prompt=name)

    assert response.status_code == status
    if status == 400:
        assert list(response.json()) == ["prompt"]
    assert not ConversationPrompt.objects.exists()


def test_later_turn_makes_no_query_for_its_prompt(support: Prompt, workdir: Path) -> None:
    bot, client = host("bot")
    turn(client, "resolve", workdir, prompt="support/triage")
    turn(client, "resolve", workdir, prompt="support/triage")  # the token is cached now

    with CaptureQueriesContext(connection) as unnamed:
        turn(client, "resolve", workdir)
    with CaptureQueriesContext(connection) as named:
        turn(client, "resolve", workdir, prompt="support/triage")

    assert len(named.captured_queries) == len(unnamed.captured_queries)
    assert not any('sysprompt_prompt" WHERE' in q["sql"] for q in named.captured_queries)
    assert not any("sysprompt_hostprompts" in q["sql"] for q in named.captured_queries)


# --- agent hosts: ids scoped to the host, default and allowed prompts ----------------------


def test_two_hosts_both_using_conv_42_each_get_and_see_their_own(
    support: Prompt, workdir: Path, allowed_root: Path
) -> None:
    coder, coding = host("coder")
    _, helpdesk = host("helpdesk")
    other = allowed_root / "other"
    other.mkdir()

    mine = turn(coding, "resolve", workdir)
    theirs = turn(helpdesk, "resolve", other, prompt="support/triage")

    assert (mine.status_code, theirs.status_code) == (201, 201)
    assert theirs.json()["system_prompt"] == f"Triage tickets in {other}."
    assert coding.get("/api/conversations/conv-42/system-prompt").json() == mine.json()
    assert helpdesk.get("/api/conversations/conv-42/system-prompt").json() == theirs.json()
    assert turn(coding, "resolve", workdir).json() == mine.json()
    assert [r["conversation_id"] for r in coding.get("/api/conversations").json()["results"]] == [
        "conv-42"
    ]
    assert helpdesk.delete("/api/conversations/conv-42/system-prompt").status_code == 204
    assert ConversationPrompt.objects.get().owner_id == coder.pk


def test_author_addresses_conv_42_by_host_and_gets_409_without_one(
    ada: APIClient, support: Prompt, workdir: Path
) -> None:
    _, coding = host("coder")
    _, helpdesk = host("helpdesk")
    mine = turn(coding, "resolve", workdir)
    theirs = turn(helpdesk, "resolve", workdir, prompt="support/triage")

    ambiguous = ada.get("/api/conversations/conv-42/system-prompt")
    by_host = ada.get("/api/agent-hosts/helpdesk/conversations/conv-42/system-prompt")
    deleted = ada.delete("/api/agent-hosts/coder/conversations/conv-42/system-prompt")
    now_one = ada.get("/api/conversations/conv-42/system-prompt")

    assert ambiguous.status_code == 409
    assert ambiguous.json()["hosts"] == ["coder", "helpdesk"]
    assert "coder" in ambiguous.json()["detail"] and "helpdesk" in ambiguous.json()["detail"]
    assert by_host.json() == theirs.json()
    assert deleted.status_code == 204
    assert now_one.json() == theirs.json()
    assert mine.json()["prompt"] == "default"


@pytest.mark.parametrize("action", ["resolve", "construct", "compact"])
def test_author_turns_by_host_act_on_that_hosts_conversation(
    ada: APIClient, support: Prompt, workdir: Path, action: str
) -> None:
    helper, helpdesk = host("helpdesk")
    _, coding = host("coder")
    turn(coding, "resolve", workdir)
    frozen = turn(helpdesk, "resolve", workdir, prompt="support/triage").json()

    response = host_turn(ada, "helpdesk", action, workdir, "conv-42")
    missing = host_turn(ada, "helpdesk", action, workdir, "fresh", prompt="support/triage")

    assert response.status_code == 200
    assert response.json()["prompt"] == "support/triage"
    if action == "resolve":
        assert response.json() == frozen
    assert missing.status_code == 201  # made for the host: its conversation, its prompt
    assert ConversationPrompt.objects.get(conversation_id="fresh").owner_id == helper.pk
    assert host_turn(ada, "nobody", action, workdir, "conv-42").status_code == 404


def test_host_route_of_another_host_is_404_for_a_host_and_creates_nothing(
    workdir: Path,
) -> None:
    _, coding = host("coder")
    _, helpdesk = host("helpdesk")
    turn(helpdesk, "resolve", workdir)

    read = coding.get("/api/agent-hosts/helpdesk/conversations/conv-42/system-prompt")
    made = host_turn(coding, "helpdesk", "resolve", workdir, "new-one")

    assert (read.status_code, made.status_code) == (404, 404)
    assert ConversationPrompt.objects.count() == 1


def test_host_prompts_default_and_allowed_decide_a_new_conversations_prompt(
    ada: APIClient, support: Prompt, workdir: Path
) -> None:
    prompt("support/refunds")
    prompt("coding/reviewer")
    _, client = host("helpdesk")

    put = ada.put(
        "/api/agent-hosts/helpdesk/prompts",
        {"default": "support/triage", "allowed": ["support/"]},
        format="json",
    )
    defaulted = turn(client, "resolve", workdir, "t-1")
    in_folder = turn(client, "resolve", workdir, "t-2", prompt="support/refunds")
    outside = turn(client, "resolve", workdir, "t-3", prompt="coding/reviewer")
    unknown = turn(client, "resolve", workdir, "t-4", prompt="coding/nobody")

    assert put.status_code == 200
    assert put.json() | {"updated_at": None} == {
        "username": "helpdesk",
        "default": "support/triage",
        "allowed": ["support/"],
        "updated_at": None,
        "updated_by": "ada",
    }
    assert ada.get("/api/agent-hosts/helpdesk/prompts").json() == put.json()
    assert defaulted.json()["prompt"] == "support/triage"
    assert in_folder.json()["prompt"] == "support/refunds"
    assert (outside.status_code, outside.json()) == (
        404,
        {"detail": "There is no prompt named 'coding/reviewer'."},
    )
    assert (unknown.status_code, unknown.json()) == (
        404,
        {"detail": "There is no prompt named 'coding/nobody'."},
    )
    assert sorted(ConversationPrompt.objects.values_list("conversation_id", flat=True)) == [
        "t-1",
        "t-2",
    ]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"default": "Bad Name"}, "default"),
        ({"default": "nobody"}, "default"),
        ({"allowed": ["nobody"]}, "allowed"),
        ({"allowed": ["Bad/"]}, "allowed"),
        ({"allowed": "support/"}, "allowed"),
        ({"default": "support/triage", "allowed": ["coding/"]}, "default"),
    ],
)
def test_host_prompts_put_refuses_a_name_naming_the_field_and_writes_nothing(
    ada: APIClient, support: Prompt, body: dict[str, Any], field: str
) -> None:
    host("helpdesk")

    response = ada.put("/api/agent-hosts/helpdesk/prompts", body, format="json")

    assert response.status_code == 400
    assert list(response.json()) == [field]
    assert ada.get("/api/agent-hosts/helpdesk/prompts").json()["updated_at"] is None


def test_host_prompts_are_for_prompt_authors_and_known_hosts(ada: APIClient) -> None:
    _, client = host("helpdesk")

    assert client.get("/api/agent-hosts/helpdesk/prompts").status_code == 403
    assert client.put("/api/agent-hosts/helpdesk/prompts", {}, format="json").status_code == 403
    assert ada.get("/api/agent-hosts/nobody/prompts").status_code == 404
    unprotected = token_client(user("eve", AUTHOR))  # production is protected: publishers only
    assert unprotected.put("/api/agent-hosts/helpdesk/prompts", {}, format="json").status_code == (
        403
    )


# --- references of several prompts -----------------------------------------------------------


def test_references_of_several_prompts_answer_in_one_request(
    ada: APIClient, support: Prompt
) -> None:
    put_template(ada, None, "[git:branch] [var:team]")
    put_template(ada, "support/triage", "[file:README.md]")
    _, client = host("helpdesk")

    one = client.get("/api/system-prompt/references").json()
    both = client.get("/api/system-prompt/references", {"prompt": ["default", "support/triage"]})
    scoped = client.get("/api/prompts/support/triage/-/system-prompt/references")

    assert one["references"] == ["git:branch", "var:team"]
    assert both.status_code == 200
    assert set(both.json()["prompts"]) == {"default", "support/triage"}
    assert both.json()["prompts"]["default"] == one
    assert both.json()["prompts"]["support/triage"] == scoped.json()
    assert scoped.json()["references"] == ["file:README.md"]
    assert both.headers["ETag"] != scoped.headers["ETag"]
    again = client.get(
        "/api/system-prompt/references",
        {"prompt": ["default", "support/triage"]},
        headers={"If-None-Match": both.headers["ETag"]},
    )
    assert again.status_code == 304


def test_references_of_a_prompt_outside_the_hosts_allowed_list_is_404(
    ada: APIClient, support: Prompt
) -> None:
    _, client = host("helpdesk")
    ada.put(
        "/api/agent-hosts/helpdesk/prompts",
        {"default": "support/triage", "allowed": ["support/triage"]},
        format="json",
    )

    own_default = client.get("/api/system-prompt/references")
    refused = client.get("/api/system-prompt/references", {"prompt": ["support/triage", "default"]})
    bad = client.get("/api/system-prompt/references", {"prompt": ["Bad Name"]})
    both = client.get(
        "/api/prompts/support/triage/-/system-prompt/references", {"prompt": ["default"]}
    )

    assert own_default.json()["references"] == ["prompt:cwd"]  # its default prompt's
    assert refused.status_code == 404
    assert (bad.status_code, list(bad.json())) == (400, ["prompt"])
    assert (both.status_code, list(both.json())) == (400, ["prompt"])


# --- concurrent saves of two prompts: numbers count across the deployment ---------------------


@pytest.mark.django_db(transaction=True)
def test_concurrent_if_match_saves_of_two_prompts_one_wins_each_with_unique_numbers() -> None:
    author = user("ada", AUTHOR)
    first, second = prompt("one"), prompt("two")
    client = token_client(author)
    etags = {
        name: client.get(f"/api/prompts/{name}/-/system-prompt").headers["ETag"]
        for name in ("one", "two")
    }
    key = f"Token {Token.objects.get(user=author).key}"

    def save(index: int) -> tuple[str, int]:
        name = "one" if index % 2 else "two"
        response = Client().put(
            f"/api/prompts/{name}/-/system-prompt",
            {"template": f"writer {index}"},
            content_type="application/json",
            headers={"Authorization": key, "If-Match": etags[name]},
        )
        return name, response.status_code

    results = run_together(12, save)

    for name in ("one", "two"):  # another prompt's save never makes If-Match stale
        assert sorted(code for who, code in results if who == name) == [200] + [412] * 5
    numbers = list(TemplateVersion.objects.values_list("number", flat=True))
    assert sorted(numbers) == [1, 2]
    assert TemplateVersion.objects.filter(prompt=first).count() == 1
    assert TemplateVersion.objects.filter(prompt=second).count() == 1


def test_instance_override_of_a_host_applies_to_its_own_prompt_only(
    ada: APIClient, support: Prompt, workdir: Path
) -> None:
    put_template(ada, None, "Code in [prompt:cwd].")
    _, client = host("bot")
    put = ada.put(
        "/api/agent-hosts/bot/override?prompt=support/triage",
        {"override": {"content": "Be kind to customers.", "strategy": "append"}},
        format="json",
    )
    assert put.status_code == 200, put.json()

    coding = turn(client, "resolve", workdir, "c-1").json()["system_prompt"]
    triage = turn(client, "resolve", workdir, "c-2", prompt="support/triage").json()

    assert "Be kind to customers." not in coding
    assert triage["system_prompt"].endswith("Be kind to customers.")
