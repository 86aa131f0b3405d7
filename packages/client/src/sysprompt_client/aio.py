"""The asynchronous client: the same calls as :class:`~sysprompt_client.Client`,
awaited. Nothing it does blocks the event loop: requests go through httpx's async
client, file and repository reads (the directory cache, host-local values) run in a
worker thread, and revalidations are tasks. Use one instance per event loop."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

import httpx

from sysprompt_client._base import (
    IO,
    Call,
    ClientBase,
    Fallback,
    Override,
    References,
    _monotonic,
    conversation_path,
    log,
    unavailable,
)
from sysprompt_client.cache import Entry, cache_key
from sysprompt_client.errors import NotFound, ServerError
from sysprompt_client.local import resolve_host_values
from sysprompt_client.results import Caller, CompactResult, PromptResult, Template

__all__ = ["AsyncClient"]


class AsyncClient(ClientBase):
    """An agent host's asynchronous connection to a sysprompt server; see
    :class:`sysprompt_client.Client` (same arguments, except ``transport``, which is
    an ``httpx.AsyncBaseTransport``)."""

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
        transport: httpx.AsyncBaseTransport | None = None,
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
        self._http = httpx.AsyncClient(timeout=self.timeout, transport=transport)
        self._inflight: dict[str, asyncio.Task[PromptResult]] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Wait for revalidations under way (up to the timeout), then close."""
        self._closed = True
        if self._tasks:
            _, pending = await asyncio.wait(set(self._tasks), timeout=self.timeout.read or 10.0)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending)
        await self._http.aclose()

    # Every turn -----------------------------------------------------------------------

    async def system_prompt(
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
        """The conversation's frozen system prompt; see ``Client.system_prompt`` (and
        its ``context_mismatch``). A cached turn awaits nothing."""
        label, prompt = self._label(label), self._prompt_name(prompt)
        key = cache_key(conversation_id, label, prompt)
        entry = self._memory.get(key)
        if entry is not None:
            if entry.stale_at <= _monotonic():
                self._revalidate_soon(entry)
            return self._for_turn(entry.result, cwd, model, provider, entry)
        task = self._inflight.get(key)
        if task is None:
            task = asyncio.ensure_future(
                self._load_or_resolve(
                    conversation_id,
                    label,
                    prompt,
                    cwd,
                    model,
                    provider,
                    tools,
                    variables,
                    override,
                )
            )
            self._inflight[key] = task
            task.add_done_callback(partial(self._settled, key))
        # A caller that is cancelled leaves the request to the others.
        return self._for_turn(await asyncio.shield(task), cwd, model, provider)

    def _settled(self, key: str, task: asyncio.Task[PromptResult]) -> None:
        if self._inflight.get(key) is task:
            del self._inflight[key]
        if not task.cancelled():
            task.exception()  # retrieved: every caller has it already

    async def _load_or_resolve(
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
            stored = await asyncio.to_thread(self._directory.load, conversation_id, label, prompt)
            if stored is not None:
                entry = self._loaded(label, prompt, stored)
                if entry.stale_at <= _monotonic():
                    self._revalidate_soon(entry)
                return entry.result
        try:
            values = await self._values(conversation_id, cwd, model, provider, label, prompt)
            body = self._body(
                cwd, model, provider, tools, variables, override, values, label, prompt
            )
            call = Call("POST", conversation_path(conversation_id, "resolve"), True, body)
            result = self._prompt(self._json(await self._send(call)), conversation_id)
        except ServerError as error:
            result = self._fallback_result(conversation_id, error, prompt)
        await self._run(self._install(result, label, prompt)[1])
        return result

    # Other calls ----------------------------------------------------------------------

    async def construct(
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
        """See ``Client.construct``."""
        label, prompt = self._label(label), self._prompt_name(prompt)
        values = await self._values(conversation_id, cwd, model, provider, label, prompt)
        body = self._body(cwd, model, provider, tools, variables, override, values, label, prompt)
        call = Call("POST", conversation_path(conversation_id, "construct"), False, body)
        result = self._prompt(self._json(await self._send(call)), conversation_id)
        await self._run(self._install(result, label, prompt)[1])
        return result

    async def compact(
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
        """See ``Client.compact``."""
        label, prompt = self._label(label), self._prompt_name(prompt)
        values = None
        if self._asks_references():
            frozen = (
                await self.frozen(conversation_id, label=label, prompt=prompt)
                if self._needs_frozen(cwd, model, provider)
                else None
            )
            context = self._values_context(conversation_id, frozen, cwd, model, provider)
            values = await self._values(conversation_id, *context, label, prompt)
        body = self._body(cwd, model, provider, tools, variables, override, values, label, prompt)
        call = Call("POST", conversation_path(conversation_id, "compact"), False, body)
        compacted = self._compacted(self._json(await self._send(call)), conversation_id)
        await self._run(self._install(compacted.prompt, label, prompt)[1])
        return compacted

    async def frozen(
        self, conversation_id: str, *, label: str | None = None, prompt: str | None = None
    ) -> PromptResult | None:
        """See ``Client.frozen``."""
        label, prompt = self._label(label), self._prompt_name(prompt)
        cached = self._cached_frozen(conversation_id, label, prompt)
        if cached is not None:
            return cached
        call = Call("GET", conversation_path(conversation_id), True)
        try:
            result = self._prompt(self._json(await self._send(call)), conversation_id)
        except NotFound:
            return None
        entry, io = self._install(result, label, prompt)
        await self._run(io)
        return entry.result

    async def get(
        self, conversation_id: str, *, label: str | None = None, prompt: str | None = None
    ) -> PromptResult:
        """See ``Client.get``."""
        label, prompt = self._label(label), self._prompt_name(prompt)
        call = Call("GET", conversation_path(conversation_id), True)
        result = self._prompt(self._json(await self._send(call)), conversation_id)
        entry = self._memory.peek(cache_key(conversation_id, label, prompt))
        if entry is not None and not entry.result.is_fallback:
            if entry.result.sha256 != result.sha256 or entry.result.text != result.text:
                await self._run(self._install(result, label, prompt)[1])
            else:
                entry.stale_at = _monotonic() + self.max_age
        return result

    async def forget(
        self,
        conversation_id: str,
        *,
        on_server: bool = True,
        label: str | None = None,
        prompt: str | None = None,
    ) -> bool:
        """See ``Client.forget``."""
        had, io = self._forget_local(conversation_id, self._label(label), self._prompt_name(prompt))
        await self._run(io)
        if not on_server:
            return had
        call = Call("DELETE", conversation_path(conversation_id), True)
        try:
            self._json(await self._send(call))
        except NotFound:
            return had
        return True

    async def references(
        self,
        *,
        provider: str | None = None,
        model: str | None = None,
        label: str | None = None,
        prompt: str | None = None,
    ) -> tuple[str, ...]:
        """See ``Client.references``."""
        found = await self._references_of(
            provider, model, self._label(label), self._prompt_name(prompt)
        )
        return found.keys

    async def _references_of(
        self,
        provider: str | None,
        model: str | None,
        label: str | None = None,
        prompt: str | None = None,
    ) -> References:
        call = self._references_call(provider, model, label, prompt)
        if call is None:
            return References(())
        return self._references_answer(call, await self._send(call))

    async def me(self) -> Caller:
        """See ``Client.me``."""
        return self._caller(await self._send(Call("GET", "/api/me", True)))

    # For prompt authors ---------------------------------------------------------------

    async def template(self) -> Template:
        """See ``Client.template``."""
        return self._template(await self._send(Call("GET", "/api/system-prompt", True)))

    async def save_template(
        self, text: str, *, if_match: str | None = None, compress: bool | None = None
    ) -> Template:
        """See ``Client.save_template``."""
        call = self._save_template_call(text, if_match, compress)
        return self._template(await self._send(call))

    async def preview(
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
        """See ``Client.preview``."""
        context = self._body(cwd, model, provider, tools, variables, override, None)
        data = self._json(await self._send(self._preview_call(template, conversation_id, context)))
        return data if isinstance(data, dict) else {}

    # The library and labels -----------------------------------------------------------

    async def library(self, *, search: str | None = None) -> list[dict[str, Any]]:
        """See ``Client.library``."""
        return await self._all_pages(self._library_call(search))

    async def preview_fragment(
        self,
        name: str,
        *,
        cwd: str,
        provider: str | None = None,
        model: str | None = None,
    ) -> dict[str, Any]:
        """See ``Client.preview_fragment``."""
        call = self._preview_fragment_call(name, cwd, provider, model)
        return self._object(await self._send(call))

    async def save_fragment(
        self,
        name: str,
        text: str,
        *,
        provider: str | None = None,
        model: str | None = None,
        if_match: str | None = None,
    ) -> dict[str, Any]:
        """See ``Client.save_fragment``."""
        call = self._save_fragment_call(name, text, provider, model, if_match)
        return self._object(await self._send(call))

    async def delete_fragment(
        self, name: str, *, provider: str | None = None, model: str | None = None
    ) -> dict[str, Any]:
        """See ``Client.delete_fragment``."""
        return self._object(await self._send(self._delete_fragment_call(name, provider, model)))

    async def prompts(
        self, *, folder: str | None = None, search: str | None = None, limit: int | None = None
    ) -> list[dict[str, Any]]:
        """See ``Client.prompts``."""
        return await self._all_pages(self._prompts_call(folder, search), limit)

    async def labels(self) -> list[dict[str, Any]]:
        """See ``Client.labels``."""
        return await self._all_pages(self._labels_call())

    async def set_label(
        self, name: str, target: Any, *, message: str | None = None
    ) -> dict[str, Any]:
        """See ``Client.set_label``."""
        return self._object(await self._send(self._set_label_call(name, target, message)))

    async def create_release(self, *, message: str | None = None) -> dict[str, Any]:
        """See ``Client.create_release``."""
        return self._object(await self._send(self._create_release_call(message)))

    async def _all_pages(self, call: Call, limit: int | None = None) -> list[dict[str, Any]]:
        results: list[dict[str, Any]] = []
        following: Call | None = call
        while following is not None and (limit is None or len(results) < limit):
            items, following = self._page(await self._send(following))
            results += items
        return results if limit is None else results[:limit]

    # Plumbing -------------------------------------------------------------------------

    async def _values(
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
        keys = self._host_keys(await self._references_of(provider, model, label, prompt))
        if not keys:
            return None
        return await asyncio.to_thread(
            resolve_host_values,
            keys,
            cwd=cwd,
            model=model,
            conversation_id=conversation_id,
            allowed_roots=self.allowed_roots,
        )

    @staticmethod
    async def _run(io: IO) -> None:
        if io is not None:
            await asyncio.to_thread(io)

    async def _send(self, call: Call) -> httpx.Response:
        headers = self._headers if not call.headers else {**self._headers, **call.headers}
        attempt = 0
        while True:
            try:
                response = await self._http.request(
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
                await response.aclose()
            await asyncio.sleep(delay)
            attempt += 1

    def _revalidate_soon(self, entry: Entry) -> None:
        if entry.revalidating or self._closed or len(self._tasks) >= self.max_revalidations:
            return
        entry.revalidating = True
        task = asyncio.ensure_future(self._revalidate(entry))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _revalidate(self, entry: Entry) -> None:
        try:
            call = self._revalidate_call(entry)
            try:
                response: httpx.Response | None = await self._send(call)
            except Exception:  # unreachable, timed out, closed: keep the entry
                response = None
            await self._run(self._revalidated(entry, response))
        except Exception:
            log.exception("sysprompt: revalidating %r failed", entry.key)
        finally:
            entry.revalidating = False
