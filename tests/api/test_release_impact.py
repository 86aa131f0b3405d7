"""Releases §3, §5: POST /api/releases/impact through the real API: the report before a
label moves, for the label's recent conversations and the test contexts."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytest_django import Settings
from rest_framework.test import APIClient

from sysprompt_core.tokens import encoding
from tests.api.library_support import put_fragment, turn
from tests.api.release_support import (
    IMPACT,
    TEST_CONTEXTS,
    create_release,
    put_label,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("production")]


def test_impact_reports_each_context_with_diff_sizes_prefixes_and_lint(
    publisher_client: APIClient, workdir: Path
) -> None:
    publisher_client.put(
        "/api/system-prompt", {"template": "Root.\n[fragment:core]"}, format="json"
    )
    put_fragment(publisher_client, "core", "Core v1.")
    create_release(publisher_client)
    put_label(publisher_client, "production", {"release": 1})
    put_fragment(publisher_client, "core", "Core v2, longer.")
    publisher_client.put(
        "/api/system-prompt", {"template": "Root.\n[fragment:core][fragment:cor]"}, format="json"
    )
    publisher_client.post(
        TEST_CONTEXTS, {"name": "ci", "cwd": str(workdir), "provider": "openai"}, format="json"
    )

    response = publisher_client.post(
        IMPACT, {"label": "production", "candidate": "latest"}, format="json"
    )

    assert response.status_code == 200
    report = response.json()
    assert (report["label"], report["candidate"], report["current"]) == (
        "production",
        "latest",
        {"release": 1},
    )
    assert report["window_days"] == 7 and "SERVER_RESOLVES" in report["note"]
    [test] = report["contexts"]
    assert (test["key"], test["origin"], test["host_values"]) == ("test:ci", "test", "supplied")
    assert test["changed"] and test["diff"].endswith(
        "-Core v1.\n\\ No newline at end of file\n+Core v2, longer.\n\\ No newline at end of file\n"
    )
    assert (test["chars_before"], test["chars_after"]) == (14, 22)
    # The test context's provider is openai, no model: o200k_base, an estimate (no
    # model named is one of OpenAI's, whose encodings are known).
    o200k = encoding("o200k_base")
    assert (test["tokens_before"], test["tokens_after"], test["tokens_exact"]) == (
        len(o200k.encode_ordinary("Root.\nCore v1.")),
        len(o200k.encode_ordinary("Root.\nCore v2, longer.")),
        False,
    )
    assert test["tokens_error"] is None
    assert (test["shared_prefix_before"], test["shared_prefix_after"]) == (14, 22)
    assert test["prefix_changed"] is True
    [lint] = test["diagnostics"]
    assert "cor" in lint["message"] and lint["line"] == 2
    assert report["summary"] == {
        "contexts": 1,
        "contexts_changed": 1,
        "conversations": 0,
        "conversations_changed": 0,
        "share_changed": 0.0,
        "prefixes_changed": 1,
        "conversations_prefix_changed": 0,
    }


def test_impact_counts_the_label_conversations(
    publisher_client: APIClient, host_client: APIClient, workdir: Path
) -> None:
    put_fragment(publisher_client, "core", "v1")
    publisher_client.put("/api/system-prompt", {"template": "[fragment:core]"}, format="json")
    for n in range(4):
        turn(host_client, "resolve", workdir, cid=f"c{n}")
    put_fragment(publisher_client, "core", "v2")
    create_release(publisher_client)

    report = publisher_client.post(
        IMPACT, {"label": "production", "candidate": 1, "window_days": 1}, format="json"
    ).json()

    [row] = report["contexts"]
    assert (row["origin"], row["conversations"], row["agent_host"]) == ("recorded", 4, "host-1")
    assert row["changed"] is False  # production follows latest, which release 1 is
    assert report["summary"]["conversations"] == 4


@pytest.mark.parametrize("ratio", [None, 1.25])
def test_impact_counts_tokens_for_the_recorded_conversations_provider_and_model(
    publisher_client: APIClient,
    host_client: APIClient,
    workdir: Path,
    settings: Settings,
    ratio: float | None,
) -> None:
    """An estimate is calibrated by the provider's TOKEN_RATIOS ratio when one is set;
    OpenAI's exact count is not."""
    if ratio is not None:
        settings.SYSPROMPT = {**settings.SYSPROMPT, "TOKEN_RATIOS": {"anthropic": ratio}}
    chinese = "修改文件之前，请先阅读说明。请用中文回答。\n" * 10
    put_fragment(publisher_client, "core", chinese)
    publisher_client.put("/api/system-prompt", {"template": "[fragment:core]"}, format="json")
    create_release(publisher_client)
    put_label(publisher_client, "production", {"release": 1})
    for cid, provider, model in (("o", "openai", "gpt-4"), ("a", "anthropic", "claude-x")):
        body = {"provider": provider, "model": model}
        assert turn(host_client, "resolve", workdir, cid=cid, **body).status_code == 201
    put_fragment(publisher_client, "core", chinese + "再见。")

    report = publisher_client.post(
        IMPACT, {"label": "production", "candidate": "latest"}, format="json"
    ).json()

    rows = {row["provider"]: row for row in report["contexts"]}
    cl100k, o200k = encoding("cl100k_base"), encoding("o200k_base")
    assert (rows["openai"]["tokens_before"], rows["openai"]["tokens_after"]) == (
        len(cl100k.encode_ordinary(chinese)),
        len(cl100k.encode_ordinary(chinese + "再见。")),
    )
    assert rows["openai"]["tokens_exact"] is True
    before, after = (len(o200k.encode_ordinary(text)) for text in (chinese, chinese + "再见。"))
    if ratio is not None:
        before, after = round(before * ratio), round(after * ratio)
    assert (rows["anthropic"]["tokens_before"], rows["anthropic"]["tokens_after"]) == (
        before,
        after,
    )
    assert rows["anthropic"]["tokens_exact"] is False


def test_impact_takes_a_candidate_as_a_label_target_names_it(publisher_client: APIClient) -> None:
    put_fragment(publisher_client, "core", "v1")
    create_release(publisher_client)

    as_number = publisher_client.post(
        IMPACT, {"label": "production", "candidate": 1}, format="json"
    )
    as_target = publisher_client.post(
        IMPACT, {"label": "production", "candidate": {"release": 1}}, format="json"
    )
    split = {"split": [{"release": 1, "weight": 5000}, {"release": "latest", "weight": 5000}]}
    refused = [
        publisher_client.post(IMPACT, {"label": "production", "candidate": bad}, format="json")
        for bad in ({"release": 1, "weight": 1}, split, {"release": "1"})
    ]

    assert as_target.status_code == 200, as_target.content
    assert as_target.json()["candidate"] == 1
    assert as_target.json()["summary"] == as_number.json()["summary"]
    assert [(r.status_code, list(r.json())) for r in refused] == [
        (400, ["candidate"]),
        (400, ["candidate"]),
        (400, ["candidate.release"]),
    ]
