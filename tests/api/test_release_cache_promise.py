"""The cache promise under releases: moving a label, splitting it and rolling it back
between turns changes no frozen prompt (byte for byte, the same sha256); construct and
compact build from the label's target at that moment; a split's arm is sticky per
conversation across constructs and compactions."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from sysprompt.prompts.models import ConversationPrompt
from sysprompt_core.releases import choose_arm, parse_target
from tests.api.library_support import put_fragment, sha256, turn
from tests.api.release_support import create_release, label_url, put_label

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("production")]


@pytest.fixture
def two_releases(publisher_client: APIClient) -> None:
    """Release 1 (core v1), release 2 (core v2, a new root); the working copy: core v3."""
    publisher_client.put("/api/system-prompt", {"template": "R1 [fragment:core]"}, format="json")
    put_fragment(publisher_client, "core", "core v1")
    assert create_release(publisher_client).json()["number"] == 1
    publisher_client.put("/api/system-prompt", {"template": "R2 [fragment:core]"}, format="json")
    put_fragment(publisher_client, "core", "core v2")
    assert create_release(publisher_client).json()["number"] == 2
    put_fragment(publisher_client, "core", "core v3")


def rollback(client: APIClient, name: str) -> None:
    assert client.post(label_url(name, "/rollback"), {}, format="json").status_code == 200


def test_resolve_500_turns_same_bytes_through_label_moves_until_construct(
    publisher_client: APIClient, host_client: APIClient, workdir: Path, two_releases: None
) -> None:
    put_label(publisher_client, "production", {"release": 1})
    first = turn(host_client, "resolve", workdir)
    assert first.status_code == 201
    frozen = first.json()
    assert (frozen["system_prompt"], frozen["label"], frozen["release"]) == (
        "R1 core v1",
        "production",
        1,
    )
    split = {"split": [{"release": 2, "weight": 5000}, {"release": "latest", "weight": 5000}]}
    moves: dict[int, Callable[[], object]] = {
        50: lambda: put_label(publisher_client, "production", {"release": 2}),
        100: lambda: put_label(publisher_client, "production", "latest"),
        150: lambda: put_label(publisher_client, "production", split),
        200: lambda: rollback(publisher_client, "production"),
        250: lambda: put_label(publisher_client, "staging", {"release": 2}),
        300: lambda: publisher_client.put(
            "/api/agent-hosts/host-1/label", {"label": "staging"}, format="json"
        ),
        350: lambda: put_fragment(publisher_client, "core", "core v4"),
    }

    answers = set()
    for number in range(1, 500):
        if number in moves:
            moves[number]()
        body: dict[str, Any] = {"label": "staging"} if number % 3 == 0 else {}
        response = turn(host_client, "resolve", workdir, **body)
        assert response.status_code == 200
        answers.add(json.dumps(response.json(), sort_keys=True))

    assert answers == {json.dumps(frozen, sort_keys=True)}
    assert ConversationPrompt.objects.get().sha256 == sha256("R1 core v1")

    rebuilt = turn(host_client, "construct", workdir).json()

    # The host's label is staging now, which serves release 2.
    assert (rebuilt["system_prompt"], rebuilt["label"], rebuilt["release"]) == (
        "R2 core v2",
        "staging",
        2,
    )
    stable = {turn(host_client, "resolve", workdir).json()["sha256"] for _ in range(20)}
    assert stable == {sha256("R2 core v2")}


def test_compact_builds_from_the_target_at_that_moment_and_rollback_reaches_it(
    publisher_client: APIClient, host_client: APIClient, workdir: Path, two_releases: None
) -> None:
    frozen = turn(host_client, "resolve", workdir).json()
    assert (frozen["system_prompt"], frozen["release"]) == ("R2 core v3", None)

    put_label(publisher_client, "production", {"release": 2}, message="review on")
    compacted = turn(host_client, "compact", workdir).json()
    put_label(publisher_client, "production", {"release": 1}, message="bad release")
    still = turn(host_client, "resolve", workdir).json()
    rollback(publisher_client, "production")
    fixed = turn(host_client, "compact", workdir).json()

    assert (compacted["persisted_system_prompt"], compacted["release"]) == ("R2 core v2", 2)
    assert still["system_prompt"] == "R2 core v2"
    assert (fixed["persisted_system_prompt"], fixed["release"]) == ("R2 core v2", 2)
    assert fixed["fragments_used"] == [
        {"name": "core", "provider": None, "model": None, "version": 2}
    ]


def test_split_arm_is_sticky_per_conversation_across_constructs_and_compactions(
    publisher_client: APIClient, host_client: APIClient, workdir: Path, two_releases: None
) -> None:
    split = {"split": [{"release": 1, "weight": 5000}, {"release": 2, "weight": 5000}]}
    put_label(publisher_client, "ab", split)
    target = parse_target(split)
    ids = [f"conversation-{n}" for n in range(24)]
    expected = {cid: choose_arm(target, "ab", cid) for cid in ids}  # type: ignore[arg-type]
    texts = {0: "R1 core v1", 1: "R2 core v2"}

    built = {}
    for cid in ids:
        first = turn(host_client, "resolve", workdir, cid=cid, label="ab").json()
        again = turn(host_client, "construct", workdir, cid=cid, label="ab").json()
        compacted = turn(host_client, "compact", workdir, cid=cid, label="ab").json()
        built[cid] = {
            (
                body["arm"],
                body["release"],
                body.get("persisted_system_prompt", body["system_prompt"]),
            )
            for body in (first, again, compacted)
        }

    for cid in ids:
        arm = expected[cid]
        assert built[cid] == {(arm, arm + 1, texts[arm])}, cid
    assert set(expected.values()) == {0, 1}


def test_growing_the_last_arm_moves_no_conversation_out_of_it(
    publisher_client: APIClient, host_client: APIClient, workdir: Path, two_releases: None
) -> None:
    put_label(
        publisher_client,
        "canary",
        {"split": [{"release": 1, "weight": 8000}, {"release": 2, "weight": 2000}]},
    )
    ids = [f"c{n}" for n in range(40)]
    before = {
        cid: turn(host_client, "resolve", workdir, cid=cid, label="canary").json()["arm"]
        for cid in ids
    }

    put_label(
        publisher_client,
        "canary",
        {"split": [{"release": 1, "weight": 5000}, {"release": 2, "weight": 5000}]},
    )
    after = {
        cid: turn(host_client, "construct", workdir, cid=cid, label="canary").json()["arm"]
        for cid in ids
    }

    assert all(after[cid] == 1 for cid in ids if before[cid] == 1)
    assert sum(after.values()) >= sum(before.values())


def test_later_turn_naming_an_unknown_label_answers_the_frozen_prompt(
    host_client: APIClient, workdir: Path, two_releases: None
) -> None:
    frozen = turn(host_client, "resolve", workdir).json()

    later = turn(host_client, "resolve", workdir, label="no-such-label")
    refused = turn(host_client, "construct", workdir, label="no-such-label")
    bad_name = turn(host_client, "resolve", workdir, label="Not A Label")

    assert (later.status_code, later.json()) == (200, frozen)
    assert refused.status_code == 400 and list(refused.json()) == ["label"]
    assert bad_name.status_code == 400 and list(bad_name.json()) == ["label"]
    assert ConversationPrompt.objects.get().sha256 == frozen["sha256"]


def test_call_label_latest_builds_from_the_working_copy_whatever_the_labels_say(
    publisher_client: APIClient, host_client: APIClient, workdir: Path, two_releases: None
) -> None:
    put_label(publisher_client, "production", {"release": 1})
    put_label(publisher_client, "staging", {"release": 2})
    publisher_client.put("/api/agent-hosts/host-1/label", {"label": "staging"}, format="json")

    resolved = turn(host_client, "resolve", workdir, cid="l1", label="latest")
    constructed = turn(host_client, "construct", workdir, cid="l2", label="latest")
    compacted = turn(host_client, "compact", workdir, cid="l1", label="latest")
    default = turn(host_client, "resolve", workdir, cid="l3")
    references = host_client.get("/api/system-prompt/references?label=latest")

    for answer in (resolved, constructed):
        assert answer.status_code == 201, answer.content
        data = answer.json()
        assert (data["system_prompt"], data["label"], data["release"]) == (
            "R2 core v3",
            "latest",
            None,
        )
    assert compacted.status_code == 200 and compacted.json()["label"] == "latest"
    assert compacted.json()["persisted_system_prompt"] == "R2 core v3"
    assert default.json()["system_prompt"] == "R2 core v2"  # the host's label: staging
    assert references.status_code == 200, references.content
    assert references.json()["references"] == []  # fragment: keys aside
