"""The application's settings: one namespaced dict, ``settings.SYSPROMPT``.

Read them through :func:`app_settings`, which fills in defaults and refuses unknown keys
and values of the wrong type. Nothing is cached: every call reads ``django.conf.settings``
afresh, so ``override_settings`` and the pytest ``settings`` fixture just work.
"""

from __future__ import annotations

import difflib
import ipaddress
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from sysprompt.model_endpoints import ECHO, ModelEndpoint, endpoints_parse
from sysprompt_core.limits import (
    DEFAULT_GIT_MEMORY_LIMIT,
    DEFAULT_GIT_QUEUE_TIMEOUT,
    DEFAULT_GIT_RECYCLE_BYTES,
    DEFAULT_GIT_TIMEOUT,
    DEFAULT_GIT_WORKERS,
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_PROMPT_BYTES,
    DEFAULT_MAX_READ_BYTES,
    DEFAULT_MAX_TEMPLATE_BYTES,
    DEFAULT_PARSE_CACHE_BYTES,
)
from sysprompt_core.tokens import ratio_for
from sysprompt_core.variables import SERVER_RESOLVES_CHOICES, ResolverOptions

DEFAULT_TEMPLATE = (
    "You are a helpful coding assistant.\n"
    "[if file:AGENTS.md]\n"
    "[file:AGENTS.md]\n"
    "[endif]\n"
    "The current working directory is [prompt:cwd].\n"
)
DEFAULT_COMPACTION_INSTRUCTIONS = (
    "This conversation is being compacted: the messages so far will be replaced by your "
    "summary of them. Write a summary from which the work can continue without the "
    "original messages: the user's goals and constraints, the decisions made and why, "
    "the current state of the work (files changed, commands run and their results), "
    "open questions, and the next steps. Keep exact names, paths, identifiers and error "
    "messages. Leave out pleasantries and dead ends that no longer matter."
)
DEFAULT_WEBHOOK_TIMEOUT = 15.0
"""Seconds one webhook attempt may take, from connecting to the last byte read."""
DEFAULT_WEBHOOK_CONNECT_TIMEOUT = 5.0
"""Seconds connecting to a webhook's receiver (TCP and TLS) may take."""
DEFAULT_WEBHOOK_CONCURRENCY = 8
"""Webhook attempts one worker process makes at once (each to a different subscription)."""
MAX_WEBHOOK_CONCURRENCY = 64
"""The most ``WEBHOOK_CONCURRENCY`` may be: each is a thread and, at worst, a connection."""
DEFAULT_WEBHOOK_RETRY_WINDOW = 86_400.0
"""Seconds a failing delivery keeps being retried (a day) before it is given up."""
DEFAULT_TASKS_QUEUE = "default"
"""The task queue the events' tasks go to (with RQ: the Redis queue's name)."""
DEFAULT_EVAL_TASKS_QUEUE = "evaluations"
"""The task queue evaluation runs go to: their own, so a long run never delays a webhook."""
DEFAULT_EVAL_CLAIM_SECONDS = 30.0
"""How long an evaluation worker's claim on a model call lasts unless renewed: a worker
that died gives its calls up after it."""
DEFAULT_EVAL_MAX_OUTPUT_CHARS = 20_000
"""The most characters of a model's answer an evaluation keeps (and checks)."""
DEFAULT_EVAL_MAX_CALLS_PER_RUN = 1_000
"""The most model calls one run may make (its plan, judges included): a run that would
make more is refused as it starts, so one click never spends an account's month."""
DEFAULT_EVAL_MAX_RUNS_PER_USER = 2
"""Runs one user may have queued or running at once."""
TOKEN_RATIO_RANGE = (0.5, 3.0)
"""The least and the most a ``TOKEN_RATIOS`` ratio may be: a provider's tokenizer is not
half or three times as fine as ``o200k_base``; a ratio outside is a mistake."""
DEBUG_WEBHOOK_RECEIVERS = ("localhost", "127.0.0.1", "::1")
"""With ``DEBUG`` on (``scripts/serve``, the development server), the default of both
``WEBHOOK_ALLOW_HTTP_HOSTS`` and ``WEBHOOK_ALLOW_PRIVATE``: a receiver on this machine,
over plain http, can be tried without setting anything. With ``DEBUG`` off (production)
both default to empty: public https receivers only."""
KEYS = (
    "ALLOWED_ROOTS",
    "COMPACTION_INSTRUCTIONS",
    "DEFAULT_TEMPLATE",
    "EVAL_CLAIM_SECONDS",
    "EVAL_DAILY_BUDGET",
    "EVAL_DEFAULT_MODEL",
    "EVAL_MAX_CALLS_PER_RUN",
    "EVAL_MAX_OUTPUT_CHARS",
    "EVAL_MAX_RUNS_PER_USER",
    "EVAL_TASKS_QUEUE",
    "GIT_ALLOW_UNCONFINED",
    "GIT_LANDLOCK",
    "GIT_MEMORY_LIMIT",
    "GIT_QUEUE_TIMEOUT",
    "GIT_RECYCLE_BYTES",
    "GIT_TIMEOUT",
    "GIT_WORKERS",
    "MAX_FILE_BYTES",
    "MAX_PROMPT_BYTES",
    "MAX_READ_BYTES",
    "MAX_TEMPLATE_BYTES",
    "MCP_WRITE",
    "MODELS",
    "PARSE_CACHE_BYTES",
    "SERVER_RESOLVES",
    "TASKS_QUEUE",
    "TOKEN_RATIOS",
    "WEBHOOK_ALLOW_HTTP_HOSTS",
    "WEBHOOK_ALLOW_PRIVATE",
    "WEBHOOK_CA_FILE",
    "WEBHOOK_CONCURRENCY",
    "WEBHOOK_CONNECT_TIMEOUT",
    "WEBHOOK_RETRY_WINDOW",
    "WEBHOOK_TIMEOUT",
)
DEFAULT_SERVER_RESOLVES = SERVER_RESOLVES_CHOICES
"""Every host-local type: one machine runs the server and the agent hosts."""


