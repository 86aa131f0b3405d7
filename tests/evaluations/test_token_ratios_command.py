"""``manage.py token_ratios``: each provider's reported input tokens beside the server's
count of the same requests, from evaluation calls the real SDKs made to the fake model
process (which reports input tokens as the characters of the request's JSON ÷ 4:
tests/evaluations/fake_model.py), and the SYSPROMPT_TOKEN_RATIOS line that follows."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from pytest_django import Settings

from sysprompt.conf import app_settings
from sysprompt.evaluations.execution import run_execute
from sysprompt.prompts.token_counts import count_tokens
from sysprompt.releases import services as releases
from sysprompt_core.tokens import encoding
from tests.evaluations.fake_model_process import FakeModel
from tests.evaluations.support import case, models_setting, production_on_release, run, suite_with

pytestmark = pytest.mark.django_db(transaction=True)

TABS = {"type": "contains", "value": "tabs"}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
    }
]
BEFORE = "You review code for a team that indents with tabs.\nANSWER: Use tabs, always.\n" * 3
AFTER = "You review code for a team that indents with spaces.\nANSWER: Use spaces.\n" * 3


@pytest.fixture
def configured(settings: Settings, fake: FakeModel, allowed_root: Path) -> FakeModel:
    gpt = {"kind": "openai", "model": "gpt-4o-mini", "base_url": f"{fake.url}/v1", "retries": 0}
    settings.SYSPROMPT = {
        "ALLOWED_ROOTS": [str(allowed_root)],
        "MODELS": {**models_setting(fake), "fake-gpt": gpt},
    }
    releases.production_ensure()
    return fake


def token_ratios(*arguments: str) -> str:
    out = io.StringIO()
    call_command("token_ratios", *arguments, stdout=out)
    return out.getvalue()


def finished(run_id: int) -> None:
    assert run_execute(run_id) == "finished"


def o200k(text: str) -> int:
    return len(encoding("o200k_base").encode_ordinary(text))


def anthropic_evidence(requests: list[dict[str, Any]]) -> tuple[int, int, int]:
    """Calls, counted and reported input tokens of the Messages calls the fake model
    answered, worked out from the requests it received (the fake's own usage rule)."""
    calls = [r["body"] for r in requests if r["path"] == "/v1/messages" and r["status"] == 200]
    counted = sum(
        o200k(body.get("system", "")) + sum(o200k(m["content"]) for m in body["messages"])
        for body in calls
    )
    reported = sum(
        max(1, len(json.dumps([body.get("system", ""), body["messages"]], ensure_ascii=False)) // 4)
        for body in calls
    )
    return len(calls), counted, reported


def test_token_ratios_says_there_is_no_evidence_when_no_call_reported_usage(
    configured: FakeModel,
) -> None:
    production_on_release(BEFORE, then=AFTER)
    suite_with("style", case("indent", TABS))
    finished(run("style", "latest", model="echo").pk)

    text = token_ratios()
    found = json.loads(token_ratios("--json"))

    assert text.startswith("No evidence: no evaluation call has input tokens reported")
    assert "Calls left out: 2 echo." in text
    assert "SYSPROMPT_TOKEN_RATIOS" not in text
    assert found == {"providers": {}, "left_out": {"echo": 2}, "setting": {}}


def test_token_ratios_from_the_providers_reported_usage_leaving_out_what_is_no_evidence(
    configured: FakeModel, settings: Settings
) -> None:
    production_on_release(BEFORE, then=AFTER)
    suite_with("style", case("indent", TABS), case("other", TABS))
    suite_with("tooled", case("tool", TABS, tools=TOOLS))
    finished(run("style", "latest", model="fake-claude").pk)  # 4 calls
    expected_calls, counted, reported = anthropic_evidence(configured.requests())
    finished(run("style", "latest", model="fake-claude").pk)  # 4 answers from the cache
    finished(run("style", "latest", model="echo").pk)  # 4 echo calls
    finished(run("tooled", "latest", model="fake-claude").pk)  # 2 calls offering tools
    configured.control(script=[{"status": 500}])
    finished(run("style", "latest", model="fake", fresh=True).pk)  # 1 error, 3 answered
    finished(run("style", "latest", model="fake-gpt", fresh=True).pk)  # 4 counted exactly

    found = json.loads(token_ratios("--json"))
    text = token_ratios()

    ratio = round(reported / counted, 2)
    assert expected_calls == 4
    assert found["providers"]["anthropic"] == {
        "calls": 4,
        "counted": counted,
        "reported": reported,
        "ratio": ratio,
        "usable": True,
    }
    # fake-1 behind an OpenAI-compatible endpoint is an estimate, calibrated as one.
    openai = found["providers"]["openai"]
    assert (openai["calls"], openai["usable"]) == (3, True)
    assert openai["ratio"] == round(openai["reported"] / openai["counted"], 2)
    assert found["left_out"] == {"cached": 4, "echo": 4, "error": 1, "exact": 4, "tools": 2}
    assert found["setting"] == {"anthropic": ratio, "openai": openai["ratio"]}
    assert f"SYSPROMPT_TOKEN_RATIOS='{json.dumps(found['setting'])}'" in text
    assert "4 exact" in text
    # The line it prints is a setting the server takes, and calibrates the estimate by.
    settings.SYSPROMPT = {**settings.SYSPROMPT, "TOKEN_RATIOS": found["setting"]}
    assert app_settings().token_ratio("anthropic") == ratio
    counted_now = count_tokens(AFTER, provider="anthropic", model="claude-fake")
    assert counted_now.tokens == round(o200k(AFTER) * ratio)
    assert f"× {ratio:g}, the ratio calibrated for anthropic" in counted_now.note
