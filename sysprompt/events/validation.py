"""Checks of what an author gives a webhook subscription: its URL and its event types.

A URL must be ``https`` (``http`` only for hosts in ``SYSPROMPT_WEBHOOK_ALLOW_HTTP_HOSTS``),
name a host (an address literal must be public unless allowed — refused with one
sentence whatever the reason, so it tells nothing of the server's own addresses; a
name is checked on every delivery, on the address it resolves to, see ``sending``),
carry no user name or
password (the URL shows on pages and in the audit log's object) and no fragment. It is
stored normalised: the scheme and host lowercased, an international host name in its
ASCII form, an empty path as ``/``.

Each refusal is :class:`~sysprompt.errors.InvalidInput` naming the field.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import SplitResult, urlsplit, urlunsplit

from sysprompt.conf import AppSettings, app_settings
from sysprompt.errors import InvalidInput
from sysprompt.events.addresses import AllowList, address_literal
from sysprompt.events.catalog import EVENT_TYPES, URL_MAX_LENGTH
from sysprompt_core.prompt_names import InvalidPromptName, folder_check, prompt_name_check


class AddressRefused(InvalidInput):
    """An address literal webhooks may not reach. The message is the same for every such
    address (the machine's own included); ``detail`` says why, for the operator's log."""

    def __init__(self, field: str, message: str, *, detail: str) -> None:
        super().__init__(field, message)
        self.detail = detail


_LABEL = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)")


def webhook_url_valid(url: object, conf: AppSettings | None = None) -> str:
    """``url`` checked and normalised (see the module docstring)."""
    conf = app_settings() if conf is None else conf
    if not isinstance(url, str) or not url:
        raise InvalidInput("url", "Give the receiver's URL, e.g. https://ci.example.com/hooks.")
    if len(url) > URL_MAX_LENGTH:
        raise InvalidInput("url", f"The URL is {len(url):,} characters; the limit is 2,000.")
    if any(character.isspace() or ord(character) < 32 for character in url):
        raise InvalidInput("url", "The URL holds a space or a control character.")
    parts = _split(url)
    scheme = parts.scheme.lower()
    host = _host(parts)
    if scheme not in ("https", "http"):
        raise InvalidInput("url", f"{scheme or 'A URL without a scheme'}: webhooks use https.")
    if scheme == "http" and host not in conf.webhook_allow_http_hosts:
        raise InvalidInput(
            "url",
            f"Webhooks use https; http only for hosts the operator lists in "
            f"SYSPROMPT_WEBHOOK_ALLOW_HTTP_HOSTS, and {host} is not one of them.",
        )
    if parts.username is not None or parts.password is not None:
        raise InvalidInput(
            "url",
            "The URL holds a user name or password: it would show on pages and in the "
            "audit log. Put credentials into the receiver's check of the signature instead.",
        )
    if parts.fragment or url.endswith("#"):
        raise InvalidInput("url", "The URL has a #fragment, which is never sent; leave it out.")
    literal = address_literal(host)
    if literal is not None:
        reason = AllowList.parse(conf.webhook_allow_private).refusal(host, literal)
        if reason is not None:
            raise AddressRefused(
                "url",
                f"{host} is not an address webhooks may reach: a receiver needs a public "
                "address, or one the operator allows (SYSPROMPT_WEBHOOK_ALLOW_PRIVATE).",
                detail=reason,
            )
    netloc = f"[{host}]" if literal is not None and literal.version == 6 else host
    if parts.port is not None:
        netloc += f":{parts.port}"
    return urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))


def _split(url: str) -> SplitResult:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port out of range or not a number
    except ValueError as error:
        raise InvalidInput("url", f"The URL cannot be read: {error}.") from None
    return parts


def _host(parts: SplitResult) -> str:
    host = (parts.hostname or "").removesuffix(".")
    if not host:
        raise InvalidInput("url", "The URL names no host.")
    if address_literal(host) is not None:
        return host
    try:
        ascii_host = host.encode("idna").decode("ascii").lower()
    except UnicodeError:
        raise InvalidInput("url", f"{host!r} is not a valid host name.") from None
    if len(ascii_host) > 253 or not all(_LABEL.fullmatch(label) for label in ascii_host.split(".")):
        raise InvalidInput("url", f"{host!r} is not a valid host name.")
    return ascii_host


def webhook_events_valid(events: object) -> list[str]:
    """The event types, each known and once, in the catalog's order."""
    known = ", ".join(EVENT_TYPES)
    if not isinstance(events, list | tuple) or not events:
        raise InvalidInput("events", f"Choose at least one event type among {known}.")
    for event in events:
        if event not in EVENT_TYPES:
            raise InvalidInput("events", f"{event!r} is no event type; choose among {known}.")
    return _ordered(events)


def _ordered(events: Iterable[object]) -> list[str]:
    wanted = set(events)
    return [event for event in EVENT_TYPES if event in wanted]


WEBHOOK_PROMPTS_MAX = 100
"""The most prompt names and folders one subscription filters on."""


def webhook_prompts_valid(prompts: object) -> list[str]:
    """The prompts a subscription receives events of: names or folders (``support/``),
    each checked with the name rule (a 400 naming ``prompts``), once each, sorted;
    ``[]``: every prompt. A name need not exist yet (a subscription may wait for a
    prompt to be made)."""
    if not isinstance(prompts, list | tuple) or len(prompts) > WEBHOOK_PROMPTS_MAX:
        raise InvalidInput(
            "prompts",
            f"A list of at most {WEBHOOK_PROMPTS_MAX} prompt names or folders ending in "
            '"/" (support/triage, support/); [] for every prompt.',
        )
    chosen: set[str] = set()
    for item in prompts:
        try:
            if isinstance(item, str) and item.endswith("/"):
                chosen.add(folder_check(item, "prompts"))
            else:
                chosen.add(prompt_name_check(item, "prompts"))
        except InvalidPromptName as error:
            raise InvalidInput("prompts", error.message) from None
    return sorted(chosen)
