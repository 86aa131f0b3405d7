"""Named model endpoints (``SYSPROMPT["MODELS"]``): what evaluations call, from settings only.

Each entry of the ``MODELS`` object names an endpoint and says how to reach it::

    {"gpt": {"kind": "openai", "model": "gpt-4.1-mini", "api_key_env": "OPENAI_API_KEY"},
     "local": {"kind": "openai", "model": "qwen3", "base_url": "http://127.0.0.1:8080/v1"},
     "claude": {"kind": "anthropic", "model": "claude-sonnet-4-5",
                "api_key_env": "ANTHROPIC_API_KEY", "max_concurrency": 2},
     "echo": {"kind": "echo"}}

``kind`` is ``openai`` (any OpenAI-compatible Chat Completions endpoint), ``anthropic``
(the Messages API) or ``echo`` (built in, no network). The rest, each optional:
``model`` (the provider's id; required but for ``echo``), ``base_url``,
``api_key_env`` — the *name* of the environment variable that holds the key: keys are
read from the environment when a call is made and are never stored, shown or logged —
``max_concurrency`` (calls at once per worker process, default 4), ``timeout``
(seconds per call, default 60), ``retries`` (of 429s, 5xx and timeouts, honouring
``Retry-After``; default 2), ``params`` (``temperature``, default 0; ``max_tokens``,
default 1024; ``top_p``, ``stop``, ``seed``), ``price_input`` / ``price_output``
(per million tokens, for the cost in a run's summary) and ``structured_output``
(default true: a judge's call asks for its answer's JSON Schema as structured output;
false for a server or model that refuses the parameter).

An ``echo`` endpoint named ``echo`` is always there unless the settings name another
``echo``. Refused with ``ImproperlyConfigured``, naming the entry and field: an unknown
kind or field, a value of the wrong type.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from django.core.exceptions import ImproperlyConfigured

__all__ = ["ECHO", "Kind", "ModelEndpoint", "endpoints_parse"]

Kind: TypeAlias = Literal["openai", "anthropic", "echo"]
KINDS: tuple[Kind, ...] = ("openai", "anthropic", "echo")
ECHO = "echo"
"""The name of the built-in echo endpoint."""
DEFAULT_MAX_CONCURRENCY = 4
DEFAULT_TIMEOUT = 60.0
DEFAULT_RETRIES = 2
DEFAULT_PARAMS: Mapping[str, object] = {"temperature": 0, "max_tokens": 1024}
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
_FIELDS = frozenset(
    {
        "kind",
        "model",
        "base_url",
        "api_key_env",
        "max_concurrency",
        "timeout",
        "retries",
        "params",
        "price_input",
        "price_output",
        "structured_output",
    }
)
_PARAMS = frozenset({"temperature", "max_tokens", "top_p", "stop", "seed"})


@dataclass(frozen=True)
class ModelEndpoint:
    """One named endpoint, checked; never holds a key (only the variable's name)."""

    name: str
    kind: Kind
    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY
    timeout: float = DEFAULT_TIMEOUT
    retries: int = DEFAULT_RETRIES
    params: Mapping[str, Any] = field(default_factory=lambda: dict(DEFAULT_PARAMS))
    price_input: float | None = None
    price_output: float | None = None
    structured_output: bool = True

    def cost(self, input_tokens: int, output_tokens: int) -> float | None:
        """What the tokens cost at the endpoint's prices (``None`` without prices)."""
        if self.price_input is None or self.price_output is None:
            return None
        return (input_tokens * self.price_input + output_tokens * self.price_output) / 1e6


def endpoints_parse(value: object) -> dict[str, ModelEndpoint]:
    """The endpoints of ``SYSPROMPT["MODELS"]`` by name, the built-in ``echo`` included."""
    if not isinstance(value, Mapping):
        raise _wrong("MODELS", "an object mapping each model's name to its settings", value)
    endpoints = {ECHO: ModelEndpoint(name=ECHO, kind="echo", model="echo")}
    for name, entry in value.items():
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise _wrong("MODELS", "names of up to 63 letters, digits, . _ -", name)
        endpoints[name] = _endpoint(name, entry)
    return endpoints


def _endpoint(name: str, entry: object) -> ModelEndpoint:
    where = f"MODELS.{name}"
    if not isinstance(entry, Mapping):
        raise _wrong(where, 'an object like {"kind": "openai", "model": "…"}', entry)
    for key in entry:
        if key not in _FIELDS:
            raise _wrong(f"{where}.{key}", f"one of the fields {', '.join(sorted(_FIELDS))}", key)
    kind = entry.get("kind")
    if kind not in KINDS:
        raise _wrong(f"{where}.kind", "openai, anthropic or echo", kind)
    model = entry.get("model", name if kind == "echo" else None)
    if not isinstance(model, str) or not model:
        raise _wrong(f"{where}.model", "the provider's model id (a string)", model)
    return ModelEndpoint(
        name=name,
        kind=kind,
        model=model,
        base_url=_optional_url(f"{where}.base_url", entry.get("base_url")),
        api_key_env=_optional_env(f"{where}.api_key_env", entry.get("api_key_env")),
        max_concurrency=_count(
            f"{where}.max_concurrency", entry.get("max_concurrency", DEFAULT_MAX_CONCURRENCY), 1
        ),
        timeout=_seconds(f"{where}.timeout", entry.get("timeout", DEFAULT_TIMEOUT)),
        retries=_count(f"{where}.retries", entry.get("retries", DEFAULT_RETRIES), 0),
        params=_params(f"{where}.params", entry.get("params", {})),
        price_input=_price(f"{where}.price_input", entry.get("price_input")),
        price_output=_price(f"{where}.price_output", entry.get("price_output")),
        structured_output=_flag(f"{where}.structured_output", entry.get("structured_output", True)),
    )


def _wrong(key: str, expected: str, value: object) -> ImproperlyConfigured:
    shown = value if not isinstance(value, str) or len(value) < 200 else value[:200] + "…"
    return ImproperlyConfigured(f"settings.SYSPROMPT[{key!r}] must be {expected}; got {shown!r}.")


def _optional_url(key: str, value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not re.fullmatch(r"https?://\S+", value):
        raise _wrong(key, "an http:// or https:// URL", value)
    return value


def _optional_env(key: str, value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not _ENV_NAME.fullmatch(value):
        raise _wrong(key, "the name of an environment variable (not the key itself)", "…")
    return value


def _count(key: str, value: object, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= 1000:
        raise _wrong(key, f"a whole number from {least} to 1000", value)
    return value


def _seconds(key: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _wrong(key, "a positive number of seconds", value)
    if not (math.isfinite(value) and 0 < value <= 3600):
        raise _wrong(key, "a positive number of seconds (at most 3600)", value)
    return float(value)


def _flag(key: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise _wrong(key, "true or false", value)
    return value


def _price(key: str, value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
        raise _wrong(key, "a price per million tokens (a number ≥ 0)", value)
    return float(value)


def _params(key: str, value: object) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise _wrong(key, "an object of call parameters", value)
    for name in value:
        if name not in _PARAMS:
            raise _wrong(f"{key}.{name}", f"one of {', '.join(sorted(_PARAMS))}", name)
    params = {**DEFAULT_PARAMS, **value}
    temperature = params["temperature"]
    if isinstance(temperature, bool) or not isinstance(temperature, int | float):
        raise _wrong(f"{key}.temperature", "a number", temperature)
    max_tokens = params["max_tokens"]
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise _wrong(f"{key}.max_tokens", "a whole number ≥ 1", max_tokens)
    return params