@dataclass(frozen=True)
class AppSettings:
    """A validated snapshot of ``settings.SYSPROMPT`` with defaults filled in."""

    allowed_roots: tuple[str, ...]
    git_timeout: float
    max_file_bytes: int
    max_template_bytes: int
    default_template: str
    compaction_instructions: str
    max_prompt_bytes: int = DEFAULT_MAX_PROMPT_BYTES
    max_read_bytes: int = DEFAULT_MAX_READ_BYTES
    server_resolves: frozenset[str] = DEFAULT_SERVER_RESOLVES
    """The host-local types (``prompt``, ``git``, ``file``, ``system``) the server may
    resolve on its own machine when the agent host did not supply the value."""
    webhook_allow_http_hosts: frozenset[str] = frozenset()
    """Host names (lowercase) whose webhooks may use plain ``http``."""
    webhook_allow_private: tuple[str, ...] = ()
    """Host names (lowercase) and networks (``10.0.0.0/8``, ``127.0.0.1``) a webhook may
    reach although their addresses are loopback, private, link-local or otherwise special."""
    webhook_ca_file: str = ""
    """A PEM file of the certificate authorities webhook receivers are checked against;
    empty: certifi's bundle."""
    webhook_concurrency: int = DEFAULT_WEBHOOK_CONCURRENCY
    """Attempts a worker process makes at once, each to a different subscription."""
    webhook_connect_timeout: float = DEFAULT_WEBHOOK_CONNECT_TIMEOUT
    webhook_timeout: float = DEFAULT_WEBHOOK_TIMEOUT
    webhook_retry_window: float = DEFAULT_WEBHOOK_RETRY_WINDOW
    tasks_queue: str = DEFAULT_TASKS_QUEUE
    git_workers: int = DEFAULT_GIT_WORKERS
    """Git reader processes per server process (reads that may run at once)."""
    git_queue_timeout: float = DEFAULT_GIT_QUEUE_TIMEOUT
    """Seconds a git read may queue for a reader (free or starting) before its values
    are "busy"; the read's own ``git_timeout`` starts after."""
    git_memory_limit: int = DEFAULT_GIT_MEMORY_LIMIT
    """The address space of one git reader process, in bytes (``RLIMIT_AS``)."""
    git_recycle_bytes: int = DEFAULT_GIT_RECYCLE_BYTES
    """How much more resident memory than at its start a git reader may hold after a
    read, in bytes; one holding more is replaced."""
    git_landlock: bool = True
    """Whether git readers confine themselves with Landlock (off: to try what a host
    without Landlock does: they then read nothing unless ``git_allow_unconfined``)."""
    git_allow_unconfined: bool = False
    """Whether git readers that the kernel cannot confine (no Landlock, or no seccomp
    filter) read anyway: the operator's explicit acceptance (``manage.py check`` warns
    with ``sysprompt.W001``). Off: they read nothing, and ``git:`` values do not exist
    with the reason (``sysprompt.W002``, and an error logged at start)."""
    parse_cache_bytes: int = DEFAULT_PARSE_CACHE_BYTES
    """What the process's cache of parsed templates and fragments may hold, in bytes."""
    models: Mapping[str, ModelEndpoint] = field(default_factory=lambda: endpoints_parse({}))
    """The model endpoints evaluations may call, by name (``sysprompt.model_endpoints``)."""
    eval_default_model: str = ECHO
    """The endpoint a run uses when it names none: ``EVAL_DEFAULT_MODEL``, else the first
    real model (not of kind ``echo``) ``MODELS`` names, else the built-in ``echo``."""
    eval_max_output_chars: int = DEFAULT_EVAL_MAX_OUTPUT_CHARS
    eval_max_calls_per_run: int = DEFAULT_EVAL_MAX_CALLS_PER_RUN
    eval_max_runs_per_user: int = DEFAULT_EVAL_MAX_RUNS_PER_USER
    eval_daily_budget: float | None = None
    """What the runs started in one day (the server's ``TIME_ZONE``) may cost, in the
    models' price units (``price_input``/``price_output``); ``None``: no budget."""
    eval_tasks_queue: str = DEFAULT_EVAL_TASKS_QUEUE
    eval_claim_seconds: float = DEFAULT_EVAL_CLAIM_SECONDS
    mcp_write: bool = False
    """Whether ``/mcp`` offers the tools that change the working copy or move labels
    (to users with those permissions); off: read-only tools only."""
    token_ratios: Mapping[str, float] = field(default_factory=dict)
    """By provider (lowercase): the ratio an estimated token count (the ``o200k_base``
    count) is multiplied by, calibrated from the provider's reported usage
    (``manage.py token_ratios``); a provider not named: the plain count."""

    def token_ratio(self, provider: str | None) -> float | None:
        """The calibration ratio for ``provider`` (any case), or None."""
        return ratio_for(self.token_ratios, provider)


