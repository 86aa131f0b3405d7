"""The synchronous client. Safe to share between threads."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from typing import Any

import httpx

from sysprompt_client._base import (
    IO,
    Call,
    ClientBase,
    Fallback,
    Override,
    References,
    conversation_path,
    log,
    unavailable,
)
from sysprompt_client.cache import Entry, cache_key
from sysprompt_client.errors import NotFound, ServerError
from sysprompt_client.local import resolve_host_values
from sysprompt_client.results import Caller, CompactResult, PromptResult, Template

__all__ = ["Client"]

_monotonic = time.monotonic


class Client(ClientBase):
    """An agent host's connection to a sysprompt server.

    ``system_prompt`` is the call of every turn: the first asks the server, the later
    ones are answered from the cache without a request, and a cached prompt older than
    ``max_age`` seconds is revalidated in a background thread while the turn is
    answered at once. See ``docs/agent-hosts.md`` for every option.
    """

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
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        super().__init__(
            base_url,
            token,
            max_age=max_age,
            fallback=fallback,
            cache_size=cache_size,
            cache_dir=cache_dir,
            timeout=timeout,
            retries=retries,
            backoff=backoff,
            max_retry_wait=max_retry_wait,
            max_revalidations=max_revalidations,
            resolve_locally=resolve_locally,
            allowed_roots=allowed_roots,
            headers=headers,
            label=label,
            prompt=prompt,
        )
        self._http = httpx.Client(timeout=self.timeout, transport=transport)
        self._lock = threading.Lock()
        self._inflight: dict[str, Future[PromptResult]] = {}
        self._slots = threading.BoundedSemaphore(self.max_revalidations)
        self._threads: set[threading.Thread] = set()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Wait for revalidations under way (up to the timeout), then close."""
        self._closed = True
        with self._lock:
            threads = list(self._threads)
        deadline = _monotonic() + (self.timeout.read or 10.0)
        for thread in threads:
            thread.join(max(0.0, deadline - _monotonic()))
        self._http.close()

    # Every turn -----------------------------------------------------------------------

    def system_prompt(
        self,
        conversation_id: str,
        *,
        cwd: str,
        model: str | None = None,
        provider: str | None = None,
        tools: Sequence[str] | None = None,
        variables: Mapping[str, str] | None = None,
        override: Override | None = None,
        label: str | None = None,
        prompt: str | None = None,
    ) -> PromptResult:
        """The conversation's frozen system prompt.

        From the cache when it holds one (no request; the same object every turn),
        else from the server's ``resolve``, else, when the server cannot answer, the
        fallback. The other arguments matter on the first turn only; ``label`` and
        ``prompt`` (the named prompt; each else the client's) are part of the cache's
        key. A turn whose ``cwd``, ``model`` or
        ``provider`` differs from the frozen context still gets the frozen prompt, with
        ``context_mismatch`` naming what differs (and one warning per conversation).
        """
        label, prompt = self._label(label), self._prompt_name(prompt)
        entry = self._memory.get(cache_key(conversation_id, label, prompt))
        if entry is not None:
            if entry.stale_at <= _monotonic():
                self._revalidate_soon(entry)
            return self._for_turn(entry.result, cwd, model, provider, entry)
        result = self._first_turn(
            conversation_id, label, prompt, cwd, model, provider, tools, variables, override
        )
        return self._for_turn(result, cwd, model, provider)

    def _first_turn(
        self, conversation_id: str, label: str | None, prompt: str | None, *args: Any
    ) -> PromptResult:
        """One request per conversation however many threads ask at once."""
        key = cache_key(conversation_id, label, prompt)
        with self._lock:
            entry = self._memory.peek(key)
            if entry is not None:
                return entry.result
            future = self._inflight.get(key)
            owner = future is None
            if future is None:
                future = self._inflight[key] = Future()
        if not owner:
            return future.result()
        try:
            result = self._load_or_resolve(conversation_id, label, prompt, *args)
        except BaseException as error:
            future.set_exception(error)
            raise
        else:
            future.set_result(result)
            return result
        finally:
            with self._lock:
                del self._inflight[key]

    def _load_or_resolve(
        self,
        conversation_id: str,
        label: str | None,
        prompt: str | None,
        cwd: str,
        model: str | None,
        provider: str | None,
        tools: Sequence[str] | None,
        variables: Mapping[str, str] | None,
        override: Override | None,
    ) -> PromptResult:
        if self._directory is not None:
            stored = self._directory.load(conversation_id, label, prompt)
            if stored is not None:
                entry = self._loaded(label, prompt, stored)
                if entry.stale_at <= _monotonic():
                    self._revalidate_soon(entry)
                return entry.result
        try:
            values = self._values(conversation_id, cwd, model, provider, label, prompt)
            body = self._body(
                cwd, model, provider, tools, variables, override, values, label, prompt
            )
            call = Call("POST", conversation_path(conversation_id, "resolve"), True, body)
            result = self._prompt(self._json(self._send(call)), conversation_id)
        except ServerError as error:
            result = self._fallback_result(conversation_id, error, prompt)
        self._run(self._install(result, label, prompt)[1])
        return result

    # Other calls ----------------------------------------------------------------------

    def construct(
        self,
        conversation_id: str,
        *,
        cwd: str,
        model: str | None = None,
        provider: str | None = None,
        tools: Sequence[str] | None = None,
        variables: Mapping[str, str] | None = None,
        override: Override | None = None,
        label: str | None = None,
        prompt: str | None = None,
    ) -> PromptResult:
        """Build the prompt afresh from what the label serves now and store it in place
        of the old one; later turns answer the new prompt."""
        label, prompt = self._label(label), self._prompt_name(prompt)
        values = self._values(conversation_id, cwd, model, provider, label, prompt)
        body = self._body(cwd, model, provider, tools, variables, override, values, label, prompt)
        call = Call("POST", conversation_path(conversation_id, "construct"), False, body)
        result = self._prompt(self._json(self._send(call)), conversation_id)
        self._run(self._install(result, label, prompt)[1])
        return result

    def compact(
        self,
        conversation_id: str,
        *,
        cwd: str | None = None,
        model: str | None = None,
        provider: str | None = None,
        tools: Sequence[str] | None = None,
        variables: Mapping[str, str] | None = None,
        override: Override | None = None,
        label: str | None = None,
        prompt: str | None = None,
    ) -> CompactResult:
        """Construct afresh for a compaction turn: the prompt of the compaction turn
        (with the server's compaction instructions) and the new frozen prompt, which
        the cache takes (a fallback ends here).

        An argument left out keeps the conversation's frozen context (the server keeps
        it and ``context_kept`` names it; the host's values are resolved for it, in the
        frozen ``cwd``); one given replaces it. A conversation without a stored prompt
        needs ``cwd``. ``prompt`` (else the client's) must be the conversation's (the
        server answers 409 naming both otherwise)."""
        label, prompt = self._label(label), self._prompt_name(prompt)
        values = None
        if self._asks_references():
            frozen = (
                self.frozen(conversation_id, label=label, prompt=prompt)
                if self._needs_frozen(cwd, model, provider)
                else None
            )
            context = self._values_context(conversation_id, frozen, cwd, model, provider)
            values = self._values(conversation_id, *context, label, prompt)
        body = self._body(cwd, model, provider, tools, variables, override, values, label, prompt)
        call = Call("POST", conversation_path(conversation_id, "compact"), False, body)
        compacted = self._compacted(self._json(self._send(call)), conversation_id)
        self._run(self._install(compacted.prompt, label, prompt)[1])
        return compacted

    def frozen(
        self, conversation_id: str, *, label: str | None = None, prompt: str | None = None
    ) -> PromptResult | None:
        """The conversation's frozen prompt: the cache's (asked for under ``label`` and
        of ``prompt``, each else the client's; a fallback is none), else the server's
        stored one, which the cache then takes (one request); ``None`` when the server
        stores none."""
        label, prompt = self._label(label), self._prompt_name(prompt)
        cached = self._cached_frozen(conversation_id, label, prompt)
        if cached is not None:
            return cached
        call = Call("GET", conversation_path(conversation_id), True)
        try:
            result = self._prompt(self._json(self._send(call)), conversation_id)
        except NotFound:
            return None
        entry, io = self._install(result, label, prompt)
        self._run(io)
        return entry.result

    def get(
        self, conversation_id: str, *, label: str | None = None, prompt: str | None = None
    ) -> PromptResult:
        """The prompt the server stores for the conversation (always a request;
        :class:`NotFound` when there is none). A cached entry (under ``label`` and of
        ``prompt``, each else the client's) that is not a fallback takes it."""
        label, prompt = self._label(label), self._prompt_name(prompt)
        call = Call("GET", conversation_path(conversation_id), True)
        result = self._prompt(self._json(self._send(call)), conversation_id)
        entry = self._memory.peek(cache_key(conversation_id, label, prompt))
        if entry is not None and not entry.result.is_fallback:
            if entry.result.sha256 != result.sha256 or entry.result.text != result.text:
                self._run(self._install(result, label, prompt)[1])
            else:
                entry.stale_at = _monotonic() + self.max_age
        return result

    def forget(
        self,
        conversation_id: str,
        *,
        on_server: bool = True,
        label: str | None = None,
        prompt: str | None = None,
    ) -> bool:
        """Drop the conversation (asked for under ``label`` and of ``prompt``, each else
        the client's) from the cache and, with ``on_server``, delete its stored prompt
        on the server. True when something was there to forget."""
        had, io = self._forget_local(conversation_id, self._label(label), self._prompt_name(prompt))
        self._run(io)
        if not on_server:
            return had
        call = Call("DELETE", conversation_path(conversation_id), True)
        try:
            self._json(self._send(call))
        except NotFound:
            return had
        return True

    def references(
        self,
        *,
        provider: str | None = None,
        model: str | None = None,
        label: str | None = None,
        prompt: str | None = None,
    ) -> tuple[str, ...]:
        """Every ``type:name`` the template ``label`` (else the client's) serves of
        ``prompt`` (else the client's) can reach for this provider and model (empty
        when the server does not offer the list)."""
        return self._references_of(
            provider, model, self._label(label), self._prompt_name(prompt)
        ).keys

    def _references_of(
        self,
        provider: str | None,
        model: str | None,
        label: str | None = None,
        prompt: str | None = None,
    ) -> References:
        call = self._references_call(provider, model, label, prompt)
        return References(()) if call is None else self._references_answer(call, self._send(call))

    def me(self) -> Caller:
        """Who the client's token is and what it may do (``GET /api/me``)."""
        return self._caller(self._send(Call("GET", "/api/me", True)))

    # For prompt authors ---------------------------------------------------------------

    def template(self) -> Template:
        """The global template, with the ETag to save against."""
        return self._template(self._send(Call("GET", "/api/system-prompt", True)))

    def save_template(
        self, text: str, *, if_match: str | None = None, compress: bool | None = None
    ) -> Template:
        """Save a new version of the global template (the author permission is needed).
        With ``if_match`` (a ``Template.etag``), :class:`PreconditionFailed` when the
        template changed since and nothing is saved. ``compress`` sets the version's
        compression; ``None`` (left out) keeps the current version's."""
        call = self._save_template_call(text, if_match, compress)
        return self._template(self._send(call))

    def preview(
        self,
        *,
        cwd: str,
        template: str | None = None,
        conversation_id: str | None = None,
        model: str | None = None,
        provider: str | None = None,
        tools: Sequence[str] | None = None,
        variables: Mapping[str, str] | None = None,
        override: Override | None = None,
    ) -> dict[str, Any]:
        """Render ``template`` (default: the current one) as a construct would, storing
        nothing: the server's answer (``system_prompt``, ``diagnostics``, ``variables``…)."""
        context = self._body(cwd, model, provider, tools, variables, override, None)
        data = self._json(self._send(self._preview_call(template, conversation_id, context)))
        return data if isinstance(data, dict) else {}

    # The library and labels -----------------------------------------------------------

    def library(self, *, search: str | None = None) -> list[dict[str, Any]]:
        """Every fragment of the library by name, each ``{"name", "variants": [...]}``
        as ``GET /api/library`` shows it (every page is fetched)."""
        return self._all_pages(self._library_call(search))

    def preview_fragment(
        self,
        name: str,
        *,
        cwd: str,
        provider: str | None = None,
        model: str | None = None,
    ) -> dict[str, Any]:
        """The fragment ``name`` rendered as the variant ``provider`` and ``model`` get
        (with resolution's fallback), by the server, storing nothing: the answer of
        ``POST /api/library/preview`` (``system_prompt``, ``fragments_used``…)."""
        call = self._preview_fragment_call(name, cwd, provider, model)
        return self._object(self._send(call))

    def save_fragment(
        self,
        name: str,
        text: str,
        *,
        provider: str | None = None,
        model: str | None = None,
        if_match: str | None = None,
    ) -> dict[str, Any]:
        """Save a new version of the variant (the author permission is needed): the
        variant as the server answers it."""
        call = self._save_fragment_call(name, text, provider, model, if_match)
        return self._object(self._send(call))

    def delete_fragment(
        self, name: str, *, provider: str | None = None, model: str | None = None
    ) -> dict[str, Any]:
        """Delete the variant (a deleted version; the author permission is needed)."""
        return self._object(self._send(self._delete_fragment_call(name, provider, model)))

    def prompts(
        self, *, folder: str | None = None, search: str | None = None, limit: int | None = None
    ) -> list[dict[str, Any]]:
        """The named prompts the server lists to this token (``GET /api/prompts``, every
        page; for an agent host, those it may use), each as the API shows it
        (``name``, ``description``, ``tags``…), optionally in ``folder``
        (``support/``) or matching ``search``; ``limit``: the first that many, by name
        (no more pages are asked for)."""
        return self._all_pages(self._prompts_call(folder, search), limit)

    def labels(self) -> list[dict[str, Any]]:
        """Every label, as ``GET /api/labels`` shows each (prompt authors only:
        :class:`Forbidden` for an agent host)."""
        return self._all_pages(self._labels_call())

    def set_label(self, name: str, target: Any, *, message: str | None = None) -> dict[str, Any]:
        """Create or move the label ``name`` to ``target`` (``"latest"``,
        ``{"release": N}`` or a split): the label as the server answers it."""
        return self._object(self._send(self._set_label_call(name, target, message)))

    def create_release(self, *, message: str | None = None) -> dict[str, Any]:
        """Release the working copy: the release (a new one, or the existing one that
        holds exactly the working copy)."""
        return self._object(self._send(self._create_release_call(message)))

    def _all_pages(self, call: Call, limit: int | None = None) -> list[dict[str, Any]]:
        """The results of every page of a cursor-paginated list, following ``next``."""
        results: list[dict[str, Any]] = []
        following: Call | None = call
        while following is not None and (limit is None or len(results) < limit):
            items, following = self._page(self._send(following))
            results += items
        return results if limit is None else results[:limit]

    # Plumbing -------------------------------------------------------------------------

    def _values(
        self,
        conversation_id: str,
        cwd: str,
        model: str | None,
        provider: str | None,
        label: str | None,
        prompt: str | None = None,
    ) -> dict[str, str | None] | None:
        if not self._asks_references():
            return None
        keys = self._host_keys(self._references_of(provider, model, label, prompt))
        if not keys:
            return None
        return resolve_host_values(
            keys,
            cwd=cwd,
            model=model,
            conversation_id=conversation_id,
            allowed_roots=self.allowed_roots,
        )

    @staticmethod
    def _run(io: IO) -> None:
        if io is not None:
            io()

    def _send(self, call: Call) -> httpx.Response:
        headers = self._headers if not call.headers else {**self._headers, **call.headers}
        attempt = 0
        while True:
            try:
                response = self._http.request(
                    call.method,
                    self._url(call.path),
                    json=call.body,
                    headers=headers,
                    params=call.params,
                )
            except httpx.RequestError as error:
                delay = self._delay(call, attempt, None)
                if delay is None:
                    raise unavailable(error) from error
            else:
                delay = self._delay(call, attempt, response)
                if delay is None:
                    return response
                response.close()
            time.sleep(delay)
            attempt += 1

    def _revalidate_soon(self, entry: Entry) -> None:
        """Start a background revalidation unless one is under way for this entry, the
        client is closed, or ``max_revalidations`` already run."""
        if entry.revalidating:  # the common case while one runs: no lock taken
            return
        with self._lock:
            if entry.revalidating or self._closed or not self._slots.acquire(blocking=False):
                return
            entry.revalidating = True
            thread = threading.Thread(
                target=self._revalidate,
                args=(entry,),
                name=f"sysprompt-revalidate-{entry.key[:40]}",
                daemon=True,
            )
            self._threads.add(thread)
        thread.start()

    def _revalidate(self, entry: Entry) -> None:
        try:
            call = self._revalidate_call(entry)
            try:
                response: httpx.Response | None = self._send(call)
            except Exception:  # unreachable, timed out, closed: keep the entry
                response = None
            self._run(self._revalidated(entry, response))
        except Exception:  # never let a background thread die with a traceback
            log.exception("sysprompt: revalidating %r failed", entry.key)
        finally:
            entry.revalidating = False
            with self._lock:
                self._threads.discard(threading.current_thread())
            self._slots.release()
