"""Model calls behind one small interface: a :class:`Call` in, a :class:`Completion` out.

:func:`provider_for` gives the :class:`Provider` of an endpoint
(:mod:`sysprompt.model_endpoints`):

* ``openai``    — Chat Completions through the official ``openai`` SDK: the system
  prompt as the first ``system`` message, the case's turns after it, tools as given
  (OpenAI's function shape);
* ``anthropic`` — the Messages API through the official ``anthropic`` SDK: the prompt
  as ``system``, tools translated (``parameters`` → ``input_schema``);
* ``echo``      — no network: the system prompt's sha256 and first line, and the last
  user message, so a change of prompt shows in the answer.

A call may ask for structured output (:attr:`Call.output_schema`, the judge's answer
form): sent as OpenAI's ``response_format`` (a strict ``json_schema``) or the Messages
API's ``output_config.format``, unless the endpoint says ``structured_output: false``.

The SDKs are imported at a provider's first call, not with this module: importing both
costs seconds of CPU (thousands of pydantic models), and every ``manage.py`` command and
the server's URLconf import this module through the evaluations' services.

The SDKs retry 429s, 5xx and timeouts themselves, with exponential backoff that honours
``Retry-After`` (``retries`` of the endpoint); each call is bounded by ``timeout``. A
failure is a :class:`ProviderError` whose message an author may read: it never holds
the key — a provider that quotes the key back, whole or its first characters, has it
replaced before the message is cut to ``ERROR_MAX_CHARS``, and a refused key is said in
plain words.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from sysprompt.model_endpoints import ModelEndpoint
from sysprompt_core.evaluations import Answer, ToolCall

if TYPE_CHECKING:  # imported where a call is made (see the module's description)
    import anthropic
    import openai

__all__ = ["Call", "Completion", "Provider", "ProviderError", "provider_for"]

OPENAI_URL = "https://api.openai.com/v1"
ANTHROPIC_URL = "https://api.anthropic.com"
_UNUSED_KEY = "sysprompt-no-key"
"""Sent where an endpoint names no key variable (a local server that needs none): the
SDKs refuse to start without one, and must not fall back to their own variables."""
ERROR_MAX_CHARS = 600
"""The longest error message a failed call gives (the provider's own message in it is
cut, after the key is scrubbed)."""
KEY_PREFIX_MIN_CHARS = 8
"""The shortest start of the key that is scrubbed from an error where it appears
(providers quote a key's first characters: ``sk-proj-abc…``)."""


@dataclass(frozen=True)
class Call:
    """One request: the rendered system prompt (``None``: none), the conversation so far
    (``user``/``assistant`` turns) and the tools offered (OpenAI's function shape)."""

    system: str | None
    messages: Sequence[Mapping[str, Any]]
    tools: Sequence[Mapping[str, Any]] = ()
    output_schema: Mapping[str, object] | None = None
    """The JSON Schema the answer must follow, asked as structured output."""


@dataclass(frozen=True)
class Completion:
    """What the model answered, the tokens its provider reported (``None``: not
    reported) and how long the call took, retries included."""

    answer: Answer
    input_tokens: int | None
    output_tokens: int | None
    ms: float = field(default=0.0)


class ProviderError(Exception):
    """A call that failed after its retries; the message is safe to show an author."""


class Provider(Protocol):
    endpoint: ModelEndpoint

    def complete(self, call: Call) -> Completion: ...

    def close(self) -> None: ...


def provider_for(endpoint: ModelEndpoint) -> Provider:
    """The provider that calls ``endpoint``."""
    kinds: dict[str, type[_Base]] = {
        "openai": OpenAIProvider,
        "anthropic": AnthropicProvider,
        "echo": EchoProvider,
    }
    return kinds[endpoint.kind](endpoint)


class _Base:
    """A provider of one endpoint; its SDK client is made at the first call and kept
    (the SDKs' clients are safe to share between threads) until :meth:`close`."""

    def __init__(self, endpoint: ModelEndpoint) -> None:
        self.endpoint = endpoint
        self._lock = threading.Lock()
        self._client: Any = None

    def complete(self, call: Call) -> Completion:
        started = time.perf_counter()
        key = self._key()
        try:
            with self._lock:
                if self._client is None:
                    self._client = self._make_client(key)
            answer, input_tokens, output_tokens = self._complete(self._client, call)
        except ProviderError as error:
            raise ProviderError(_scrubbed(str(error), key)[:ERROR_MAX_CHARS]) from None
        ms = (time.perf_counter() - started) * 1000
        return Completion(answer, input_tokens, output_tokens, ms)

    def close(self) -> None:
        """Hang up the SDK client's kept connections; a later call makes a new client."""
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def _make_client(self, key: str) -> Any:
        return None

    def _key(self) -> str:
        variable = self.endpoint.api_key_env
        if variable is None:
            return _UNUSED_KEY
        key = os.environ.get(variable, "")
        if not key:
            raise ProviderError(
                f"model {self.endpoint.name}: the environment variable {variable} that "
                "holds its key is not set on the worker"
            )
        return key

    def _complete(self, client: Any, call: Call) -> tuple[Answer, int | None, int | None]:
        raise NotImplementedError

    def _failed(self, error: Exception) -> ProviderError:
        """The author's message for an error of this provider's SDK."""
        return self._failure(error)

    def _failure(
        self,
        error: Exception,
        status: int | None = None,
        message: str = "",
        timed_out: bool = False,
        unreachable: bool = False,
    ) -> ProviderError:
        where = f"model {self.endpoint.name}"
        if status in (401, 403):
            return ProviderError(f"{where}: the provider refused the key (HTTP {status})")
        if status is not None:
            return ProviderError(f"{where}: HTTP {status}: {message}")
        if timed_out:
            return ProviderError(f"{where}: no answer within {self.endpoint.timeout:g} s")
        if unreachable:
            return ProviderError(f"{where}: could not connect to the provider")
        return ProviderError(f"{where}: {type(error).__name__}: {error}")


def _message(error: openai.APIStatusError | anthropic.APIStatusError) -> str:
    """The provider's message, whole: cut only after the key is scrubbed from it."""
    body = error.body
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping) and isinstance(inner.get("message"), str):
            return str(inner["message"])
    return str(error.message)