def app_settings() -> AppSettings:
    """Read, validate and complete ``settings.SYSPROMPT``.

    Raises ImproperlyConfigured for an unknown key or a value of the wrong type.
    """
    raw = _raw_settings()
    models = endpoints_parse(raw.get("MODELS", {}))
    return AppSettings(
        allowed_roots=_allowed_roots(raw.get("ALLOWED_ROOTS", [os.path.expanduser("~")])),
        git_timeout=_positive_number("GIT_TIMEOUT", raw.get("GIT_TIMEOUT", DEFAULT_GIT_TIMEOUT)),
        max_file_bytes=_positive_int(
            "MAX_FILE_BYTES", raw.get("MAX_FILE_BYTES", DEFAULT_MAX_FILE_BYTES)
        ),
        max_template_bytes=_positive_int(
            "MAX_TEMPLATE_BYTES", raw.get("MAX_TEMPLATE_BYTES", DEFAULT_MAX_TEMPLATE_BYTES)
        ),
        default_template=_text("DEFAULT_TEMPLATE", raw.get("DEFAULT_TEMPLATE", DEFAULT_TEMPLATE)),
        compaction_instructions=_text(
            "COMPACTION_INSTRUCTIONS",
            raw.get("COMPACTION_INSTRUCTIONS", DEFAULT_COMPACTION_INSTRUCTIONS),
        ),
        max_prompt_bytes=_positive_int(
            "MAX_PROMPT_BYTES", raw.get("MAX_PROMPT_BYTES", DEFAULT_MAX_PROMPT_BYTES)
        ),
        max_read_bytes=_positive_int(
            "MAX_READ_BYTES", raw.get("MAX_READ_BYTES", DEFAULT_MAX_READ_BYTES)
        ),
        server_resolves=_server_resolves(raw.get("SERVER_RESOLVES", DEFAULT_SERVER_RESOLVES)),
        webhook_allow_http_hosts=frozenset(
            _host_names(
                "WEBHOOK_ALLOW_HTTP_HOSTS",
                raw.get("WEBHOOK_ALLOW_HTTP_HOSTS", _webhook_receivers_default()),
            )
        ),
        webhook_allow_private=_hosts_or_networks(
            raw.get("WEBHOOK_ALLOW_PRIVATE", _webhook_receivers_default())
        ),
        webhook_ca_file=_ca_file(raw.get("WEBHOOK_CA_FILE", "")),
        webhook_concurrency=_webhook_concurrency(
            raw.get("WEBHOOK_CONCURRENCY", DEFAULT_WEBHOOK_CONCURRENCY)
        ),
        webhook_connect_timeout=_positive_number(
            "WEBHOOK_CONNECT_TIMEOUT",
            raw.get("WEBHOOK_CONNECT_TIMEOUT", DEFAULT_WEBHOOK_CONNECT_TIMEOUT),
        ),
        webhook_timeout=_positive_number(
            "WEBHOOK_TIMEOUT", raw.get("WEBHOOK_TIMEOUT", DEFAULT_WEBHOOK_TIMEOUT)
        ),
        webhook_retry_window=_positive_number(
            "WEBHOOK_RETRY_WINDOW", raw.get("WEBHOOK_RETRY_WINDOW", DEFAULT_WEBHOOK_RETRY_WINDOW)
        ),
        tasks_queue=_queue_name(raw.get("TASKS_QUEUE", DEFAULT_TASKS_QUEUE)),
        git_workers=_positive_int("GIT_WORKERS", raw.get("GIT_WORKERS", DEFAULT_GIT_WORKERS)),
        git_queue_timeout=_positive_number(
            "GIT_QUEUE_TIMEOUT", raw.get("GIT_QUEUE_TIMEOUT", DEFAULT_GIT_QUEUE_TIMEOUT)
        ),
        git_memory_limit=_positive_int(
            "GIT_MEMORY_LIMIT", raw.get("GIT_MEMORY_LIMIT", DEFAULT_GIT_MEMORY_LIMIT)
        ),
        git_recycle_bytes=_positive_int(
            "GIT_RECYCLE_BYTES", raw.get("GIT_RECYCLE_BYTES", DEFAULT_GIT_RECYCLE_BYTES)
        ),
        git_landlock=_boolean("GIT_LANDLOCK", raw.get("GIT_LANDLOCK", True)),
        git_allow_unconfined=_boolean(
            "GIT_ALLOW_UNCONFINED", raw.get("GIT_ALLOW_UNCONFINED", False)
        ),
        parse_cache_bytes=_positive_int(
            "PARSE_CACHE_BYTES", raw.get("PARSE_CACHE_BYTES", DEFAULT_PARSE_CACHE_BYTES)
        ),
        models=models,
        eval_default_model=_default_model(raw.get("EVAL_DEFAULT_MODEL"), models),
        eval_max_output_chars=_positive_int(
            "EVAL_MAX_OUTPUT_CHARS",
            raw.get("EVAL_MAX_OUTPUT_CHARS", DEFAULT_EVAL_MAX_OUTPUT_CHARS),
        ),
        eval_max_calls_per_run=_positive_int(
            "EVAL_MAX_CALLS_PER_RUN",
            raw.get("EVAL_MAX_CALLS_PER_RUN", DEFAULT_EVAL_MAX_CALLS_PER_RUN),
        ),
        eval_max_runs_per_user=_positive_int(
            "EVAL_MAX_RUNS_PER_USER",
            raw.get("EVAL_MAX_RUNS_PER_USER", DEFAULT_EVAL_MAX_RUNS_PER_USER),
        ),
        eval_daily_budget=_budget(raw.get("EVAL_DAILY_BUDGET")),
        eval_claim_seconds=_positive_number(
            "EVAL_CLAIM_SECONDS", raw.get("EVAL_CLAIM_SECONDS", DEFAULT_EVAL_CLAIM_SECONDS)
        ),
        eval_tasks_queue=_queue_name(
            raw.get("EVAL_TASKS_QUEUE", DEFAULT_EVAL_TASKS_QUEUE), "EVAL_TASKS_QUEUE"
        ),
        mcp_write=_boolean("MCP_WRITE", raw.get("MCP_WRITE", False)),
        token_ratios=_token_ratios(raw.get("TOKEN_RATIOS", {})),
    )


