"""What the sync and the async client share: settings, the cache, request building,
answer parsing, retry decisions and the fallback. No I/O happens here except the
directory cache's, which the clients call through ``io`` callables (the async client
runs them in a worker thread)."""

from __future__ import annotations

import contextlib
import email.utils
import logging
import math
import os
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

import httpx

from sysprompt_client.cache import DirectoryCache, Entry, MemoryCache, cache_key
from sysprompt_client.errors import (
    InvalidRequest,
    ServerError,
    SyspromptError,
    Unavailable,
    error_for,
)
from sysprompt_client.local import host_keys, host_resolves_from_json, references_from_json
from sysprompt_client.results import (
    Caller,
    CompactResult,
    PromptResult,
    Template,
    caller_from_json,
    context_mismatch,
    kept_from_json,
    prompt_from_json,
    template_from_response,
    text_sha256,
)
from sysprompt_core.prompt_names import PROMPT_NAME_RULE, is_prompt_name

log = logging.getLogger("sysprompt_client")

FallbackText = str | Callable[[str], str | None]
"""A fallback prompt: a fixed text, or a function of the conversation id giving the
text (``None``: send no system prompt)."""
Fallback = FallbackText | Mapping[str | None, FallbackText] | None
"""The client's fallback: one for every prompt, or one per named prompt (the key
``None``: a call that names no prompt; a prompt not in the mapping has none). ``None``
here: no fallback, raise instead."""
Override = str | Mapping[str, Any]
IO = Callable[[], None] | None

USER_AGENT = "sysprompt-client/0.1.0"
RETRY_STATUSES = frozenset({429, 502, 503, 504})
REFERENCES_RECHECK = 300.0
"""Seconds before asking again for references after the server answered 404."""
REFERENCES_KEPT = 256

_monotonic = time.monotonic


@dataclass(frozen=True, slots=True)
class References:
    """A references answer: the ``type:name`` keys the template can reach, and the
    host-local types the server leaves to the host (``None``: it did not say)."""

    keys: tuple[str, ...]
    host_resolves: frozenset[str] | None = None


@dataclass(frozen=True, slots=True)
class Call:
    """One API request: ``retry`` when it is idempotent and may be sent again."""

    method: str
    path: str
    retry: bool
    body: dict[str, Any] | None = None
    headers: Mapping[str, str] | None = None
    params: Mapping[str, str] | None = None


def conversation_path(conversation_id: str, action: str = "") -> str:
    """The API path of a conversation's prompt; the id is percent-encoded, so no id
    can reach another path (the server answers 400 for an invalid one)."""
    tail = f"/{action}" if action else ""
    return f"/api/conversations/{quote(conversation_id, safe=':')}/system-prompt{tail}"


def retry_after(response: httpx.Response) -> float | None:
    """The seconds a ``Retry-After`` header asks for (a number or an HTTP date)."""
    value = response.headers.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    seconds: float = (when - datetime.now(UTC)).total_seconds()
    return max(0.0, seconds)


def _references_key(call: Call) -> tuple[str, str, str, str]:
    assert call.params is not None
    params = call.params
    return params["provider"], params["model"], params.get("label", ""), call.path


def prompt_path(prompt: str | None, action: str) -> str:
    """The API path of ``action`` (``system-prompt/references``…) for the named
    ``prompt`` (``/api/prompts/<name>/-/<action>``; the name keeps its ``/``: a segment
    never starts with ``-``), or today's route, which means the default, for ``None``."""
    if prompt is None:
        return f"/api/{action}"
    return f"/api/prompts/{quote(prompt, safe='/')}/-/{action}"


def fragment_path(name: str) -> str:
    """The API path of a fragment's variant; ``/-`` ends the name, so a fragment whose
    last segment is ``versions`` is that fragment too (docs/api-reference.md)."""
    return f"/api/library/fragments/{quote(name, safe='/')}/-"


def variant_params(provider: str | None, model: str | None) -> dict[str, str] | None:
    """The query naming a variant (none: the default variant)."""
    params = {key: value for key, value in (("provider", provider), ("model", model)) if value}
    return params or None