def _scrubbed(message: str, key: str) -> str:
    """``message`` with the key, and every start of it of ``KEY_PREFIX_MIN_CHARS``
    characters or more, replaced by ``[key]`` (the longest first)."""
    if not key or key == _UNUSED_KEY:
        return message
    for length in range(len(key), KEY_PREFIX_MIN_CHARS - 1, -1):
        message = message.replace(key[:length], "[key]")
    return message


class OpenAIProvider(_Base):
    def _make_client(self, key: str) -> openai.OpenAI:
        import openai

        return openai.OpenAI(
            api_key=key,
            base_url=self.endpoint.base_url or OPENAI_URL,
            timeout=self.endpoint.timeout,
            max_retries=self.endpoint.retries,
        )

    def _failed(self, error: Exception) -> ProviderError:
        import openai

        return self._failure(
            error,
            status=error.status_code if isinstance(error, openai.APIStatusError) else None,
            message=_message(error) if isinstance(error, openai.APIStatusError) else "",
            timed_out=isinstance(error, openai.APITimeoutError),
            unreachable=isinstance(error, openai.APIConnectionError),
        )

    def _complete(self, client: openai.OpenAI, call: Call) -> tuple[Answer, int | None, int | None]:
        import openai

        endpoint = self.endpoint
        messages = [
            *([{"role": "system", "content": call.system}] if call.system is not None else []),
            *call.messages,
        ]
        extra: dict[str, Any] = {"tools": list(call.tools)} if call.tools else {}
        if call.output_schema is not None and endpoint.structured_output:
            extra["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": "answer",
                    "strict": True,
                    "schema": dict(call.output_schema),
                },
            }
        try:
            response = client.chat.completions.create(
                model=endpoint.model,
                messages=messages,  # type: ignore[arg-type]
                **_openai_params(endpoint.params),
                **extra,
            )
        except openai.OpenAIError as error:
            raise self._failed(error) from None
        if not response.choices:
            raise ProviderError(f"model {endpoint.name}: the answer had no choice")
        message = response.choices[0].message
        calls = tuple(
            ToolCall(tool.function.name, tool.function.arguments)
            for tool in message.tool_calls or ()
            if tool.type == "function"
        )
        usage = response.usage
        return (
            Answer(message.content or "", calls),
            usage.prompt_tokens if usage else None,
            usage.completion_tokens if usage else None,
        )


