"""Evaluations §1: the real openai and anthropic SDKs against the fake model process."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterator

import pytest

from sysprompt.evaluations.providers import Call, Provider, ProviderError, provider_for
from sysprompt.model_endpoints import ModelEndpoint, endpoints_parse
from sysprompt_core.evaluations import ToolCall
from tests.evaluations.fake_model_process import FakeModel

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
SYSTEM = 'Be brief.\nANSWER: Use tabs.\nTOOL: read_file {"path": "AGENTS.md"}'
CONVERSATION = [
    {"role": "user", "content": "Hi"},
    {"role": "assistant", "content": "Hello."},
    {"role": "user", "content": "Tabs or spaces?"},
]


Providers = Callable[[ModelEndpoint], Provider]


@pytest.fixture
def providers() -> Iterator[Providers]:
    """``provider_for``, each provider closed when the test ends."""
    made: list[Provider] = []

    def make(model: ModelEndpoint) -> Provider:
        made.append(provider_for(model))
        return made[-1]

    yield make
    for provider in made:
        provider.close()


def endpoint(fake: FakeModel, kind: str, **more: object) -> ModelEndpoint:
    url = f"{fake.url}/v1" if kind == "openai" else fake.url
    entry = {"kind": kind, "model": f"{kind}-m", "base_url": url, "retries": 0, **more}
    return endpoints_parse({"m": entry})["m"]


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_provider_complete_answers_text_tools_and_usage(
    providers: Providers, fake: FakeModel, kind: str
) -> None:
    done = providers(endpoint(fake, kind)).complete(Call(SYSTEM, CONVERSATION, TOOLS))

    assert done.answer.text == "Use tabs."
    assert [call.name for call in done.answer.tool_calls] == ["read_file"]
    assert done.answer.tool_calls[0].parsed() == {"path": "AGENTS.md"}
    assert done.input_tokens and done.input_tokens > 1 and done.output_tokens
    assert done.ms > 0


def test_provider_openai_sends_prompt_first_then_the_turns(
    providers: Providers, fake: FakeModel
) -> None:
    providers(endpoint(fake, "openai", params={"temperature": 0.5, "seed": 7})).complete(
        Call(SYSTEM, CONVERSATION, TOOLS)
    )

    (request,) = fake.requests()
    body = request["body"]
    assert body["messages"] == [{"role": "system", "content": SYSTEM}, *CONVERSATION]
    assert body["tools"] == TOOLS
    assert (body["model"], body["temperature"], body["max_tokens"], body["seed"]) == (
        "openai-m",
        0.5,
        1024,
        7,
    )


def test_provider_anthropic_translates_system_and_tools(
    providers: Providers, fake: FakeModel
) -> None:
    providers(endpoint(fake, "anthropic", params={"stop": "END", "seed": 1})).complete(
        Call(SYSTEM, CONVERSATION, TOOLS)
    )

    body = fake.requests()[0]["body"]
    assert body["system"] == SYSTEM
    assert body["messages"] == CONVERSATION
    assert body["tools"] == [
        {
            "name": "read_file",
            "description": "Read a file",
            "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
        }
    ]
    assert body["stop_sequences"] == ["END"] and "seed" not in body
    assert (body["temperature"], body["max_tokens"]) == (0, 1024)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_provider_retries_a_500_then_answers(
    providers: Providers, fake: FakeModel, kind: str
) -> None:
    fake.control(script=[{"status": 500}])

    done = providers(endpoint(fake, kind, retries=2)).complete(Call(SYSTEM, CONVERSATION))

    assert done.answer.text == "Use tabs."
    assert [r["status"] for r in fake.requests()] == [500, 200]


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_provider_retry_waits_as_retry_after_says(
    providers: Providers, fake: FakeModel, kind: str
) -> None:
    fake.control(script=[{"status": 429, "retry_after": 1}])

    providers(endpoint(fake, kind, retries=1)).complete(Call(SYSTEM, CONVERSATION))

    first, second = fake.requests()
    assert first["status"] == 429 and second["status"] == 200
    assert second["started"] - first["ended"] >= 0.95


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_provider_error_after_retries_names_status_and_message(
    providers: Providers, fake: FakeModel, kind: str
) -> None:
    fake.control(script=[{"status": 503}, {"status": 503}])

    with pytest.raises(ProviderError, match=r"model m: HTTP 503: scripted 503"):
        providers(endpoint(fake, kind, retries=1)).complete(Call(SYSTEM, CONVERSATION))


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_provider_error_never_holds_the_key(
    providers: Providers, fake: FakeModel, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-test-0123456789abcdef"
    monkeypatch.setenv("FAKE_KEY", secret)
    model = endpoint(fake, kind, api_key_env="FAKE_KEY")
    fake.control(script=[{"status": 400, "echo_key": True}, {"status": 401, "echo_key": True}])

    with pytest.raises(ProviderError) as bad_request:
        providers(model).complete(Call(SYSTEM, CONVERSATION))
    with pytest.raises(ProviderError) as refused:
        providers(model).complete(Call(SYSTEM, CONVERSATION))

    assert all(r["authorized"] for r in fake.requests())  # the key was sent …
    assert secret not in str(bad_request.value) and "[key]" in str(bad_request.value)
    assert str(refused.value) == "model m: the provider refused the key (HTTP 401)"


KEY = "sk-proj-" + "0123456789abcdefABCDEFghijklmnopqrstuv"  # 46 characters


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
@pytest.mark.parametrize(
    "step",
    [
        {"pad": 447},  # the key straddles the 500th character of the provider's message
        {"pad": 10, "key_chars": 20},  # a provider quoting the key's start
        {"pad": 0, "key_chars": 8},
    ],
    ids=["straddling-the-cut", "first-20", "first-8"],
)
def test_provider_error_holds_no_part_of_the_key(
    providers: Providers,
    fake: FakeModel,
    kind: str,
    step: dict[str, int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FAKE_KEY", KEY)
    fake.control(script=[{"status": 400, "echo_key": True, **step}])

    with pytest.raises(ProviderError) as failed:
        providers(endpoint(fake, kind, api_key_env="FAKE_KEY")).complete(Call(SYSTEM, CONVERSATION))

    said = str(failed.value)
    pieces = {KEY[start : start + 8] for start in range(len(KEY) - 7)}
    assert not [piece for piece in pieces if piece in said], said
    assert "Incorrect API key provided: " in said and "[key]" in said
    assert len(said) <= 600


def test_provider_missing_key_variable_is_said_without_a_call(
    providers: Providers, fake: FakeModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ABSENT_KEY", raising=False)

    with pytest.raises(ProviderError, match="ABSENT_KEY that holds its key is not set"):
        providers(endpoint(fake, "openai", api_key_env="ABSENT_KEY")).complete(
            Call(SYSTEM, CONVERSATION)
        )
    assert fake.requests() == []


def test_provider_timeout_is_an_error_within_the_timeout(
    providers: Providers, fake: FakeModel
) -> None:
    fake.control(latency_ms=60_000)
    started = time.monotonic()

    with pytest.raises(ProviderError, match="no answer within 0.5 s"):
        providers(endpoint(fake, "openai", timeout=0.5)).complete(Call(SYSTEM, CONVERSATION))
    assert time.monotonic() - started < 20  # the deadline, not the answer a minute on


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_provider_close_hangs_up_the_kept_connection(fake: FakeModel, kind: str) -> None:
    provider = provider_for(endpoint(fake, kind))
    provider.complete(Call(SYSTEM, CONVERSATION))
    assert fake.connections_from_here() == 1  # kept for the next call

    provider.close()

    assert fake.connections_from_here() == 0
    assert provider.complete(Call(SYSTEM, CONVERSATION)).answer.text == "Use tabs."  # anew
    provider.close()
    assert fake.connections_from_here() == 0


def test_provider_echo_answers_prompt_digest_first_line_and_last_user_message() -> None:
    done = provider_for(endpoint_echo()).complete(Call(SYSTEM, CONVERSATION))

    digest = hashlib.sha256(SYSTEM.encode()).hexdigest()
    assert done.answer.text == (
        f"system sha256: {digest}\nsystem first line: Be brief.\nuser: Tabs or spaces?"
    )
    assert done.answer.tool_calls == () and done.input_tokens is None


def endpoint_echo() -> ModelEndpoint:
    return endpoints_parse({})["echo"]


def test_tool_call_parsed_keeps_raw_text_that_is_not_json() -> None:
    assert ToolCall("f", "{oops").parsed() is None


VERDICT = {
    "type": "object",
    "properties": {"pass": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["pass", "reason"],
    "additionalProperties": False,
}


def test_provider_openai_asks_for_structured_output(providers: Providers, fake: FakeModel) -> None:
    providers(endpoint(fake, "openai")).complete(Call(SYSTEM, CONVERSATION, output_schema=VERDICT))

    body = fake.requests()[0]["body"]
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "answer", "strict": True, "schema": VERDICT},
    }


def test_provider_anthropic_asks_for_structured_output(
    providers: Providers, fake: FakeModel
) -> None:
    providers(endpoint(fake, "anthropic")).complete(
        Call(SYSTEM, CONVERSATION, output_schema=VERDICT)
    )

    body = fake.requests()[0]["body"]
    assert body["output_config"] == {"format": {"type": "json_schema", "schema": VERDICT}}


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_provider_structured_output_off_sends_none(
    providers: Providers, fake: FakeModel, kind: str
) -> None:
    providers(endpoint(fake, kind, structured_output=False)).complete(
        Call(SYSTEM, CONVERSATION, output_schema=VERDICT)
    )
    providers(endpoint(fake, kind)).complete(Call(SYSTEM, CONVERSATION))

    for request in fake.requests():
        assert "response_format" not in request["body"]
        assert "output_config" not in request["body"]