def unavailable(error: httpx.RequestError) -> Unavailable:
    if isinstance(error, httpx.TimeoutException):
        what = f"the sysprompt server did not answer in time ({type(error).__name__})"
    else:
        what = f"the sysprompt server could not be reached: {error or type(error).__name__}"
    return Unavailable(what)


def prompt_checked(prompt: str | None) -> str | None:
    """``prompt`` when it follows the name rule (``None`` stays ``None``);
    ``ValueError`` naming the rule otherwise."""
    if prompt is not None and not is_prompt_name(prompt):
        raise ValueError(f"prompt: {prompt!r} is not a prompt name: {PROMPT_NAME_RULE}")
    return prompt


class ClientBase:
    """Settings and state of a client; see :class:`sysprompt_client.Client`."""

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        max_age: float = 60.0,
        fallback: Fallback = None,
        cache_size: int = 1024,
        cache_dir: str | os.PathLike[str] | None = None,
        timeout: float | httpx.Timeout = 10.0,
        retries: int = 2,
        backoff: float = 0.25,
        max_retry_wait: float = 10.0,
        max_revalidations: int = 4,
        resolve_locally: bool | None = None,
        allowed_roots: Sequence[str | os.PathLike[str]] | None = None,
        headers: Mapping[str, str] | None = None,
        label: str | None = None,
        prompt: str | None = None,
    ) -> None:
        if max_age < 0 or retries < 0 or backoff < 0 or max_retry_wait < 0:
            raise ValueError("max_age, retries, backoff and max_retry_wait must not be negative")
        if max_revalidations < 1:
            raise ValueError("max_revalidations must be at least 1")
        self.base_url = base_url.rstrip("/")
        self.max_age = float(max_age)
        self.fallback = fallback
        self.retries = retries
        self.backoff = backoff
        self.max_retry_wait = max_retry_wait
        self.max_revalidations = max_revalidations
        self.resolve_locally = resolve_locally
        self.label = label
        self.prompt = prompt_checked(prompt)
        self.allowed_roots = (
            None if allowed_roots is None else tuple(os.fspath(root) for root in allowed_roots)
        )
        self.timeout = timeout if isinstance(timeout, httpx.Timeout) else httpx.Timeout(timeout)
        self._headers = {
            "Authorization": f"Token {token}",
            "Accept": "application/json",
            "User-Agent": USER_AGENT,
            **(headers or {}),
        }
        self._memory = MemoryCache(cache_size)
        self._directory = None if cache_dir is None else DirectoryCache(cache_dir, self.base_url)
        self._references: dict[tuple[str, str, str, str], tuple[str, References]] = {}
        self._references_missing_until = 0.0
        self._server_resolves_all_until = 0.0
        self._mismatch_told: OrderedDict[str, None] = OrderedDict()
        self._closed = False

    @property
    def cache(self) -> MemoryCache:
        """The in-memory cache (read it to inspect; the client writes it)."""
        return self._memory

    def _label(self, label: str | None) -> str | None:
        """The label a call asks for: its own, else the client's (``None``: none; the
        server then uses the agent host's label, else production)."""
        return self.label if label is None else label

    def _prompt_name(self, prompt: str | None) -> str | None:
        """The named prompt a call asks for: its own, else the client's (``None``: none;
        the server then uses the agent host's default prompt, else ``default``)."""
        return self.prompt if prompt is None else prompt

    def _for_turn(
        self,
        result: PromptResult,
        cwd: str,
        model: str | None,
        provider: str | None,
        entry: Entry | None = None,
    ) -> PromptResult:
        """``result`` as this turn answers it: itself when the turn's ``cwd``, ``model``
        and ``provider`` match the frozen context, else a copy naming what differs
        (``context_mismatch``; kept on the cache ``entry`` it came from, so that turns
        differing alike get the same object), with one warning per conversation (the
        newest ``cache_size`` conversations are remembered)."""
        differs = context_mismatch(result, cwd=cwd, model=model, provider=provider)
        if not differs:
            return result if not result.context_mismatch else replace(result, context_mismatch=())
        kept = None if entry is None else entry.mismatched
        if kept is not None and kept.context_mismatch == differs:
            return kept
        conversation_id = result.conversation_id or ""
        told = self._mismatch_told
        if conversation_id not in told:
            told[conversation_id] = None
            while len(told) > self._memory.max_entries:
                with contextlib.suppress(KeyError):
                    told.popitem(last=False)
            log.warning(
                "sysprompt: conversation %r keeps the prompt frozen for cwd=%r, model=%r, "
                "provider=%r; this turn's %s differ(s) and still gets it (construct or "
                "compact rebuilds it). Said once per conversation.",
                conversation_id,
                result.cwd,
                result.model,
                result.provider,
                ", ".join(differs),
            )
        answer = replace(result, context_mismatch=differs)
        if entry is not None:
            entry.mismatched = answer
        return answer

    # Requests -----------------------------------------------------------------------

    def _url(self, path: str) -> str:
        return self.base_url + path

    def _delay(self, call: Call, attempt: int, response: httpx.Response | None) -> float | None:
        """Seconds to wait before sending ``call`` again, or ``None``: do not."""
        if not call.retry or attempt >= self.retries:
            return None
        if response is not None:
            if response.status_code not in RETRY_STATUSES:
                return None
            asked = retry_after(response)
            if asked is not None:
                return asked if asked <= self.max_retry_wait else None
        return min(self.backoff * 2.0**attempt, self.max_retry_wait)

    @staticmethod
    def _json(response: httpx.Response) -> Any:
        """The decoded answer of a success; the typed exception of an error."""
        try:
            data = response.json() if response.content else None
        except ValueError:
            data = None
            if response.is_success:
                raise ServerError(
                    "the server's answer is not JSON", status=response.status_code
                ) from None
        if response.status_code >= 400:
            raise error_for(response.status_code, data, response.reason_phrase)
        return data

    @staticmethod
    def _prompt(data: Any, conversation_id: str, text_key: str = "system_prompt") -> PromptResult:
        try:
            return prompt_from_json(data, conversation_id, text_key=text_key)
        except ValueError as error:
            raise ServerError(f"unexpected answer from the server: {error}") from None

    @staticmethod
    def _body(
        cwd: str | None,
        model: str | None,
        provider: str | None,
        tools: Sequence[str] | None,
        variables: Mapping[str, str] | None,
        override: Override | None,
        values: Mapping[str, str | None] | None,
        label: str | None = None,
        prompt: str | None = None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {} if cwd is None else {"cwd": cwd}
        if prompt is not None:
            body["prompt"] = prompt
        if label is not None:
            body["label"] = label
        if model is not None:
            body["model"] = model
        if provider is not None:
            body["provider"] = provider
        if tools is not None:
            body["tools"] = list(tools)
        if variables is not None:
            body["variables"] = dict(variables)
        if override is not None:
            body["override"] = override if isinstance(override, str) else dict(override)
        if values:
            body["values"] = dict(values)
        return body

    @staticmethod
    def _save_template_call(text: str, if_match: str | None, compress: bool | None) -> Call:
        headers = {"If-Match": if_match} if if_match else None
        body: dict[str, Any] = {"template": text}
        if compress is not None:
            body["compress"] = compress
        return Call("PUT", "/api/system-prompt", False, body, headers)

    @staticmethod
    def _preview_call(
        template: str | None, conversation_id: str | None, context: dict[str, Any]
    ) -> Call:
        body = {**context}
        if template is not None:
            body["template"] = template
        if conversation_id is not None:
            body["conversation_id"] = conversation_id
        return Call("POST", "/api/system-prompt/preview", True, body)  # stores nothing

    # The library and labels: requests and answers -------------------------------------

    @staticmethod
    def _library_call(search: str | None) -> Call:
        return Call("GET", "/api/library", True, params={"search": search} if search else None)

    @staticmethod
    def _prompts_call(folder: str | None, search: str | None) -> Call:
        params = {k: v for k, v in (("folder", folder), ("search", search)) if v}
        return Call("GET", "/api/prompts", True, params=params or None)

    @staticmethod
    def _labels_call() -> Call:
        return Call("GET", "/api/labels", True)

    @staticmethod
    def _preview_fragment_call(
        name: str, cwd: str, provider: str | None, model: str | None
    ) -> Call:
        body: dict[str, Any] = {"cwd": cwd, "fragment": name}
        if provider is not None:
            body["provider"] = provider
        if model is not None:
            body["model"] = model
        return Call("POST", "/api/library/preview", True, body)  # stores nothing

    @staticmethod
    def _save_fragment_call(
        name: str, text: str, provider: str | None, model: str | None, if_match: str | None
    ) -> Call:
        headers = {"If-Match": if_match} if if_match else None
        params = variant_params(provider, model)
        return Call("PUT", fragment_path(name), False, {"text": text}, headers, params)

    @staticmethod
    def _delete_fragment_call(name: str, provider: str | None, model: str | None) -> Call:
        return Call("DELETE", fragment_path(name), False, params=variant_params(provider, model))

    @staticmethod
    def _set_label_call(name: str, target: Any, message: str | None) -> Call:
        body: dict[str, Any] = {"target": target}
        if message is not None:
            body["message"] = message
        return Call("PUT", f"/api/labels/{quote(name, safe='')}", False, body)

    @staticmethod
    def _create_release_call(message: str | None) -> Call:
        return Call("POST", "/api/releases", False, {} if message is None else {"message": message})

    def _caller(self, response: httpx.Response) -> Caller:
        try:
            return caller_from_json(self._json(response))
        except ValueError as error:
            raise ServerError(f"unexpected answer from the server: {error}") from None

    def _object(self, response: httpx.Response) -> dict[str, Any]:
        """The JSON object a success answers; the typed exception of an error."""
        data = self._json(response)
        if not isinstance(data, dict):
            raise ServerError("unexpected answer from the server: not a JSON object")
        return data

    def _page(self, response: httpx.Response) -> tuple[list[dict[str, Any]], Call | None]:
        """A cursor page's results, and the request of the next page (``None``: the
        last one)."""
        page = self._object(response)
        items = page.get("results")
        if not isinstance(items, list):
            raise ServerError("unexpected answer from the server: a page without results")
        following = page.get("next")
        if not isinstance(following, str) or not following:
            return [item for item in items if isinstance(item, dict)], None
        if following.startswith(self.base_url + "/"):
            path = following[len(self.base_url) :]
        else:
            path = httpx.URL(following).raw_path.decode("ascii")
        return [item for item in items if isinstance(item, dict)], Call("GET", path, True)

    def _template(self, response: httpx.Response) -> Template:
        data = self._json(response)
        try:
            return template_from_response(data, response.headers.get("etag"))
        except ValueError as error:
            raise ServerError(f"unexpected answer from the server: {error}") from None

    def _asks_references(self) -> bool:
        """Whether a build asks for the references to resolve host-local values: never
        with ``resolve_locally=False``; by default (``None``) not while the server is
        known to resolve every host-local type itself (it said so less than
        ``REFERENCES_RECHECK`` seconds ago); always with ``True``."""
        if self.resolve_locally is None:
            return _monotonic() >= self._server_resolves_all_until
        return self.resolve_locally

    def _host_keys(self, references: References) -> list[str]:
        """Which of the references this host resolves (see ``local.host_keys``)."""
        return host_keys(
            references.keys, references.host_resolves, everything=self.resolve_locally is True
        )

    def _references_call(
        self,
        provider: str | None,
        model: str | None,
        label: str | None = None,
        prompt: str | None = None,
    ) -> Call | None:
        """The references request (for ``label``: the template and library it serves;
        for ``prompt``: that prompt's), or ``None`` while the server is known not to
        have the endpoint."""
        if _monotonic() < self._references_missing_until:
            return None
        params = {"provider": provider or "", "model": model or ""}
        if label is not None:
            params["label"] = label
        call = Call("GET", prompt_path(prompt, "system-prompt/references"), True, params=params)
        known = self._references.get(_references_key(call))
        return call if not known else replace(call, headers={"If-None-Match": known[0]})

    def _references_answer(self, call: Call, response: httpx.Response) -> References:
        key = _references_key(call)
        if response.status_code == 304 and key in self._references:
            return self._learned(self._references[key][1])
        if response.status_code == 404 and call.path.startswith("/api/prompts/"):
            # A prompt unknown (or not allowed to this host): the build says so.
            return References(())
        if response.status_code == 404:
            # A server from before the references resolves every value itself; only a
            # host that asked to resolve its values needs to hear it.
            log.log(
                logging.WARNING if self.resolve_locally else logging.INFO,
                "sysprompt: the server has no /api/system-prompt/references; "
                "host-local values are not sent (asking again in %.0f s)",
                REFERENCES_RECHECK,
            )
            self._references_missing_until = _monotonic() + REFERENCES_RECHECK
            return References(())
        data = self._json(response)
        try:
            found = References(references_from_json(data), host_resolves_from_json(data))
        except ValueError as error:
            raise ServerError(f"unexpected references answer: {error}") from None
        etag = response.headers.get("etag")
        if etag:
            if len(self._references) >= REFERENCES_KEPT:
                self._references.clear()
            self._references[key] = (etag, found)
        return self._learned(found)

    def _learned(self, found: References) -> References:
        """Remember for ``REFERENCES_RECHECK`` seconds that the server resolves every
        host-local type itself, when it says so: a default client then asks no
        references before a build."""
        if found.host_resolves == frozenset():
            self._server_resolves_all_until = _monotonic() + REFERENCES_RECHECK
        return found

    # The cache ----------------------------------------------------------------------

    def _entry(
        self, result: PromptResult, label: str | None, prompt: str | None, age: float = 0.0
    ) -> Entry:
        stale_at = math.inf if result.is_fallback else _monotonic() + self.max_age - age
        return Entry(result, stale_at, label, prompt)

    def _install(
        self, result: PromptResult, label: str | None, prompt: str | None = None
    ) -> tuple[Entry, IO]:
        """Cache ``result``, asked for under ``label`` and of ``prompt``, as later turns
        will answer it; the directory write to run."""
        cached = replace(result, from_cache=True, context_mismatch=())
        entry = self._entry(cached, label, prompt)
        self._memory.put(entry.key, entry)
        return entry, self._saver(cached, label, prompt)

    def _saver(self, cached: PromptResult, label: str | None, prompt: str | None) -> IO:
        directory = self._directory
        if directory is None:
            return None
        return lambda: directory.save(cached, label=label, prompt=prompt)

    def _loaded(
        self,
        label: str | None,
        prompt: str | None,
        stored: tuple[PromptResult, float] | None,
    ) -> Entry:
        """Put what the directory held into memory (kept if another turn was faster)."""
        assert stored is not None
        result, saved_at = stored
        entry = self._entry(result, label, prompt, age=max(0.0, time.time() - saved_at))
        current = self._memory.peek(entry.key)
        if current is not None:
            return current
        self._memory.put(entry.key, entry)
        return entry

    def _cached_frozen(
        self, conversation_id: str, label: str | None, prompt: str | None = None
    ) -> PromptResult | None:
        """The conversation's frozen prompt as the cache holds it (not a fallback: the
        server stores none)."""
        entry = self._memory.peek(cache_key(conversation_id, label, prompt))
        return None if entry is None or entry.result.is_fallback else entry.result

    @staticmethod
    def _needs_frozen(cwd: str | None, model: str | None, provider: str | None) -> bool:
        """Whether a compaction leaves out a field the host needs to resolve its values
        (``cwd``, and ``model`` and ``provider``, which choose the references)."""
        return cwd is None or model is None or provider is None

    @staticmethod
    def _values_context(
        conversation_id: str,
        frozen: PromptResult | None,
        cwd: str | None,
        model: str | None,
        provider: str | None,
    ) -> tuple[str, str | None, str | None]:
        """``cwd``, ``model`` and ``provider`` of a compaction's host-local values: those
        given, the rest the frozen context's (what the server keeps);
        :class:`InvalidRequest` naming ``cwd`` when none is given and the conversation has
        no stored prompt."""
        if frozen is None:
            if cwd is None:
                message = (
                    f"Conversation {conversation_id!r} has no stored prompt yet: give cwd, "
                    "the conversation's working directory."
                )
                raise InvalidRequest(f"cwd: {message}", status=400, errors={"cwd": [message]})
            return cwd, model, provider
        return (
            cwd if cwd is not None else frozen.cwd or "",
            model if model is not None else frozen.model,
            provider if provider is not None else frozen.provider,
        )

    def _compacted(self, data: Any, conversation_id: str) -> CompactResult:
        prompt = self._prompt(data, conversation_id, "persisted_system_prompt")
        compaction = data.get("system_prompt") if isinstance(data, dict) else None
        return CompactResult(
            compaction_prompt=compaction if isinstance(compaction, str) else None,
            prompt=prompt,
            context_kept=kept_from_json(data),
        )

    def _fallback_of(self, prompt: str | None) -> FallbackText | None:
        """The fallback of a call asking for ``prompt`` (``None``: none named)."""
        fallback = self.fallback
        if fallback is None or isinstance(fallback, str) or callable(fallback):
            return fallback
        return fallback.get(prompt)

    def _fallback_result(
        self, conversation_id: str, error: SyspromptError, prompt: str | None = None
    ) -> PromptResult:
        """The fallback (of ``prompt``) for a first turn the server could not answer;
        ``error`` again when there is no fallback."""
        fallback = self._fallback_of(prompt)
        if fallback is None:
            raise error
        text = fallback if isinstance(fallback, str) else fallback(conversation_id)
        log.warning(
            "sysprompt: conversation %r%s uses the fallback prompt until compaction: %s",
            conversation_id,
            "" if prompt is None else f" (prompt {prompt!r})",
            error,
        )
        return PromptResult(
            text=text,
            sha256=text_sha256(text),
            is_fallback=True,
            conversation_id=conversation_id,
            prompt=prompt,
        )

    def _forget_local(
        self, conversation_id: str, label: str | None, prompt: str | None = None
    ) -> tuple[bool, IO]:
        had = self._memory.pop(cache_key(conversation_id, label, prompt)) is not None
        directory = self._directory
        if directory is None:
            return had, None
        return had, lambda: directory.delete(conversation_id, label, prompt)

    # Revalidation --------------------------------------------------------------------

    def _revalidate_call(self, entry: Entry) -> Call:
        conversation_id = entry.result.conversation_id
        assert conversation_id is not None
        sha = entry.result.sha256
        headers = {"If-None-Match": f'"{sha}"'} if sha else None
        return Call("GET", conversation_path(conversation_id), False, headers=headers)

    def _revalidated(self, entry: Entry, response: httpx.Response | None) -> IO:
        """Apply a revalidation's answer (``None``: it failed): 304 or the same prompt
        refresh the age; another prompt replaces the entry; 404 forgets it; anything
        else keeps it and waits ``max_age`` before asking again."""
        fresh = _monotonic() + self.max_age
        status = 0 if response is None else response.status_code
        conversation_id, key, label = entry.result.conversation_id, entry.key, entry.label
        prompt = entry.prompt
        assert conversation_id is not None
        if status == 404:
            if self._memory.replace(key, entry, None) and self._directory:
                directory = self._directory
                return lambda: directory.delete(conversation_id, label, prompt)
            return None
        if status == 200 and response is not None:
            try:
                result = prompt_from_json(response.json(), conversation_id, from_cache=True)
            except ValueError as error:
                log.warning("sysprompt: revalidating %r: %s", conversation_id, error)
            else:
                if result.sha256 != entry.result.sha256 or result.text != entry.result.text:
                    new = Entry(result, fresh, label, prompt)
                    if self._memory.replace(key, entry, new):
                        return self._saver(result, label, prompt)
                    return None
        elif status != 304:
            what = "no answer" if response is None else f"HTTP {status}"
            log.info("sysprompt: revalidating %r failed (%s)", conversation_id, what)
        entry.stale_at = fresh
        return None