def _openai_params(params: Mapping[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in params.items() if value is not None}


class AnthropicProvider(_Base):
    def _failed(self, error: Exception) -> ProviderError:
        import anthropic

        return self._failure(
            error,
            status=error.status_code if isinstance(error, anthropic.APIStatusError) else None,
            message=_message(error) if isinstance(error, anthropic.APIStatusError) else "",
            timed_out=isinstance(error, anthropic.APITimeoutError),
            unreachable=isinstance(error, anthropic.APIConnectionError),
        )

    def _make_client(self, key: str) -> anthropic.Anthropic:
        import anthropic

        return anthropic.Anthropic(
            api_key=key,
            base_url=self.endpoint.base_url or ANTHROPIC_URL,
            timeout=self.endpoint.timeout,
            max_retries=self.endpoint.retries,
        )

    def _complete(
        self, client: anthropic.Anthropic, call: Call
    ) -> tuple[Answer, int | None, int | None]:
        import anthropic

        endpoint = self.endpoint
        params = dict(endpoint.params)
        params.pop("seed", None)  # the Messages API has none
        if "stop" in params:
            stop = params.pop("stop")
            params["stop_sequences"] = [stop] if isinstance(stop, str) else stop
        # This SDK no longer lists the sampling parameters; the API still takes them.
        sampling = {name: params.pop(name) for name in ("temperature", "top_p") if name in params}
        extra: dict[str, Any] = {"extra_body": sampling} if sampling else {}
        if call.system is not None:
            extra["system"] = call.system
        if call.tools:
            extra["tools"] = [_anthropic_tool(tool) for tool in call.tools]
        if call.output_schema is not None and endpoint.structured_output:
            extra["output_config"] = {
                "format": {"type": "json_schema", "schema": dict(call.output_schema)}
            }
        try:
            response = client.messages.create(
                model=endpoint.model,
                messages=list(call.messages),  # type: ignore[arg-type]
                **params,
                **extra,
            )
        except anthropic.AnthropicError as error:
            raise self._failed(error) from None
        text = "".join(block.text for block in response.content if block.type == "text")
        calls = tuple(
            ToolCall(block.name, dict(block.input) if isinstance(block.input, Mapping) else {})
            for block in response.content
            if block.type == "tool_use"
        )
        return Answer(text, calls), response.usage.input_tokens, response.usage.output_tokens


def _anthropic_tool(tool: Mapping[str, Any]) -> dict[str, Any]:
    """An OpenAI function tool in the Messages API's shape."""
    function = tool.get("function", tool)
    translated = {
        "name": function.get("name"),
        "input_schema": function.get("parameters") or {"type": "object", "properties": {}},
    }
    if function.get("description"):
        translated["description"] = function["description"]
    return translated


class EchoProvider(_Base):
    def _key(self) -> str:
        return ""

    def _complete(self, client: Any, call: Call) -> tuple[Answer, int | None, int | None]:
        system = call.system or ""
        digest = hashlib.sha256(system.encode("utf-8", "surrogatepass")).hexdigest()
        first = system.split("\n", 1)[0]
        users = [m for m in call.messages if m.get("role") == "user"]
        last = users[-1].get("content", "") if users else ""
        text = f"system sha256: {digest}\nsystem first line: {first}\nuser: {last}"
        return Answer(text), None, None