def _default_model(value: object, models: Mapping[str, ModelEndpoint]) -> str:
    """``EVAL_DEFAULT_MODEL`` checked, else the first real model named (``models`` keeps
    the settings' order after the built-in ``echo``), else ``echo``: with a real model
    configured, a run that names none never silently gets ``echo``."""
    if value is None:
        real = [name for name, endpoint in models.items() if endpoint.kind != "echo"]
        return real[0] if real else ECHO
    if not isinstance(value, str) or value not in models:
        raise _wrong("EVAL_DEFAULT_MODEL", f"one of the models: {', '.join(models)}", value)
    return value


def _budget(value: object) -> float | None:
    """``EVAL_DAILY_BUDGET``: a positive number in the models' price units, or None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _wrong("EVAL_DAILY_BUDGET", "a positive number (the models' price units)", value)
    if not (math.isfinite(value) and value > 0):
        raise _wrong("EVAL_DAILY_BUDGET", "a positive number (the models' price units)", value)
    return float(value)


def resolver_options(conf: AppSettings | None = None) -> ResolverOptions:
    """The variable resolvers' options, taken from the app settings (``conf``: a
    snapshot already read)."""
    conf = app_settings() if conf is None else conf
    return ResolverOptions(
        git_timeout=conf.git_timeout,
        allowed_roots=conf.allowed_roots,
        max_file_bytes=conf.max_file_bytes,
        max_read_bytes=conf.max_read_bytes,
        max_prompt_bytes=conf.max_prompt_bytes,
        git_workers=conf.git_workers,
        git_queue_timeout=conf.git_queue_timeout,
        git_memory_limit=conf.git_memory_limit,
        git_recycle_bytes=conf.git_recycle_bytes,
        git_landlock=conf.git_landlock,
        git_allow_unconfined=conf.git_allow_unconfined,
    )


def _webhook_receivers_default() -> tuple[str, ...]:
    """The webhook allowances when the operator set none: loopback with DEBUG on."""
    return DEBUG_WEBHOOK_RECEIVERS if settings.DEBUG else ()


def _raw_settings() -> Mapping[str, Any]:
    raw = getattr(settings, "SYSPROMPT", {})
    if not isinstance(raw, Mapping):
        raise ImproperlyConfigured(f"settings.SYSPROMPT must be a dict, not {type(raw).__name__}.")
    for key in raw:
        if key not in KEYS:
            raise ImproperlyConfigured(_unknown_key_message(key))
    return raw


def _unknown_key_message(key: object) -> str:
    hint = ""
    if isinstance(key, str) and (close := difflib.get_close_matches(key.upper(), KEYS, n=1)):
        hint = f" Did you mean {close[0]!r}?"
    return f"Unknown key {key!r} in settings.SYSPROMPT.{hint} Valid keys: {', '.join(KEYS)}."


def _wrong(key: str, expected: str, value: object) -> ImproperlyConfigured:
    return ImproperlyConfigured(f"settings.SYSPROMPT[{key!r}] must be {expected}; got {value!r}.")


def _allowed_roots(value: object) -> tuple[str, ...]:
    expected = "a list of absolute paths"
    if not isinstance(value, list | tuple):
        raise _wrong("ALLOWED_ROOTS", expected, value)
    for item in value:
        if not isinstance(item, str) or not os.path.isabs(item):
            raise _wrong("ALLOWED_ROOTS", expected, item)
    return tuple(os.path.normpath(item) for item in value)


def _server_resolves(value: object) -> frozenset[str]:
    choices = ", ".join(repr(kind) for kind in sorted(SERVER_RESOLVES_CHOICES))
    expected = f"a list of host-local types among {choices} (empty: none)"
    if not isinstance(value, list | tuple | set | frozenset):
        raise _wrong("SERVER_RESOLVES", expected, value)
    for item in value:
        if item not in SERVER_RESOLVES_CHOICES:
            raise _wrong("SERVER_RESOLVES", expected, item)
    return frozenset(value)


_HOST_NAME = re.compile(r"[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*")
_QUEUE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,31}")


def _host_names(key: str, value: object) -> tuple[str, ...]:
    """Host names or IP addresses, lowercased, a trailing dot dropped."""
    expected = "a list of host names or IP addresses"
    if not isinstance(value, list | tuple | set | frozenset):
        raise _wrong(key, expected, value)
    names = []
    for item in value:
        if not isinstance(item, str):
            raise _wrong(key, expected, item)
        name = item.strip().lower().removesuffix(".").strip("[]")
        if not (_HOST_NAME.fullmatch(name) or _is_address(name)):
            raise _wrong(key, expected, item)
        names.append(name)
    return tuple(names)


def _hosts_or_networks(value: object) -> tuple[str, ...]:
    """Host names (as :func:`_host_names`) and networks (``10.0.0.0/8``), each checked."""
    key, expected = "WEBHOOK_ALLOW_PRIVATE", "a list of host names, addresses or networks"
    if not isinstance(value, list | tuple | set | frozenset):
        raise _wrong(key, expected, value)
    entries = []
    for item in value:
        if isinstance(item, str) and "/" in item:
            try:
                entries.append(str(ipaddress.ip_network(item.strip(), strict=False)))
            except ValueError:
                raise _wrong(key, expected, item) from None
        else:
            entries.extend(_host_names(key, [item]))
    return tuple(entries)


def _is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _ca_file(value: object) -> str:
    if not isinstance(value, str) or (value and not os.path.isabs(value)):
        raise _wrong("WEBHOOK_CA_FILE", "an absolute path to a PEM file, or empty", value)
    return value


def _queue_name(value: object, key: str = "TASKS_QUEUE") -> str:
    if not isinstance(value, str) or not _QUEUE_NAME.fullmatch(value):
        raise _wrong(key, "a queue name of up to 32 letters, digits, . _ -", value)
    return value


def _positive_number(key: str, value: object) -> float:
    expected = "a positive number of seconds"
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _wrong(key, expected, value)
    if not (math.isfinite(value) and value > 0):
        raise _wrong(key, expected, value)
    return float(value)


def _positive_int(key: str, value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise _wrong(key, "a positive whole number", value)
    return value


def _webhook_concurrency(value: object) -> int:
    count = _positive_int("WEBHOOK_CONCURRENCY", value)
    if count > MAX_WEBHOOK_CONCURRENCY:
        raise _wrong(
            "WEBHOOK_CONCURRENCY", f"a whole number from 1 to {MAX_WEBHOOK_CONCURRENCY}", value
        )
    return count


def _token_ratios(value: object) -> dict[str, float]:
    low, high = TOKEN_RATIO_RANGE
    expected = f"a number from {low:g} to {high:g}"
    if not isinstance(value, Mapping):
        raise _wrong(
            "TOKEN_RATIOS", 'an object of provider names to ratios ({"anthropic": 1.18})', value
        )
    ratios: dict[str, float] = {}
    for provider, ratio in value.items():
        name = provider.strip().lower() if isinstance(provider, str) else ""
        if not name:
            raise _wrong("TOKEN_RATIOS", "keyed by provider names", provider)
        if name in ratios:
            raise ImproperlyConfigured(
                f"settings.SYSPROMPT['TOKEN_RATIOS'] names {name!r} twice (in another case)."
            )
        if (
            isinstance(ratio, bool)
            or not isinstance(ratio, int | float)
            or not (math.isfinite(ratio) and low <= ratio <= high)
        ):
            raise ImproperlyConfigured(
                f"settings.SYSPROMPT['TOKEN_RATIOS'][{provider!r}] must be {expected}; "
                f"got {ratio!r}."
            )
        ratios[name] = float(ratio)
    return ratios


def _boolean(key: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise _wrong(key, "true or false", value)
    return value


def _text(key: str, value: object) -> str:
    if not isinstance(value, str):
        raise _wrong(key, "a string", value)
    return value
