"""Suites, cases and runs belong to a prompt (named-prompts §2, §4): the same operations
under ``/api/prompts/{prompt}/-/suites…``, ``"prompt"`` in ``POST /api/evaluations``
(its sides are that prompt's releases and labels), ``?prompt=`` on the runs, a gate
counting only its own prompt's runs, ``from_conversation`` naming a host, and a
restricted prompt's suites refused to non-members (403, audited, nothing written)."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Group, Permission, User
from django.utils import timezone
from rest_framework.test import APIClient

from sysprompt.evaluations.gate import RunEvidence, gate_runs
from sysprompt.evaluations.models import Run, Suite
from sysprompt.events.models import AuditRecord
from sysprompt.prompts.catalog import default_prompt
from sysprompt.prompts.models import ConversationPrompt, FolderRestriction, Prompt
from sysprompt.releases.gates import Gate
from sysprompt.releases.services import release_create
from sysprompt_core.releases import Single
from tests.api.evaluation_support import EVALUATIONS, case_body, make_suite, stored

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("production")]

TRIAGE = "support/triage"
IN_TRIAGE = f"/api/prompts/{TRIAGE}/-/suites"


def named(name: str) -> Prompt:
    now = timezone.now()
    return Prompt.objects.create(name=name, created_at=now, updated_at=now)


@pytest.fixture
def triage() -> Prompt:
    return named(TRIAGE)


def _suite_in(client: APIClient, base: str, name: str, *cases: dict[str, Any]) -> None:
    assert client.post(base, {"name": name}, format="json").status_code == 201
    for body in cases:
        answer = client.post(f"{base}/{name}/cases", body, format="json")
        assert answer.status_code == 201, answer.json()


def test_suites_of_two_prompts_with_one_name_are_apart(
    author_client: APIClient, triage: Prompt
) -> None:
    make_suite(author_client, "smoke", case_body("default-case"))
    _suite_in(author_client, IN_TRIAGE, "smoke", case_body("triage-case"))

    default_list = author_client.get("/api/suites").json()["results"]
    triage_list = author_client.get(IN_TRIAGE).json()["results"]
    default_cases = author_client.get("/api/suites/smoke/cases").json()["results"]
    triage_cases = author_client.get(f"{IN_TRIAGE}/smoke/cases").json()["results"]
    on_default_route = author_client.get("/api/prompts/default/-/suites").json()["results"]

    assert [(s["prompt"], s["name"]) for s in default_list] == [("default", "smoke")]
    assert [(s["prompt"], s["name"]) for s in triage_list] == [(TRIAGE, "smoke")]
    assert on_default_route == default_list
    assert [c["name"] for c in default_cases] == ["default-case"]
    assert [c["name"] for c in triage_cases] == ["triage-case"]
    assert set(Suite.objects.values_list("prompt__name", "name")) == {
        ("default", "smoke"),
        (TRIAGE, "smoke"),
    }


def test_suite_delete_in_one_prompt_leaves_the_other(
    author_client: APIClient, triage: Prompt
) -> None:
    make_suite(author_client, "smoke")
    _suite_in(author_client, IN_TRIAGE, "smoke")

    deleted = author_client.delete(f"{IN_TRIAGE}/smoke")

    assert deleted.status_code == 204
    assert list(Suite.objects.values_list("prompt__name", flat=True)) == ["default"]


@pytest.mark.parametrize(
    ("path", "status", "field"),
    [
        ("/api/prompts/nowhere/-/suites", 404, None),
        ("/api/prompts/Bad Name/-/suites", 400, "prompt"),
        (f"/api/prompts/{'x' * 65}/-/suites", 400, "prompt"),
    ],
)
def test_suite_create_in_an_unknown_or_bad_prompt_is_refused_and_stores_nothing(
    author_client: APIClient, path: str, status: int, field: str | None
) -> None:
    before = stored()

    answer = author_client.post(path, {"name": "smoke"}, format="json")

    assert answer.status_code == status
    if field is not None:
        assert field in answer.json()
    assert stored() == before


def test_run_of_a_prompt_refuses_a_release_that_only_another_prompt_has(
    author_client: APIClient, triage: Prompt, author: User
) -> None:
    number = release_create(author=author).release.number  # a release of default only
    _suite_in(author_client, IN_TRIAGE, "smoke", case_body("one"))
    make_suite(author_client, "smoke", case_body("one"))
    before = stored()

    refused = author_client.post(
        EVALUATIONS,
        {"prompt": TRIAGE, "suite": "smoke", "candidate": number, "model": "echo"},
        format="json",
    )
    refused_plan = author_client.post(
        f"{EVALUATIONS}/plan",
        {"prompt": TRIAGE, "suite": "smoke", "candidate": {"release": number}},
        format="json",
    )

    assert refused.status_code == 400
    assert "candidate" in refused.json()
    assert TRIAGE in refused.json()["candidate"][0]
    assert refused_plan.status_code == 400
    assert "candidate" in refused_plan.json()
    assert stored() == before
    started = author_client.post(
        EVALUATIONS, {"suite": "smoke", "candidate": number, "model": "echo"}, format="json"
    )
    assert started.status_code == 202
    assert started.json()["prompt"] == "default"


def test_run_of_a_prompt_uses_its_suite_and_is_listed_with_prompt(
    author_client: APIClient, triage: Prompt
) -> None:
    make_suite(author_client, "smoke", case_body("one"))
    _suite_in(author_client, IN_TRIAGE, "smoke", case_body("two"), case_body("three"))

    in_default = author_client.post(
        EVALUATIONS, {"suite": "smoke", "candidate": "latest"}, format="json"
    ).json()
    in_triage = author_client.post(
        EVALUATIONS, {"prompt": TRIAGE, "suite": "smoke", "candidate": "latest"}, format="json"
    )
    plan = author_client.post(
        f"{EVALUATIONS}/plan",
        {"prompt": TRIAGE, "suite": "smoke", "candidate": "latest"},
        format="json",
    ).json()

    assert in_triage.status_code == 202
    assert in_triage.json()["prompt"] == TRIAGE
    assert (plan["prompt"], plan["cases"]) == (TRIAGE, 2)
    run = Run.objects.get(pk=in_triage.json()["id"])
    assert run.suite is not None
    assert (run.prompt.name, run.suite.prompt.name) == (TRIAGE, TRIAGE)
    everything = author_client.get(EVALUATIONS).json()["results"]
    only_triage = author_client.get(EVALUATIONS, {"prompt": TRIAGE}).json()["results"]
    only_default = author_client.get(EVALUATIONS, {"prompt": "default"}).json()["results"]
    assert [(r["id"], r["prompt"]) for r in everything] == [
        (in_triage.json()["id"], TRIAGE),
        (in_default["id"], "default"),
    ]
    assert [r["id"] for r in only_triage] == [in_triage.json()["id"]]
    assert [r["id"] for r in only_default] == [in_default["id"]]
    one = author_client.get(f"{EVALUATIONS}/{in_triage.json()['id']}").json()
    assert one["prompt"] == TRIAGE


@pytest.mark.parametrize(("prompt", "status"), [("nowhere", 404), ("Bad", 400)])
def test_runs_list_of_an_unknown_or_bad_prompt_is_refused(
    author_client: APIClient, prompt: str, status: int
) -> None:
    assert author_client.get(EVALUATIONS, {"prompt": prompt}).status_code == status


@pytest.mark.parametrize(("prompt", "status"), [("nowhere", 404), ("Bad Name", 400)])
def test_run_start_in_an_unknown_or_bad_prompt_is_refused_and_stores_nothing(
    author_client: APIClient, prompt: str, status: int
) -> None:
    make_suite(author_client, "smoke", case_body("one"))
    before = stored()

    answer = author_client.post(
        EVALUATIONS, {"prompt": prompt, "suite": "smoke", "candidate": "latest"}, format="json"
    )

    assert answer.status_code == status
    assert stored() == before


def test_gate_counts_only_the_runs_of_its_own_prompt(
    author_client: APIClient, triage: Prompt, author: User
) -> None:
    number = release_create(author=author).release.number
    make_suite(author_client, "smoke", case_body("one"))
    _suite_in(author_client, IN_TRIAGE, "smoke", case_body("one"))
    started = author_client.post(
        EVALUATIONS, {"suite": "smoke", "candidate": number, "model": "echo"}, format="json"
    )
    Run.objects.filter(pk=started.json()["id"]).update(status="finished", summary={})

    of_default = gate_runs(suite="smoke", release=number)
    of_triage = gate_runs(suite="smoke", release=number, prompt=triage)
    evidence = RunEvidence()
    reasons = evidence.release_reasons(
        gate=Gate(suite="smoke", models=("echo",)),
        label="production",
        baseline=Single("latest"),
        release=number,
        prompt=triage,
    )

    assert [run.pk for run in of_default] == [started.json()["id"]]
    assert of_triage == []
    assert reasons == [
        f"no finished run of suite smoke on model echo with release {number} as candidate "
        "and production (latest) as baseline"
    ]
    assert evidence.suite_exists("smoke", prompt=triage)
    assert not evidence.suite_exists("other", prompt=triage)


def _conversation(prompt: Prompt, cid: str, owner: User, label: str) -> None:
    now = timezone.now()
    ConversationPrompt.objects.create(
        prompt=prompt,
        conversation_id=cid,
        system_prompt="frozen",
        cwd="",
        created_at=now,
        constructed_at=now,
        owner=owner,
        label=label,
    )


def test_case_from_a_conversation_names_its_host_when_two_hosts_have_the_id(
    author_client: APIClient, triage: Prompt, author: User
) -> None:
    author.user_permissions.add(Permission.objects.get(codename="view_conversationprompt"))
    bot = User.objects.create_user("support-bot")
    coder = User.objects.create_user("coding-agent")
    _conversation(triage, "conv-42", bot, "production")
    _conversation(default_prompt(), "conv-42", coder, "canary")
    _suite_in(author_client, IN_TRIAGE, "smoke")
    message = [{"role": "user", "content": "Hello"}]

    ambiguous = author_client.post(
        f"{IN_TRIAGE}/smoke/cases",
        {"from_conversation": "conv-42", "messages": message},
        format="json",
    )
    other_prompt = author_client.post(
        f"{IN_TRIAGE}/smoke/cases",
        {
            "from_conversation": {"host": "coding-agent", "conversation": "conv-42"},
            "messages": message,
        },
        format="json",
    )
    made = author_client.post(
        f"{IN_TRIAGE}/smoke/cases",
        {
            "from_conversation": {"host": "support-bot", "conversation": "conv-42"},
            "messages": message,
        },
        format="json",
    )
    unknown_host = author_client.post(
        f"{IN_TRIAGE}/smoke/cases",
        {"from_conversation": {"host": "nobody", "conversation": "conv-42"}, "messages": message},
        format="json",
    )

    assert ambiguous.status_code == 400
    assert "coding-agent" in ambiguous.json()["from_conversation"][0]
    assert "support-bot" in ambiguous.json()["from_conversation"][0]
    assert other_prompt.status_code == 400
    assert "from_conversation" in other_prompt.json()
    assert made.status_code == 201, made.json()
    assert (made.json()["name"], made.json()["context"]["label"]) == ("conv-42", "production")
    assert unknown_host.status_code == 404


def test_suite_write_of_a_restricted_prompt_is_403_audited_and_stores_nothing(
    author_client: APIClient, triage: Prompt, author: User
) -> None:
    now = timezone.now()
    restriction = FolderRestriction.objects.create(folder="support/", updated_at=now)
    restriction.editor_groups.add(Group.objects.create(name="Support leads"))
    before = stored()

    refused = author_client.post(IN_TRIAGE, {"name": "smoke"}, format="json")
    read = author_client.get(IN_TRIAGE)

    assert refused.status_code == 403
    assert "Support leads" in refused.json()["detail"]
    assert stored() == before
    assert read.status_code == 200
    record = AuditRecord.objects.get(action="prompt.refused")
    assert (record.prompt, record.actor) == (TRIAGE, "author")
    author.groups.add(Group.objects.get(name="Support leads"))
    assert author_client.post(IN_TRIAGE, {"name": "smoke"}, format="json").status_code == 201
