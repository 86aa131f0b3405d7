"""The MCP prompts' and tools' answers on the server: :class:`DjangoBackend`, the
``Backend`` of ``sysprompt_client.mcp`` for one authenticated user.

Each method does what the REST API's operation does for that user, through the same
validation, services and selectors (``resolve``, ``compact``, the library, the
labels, and the write operations), with the API's permission rules, and fails as
the API does: any exception becomes the API's answer (``sysprompt.api.errors``) and
then the client's exception for that status with the API's sentence
(``sysprompt_client.errors.error_for``), which the MCP layer shows. So a conversation
of another host is "not found" here exactly as it is over REST.

Synchronous and using the database, always on the request's own thread
(``DjangoBackend._answer``, ``sysprompt.mcp.transport.on_request_thread``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import anyio.from_thread
from django.contrib.auth.models import AbstractUser
from django.db import connections
from rest_framework import status

from sysprompt.api import library_serializers as ls
from sysprompt.api import release_serializers as rs
from sysprompt.api import serializers as s
from sysprompt.api.auth import CanEditLibrary, IsReleaseAuthor, caller_permissions
from sysprompt.api.errors import exception_handler
from sysprompt.api.library_views import variant_settings
from sysprompt.api.release_views import label_data, label_detail, label_put, release_detail
from sysprompt.api.views import host_context, prompt_payload
from sysprompt.conf import app_settings
from sysprompt.errors import ConversationNotFound, PromptConflict
from sysprompt.library import selectors as library
from sysprompt.library import services as library_services
from sysprompt.library.validation import fragment_name_valid, variant_key_valid
from sysprompt.mcp.transport import on_request_thread
from sysprompt.prompts import rendering
from sysprompt.prompts import selectors as prompts
from sysprompt.prompts import services as prompt_services
from sysprompt.prompts.catalog import prompt_get
from sysprompt.prompts.permissions import TEMPLATE_EDIT_PERMISSION
from sysprompt.prompts.usable import prompts_usable
from sysprompt.prompts.validation import HostContext, cwd_on_server
from sysprompt.releases import selectors as releases
from sysprompt.releases import services as release_services
from sysprompt.releases.selectors import conversation_build
from sysprompt.releases.validation import call_label_valid
from sysprompt_client.errors import Forbidden, InvalidRequest, SyspromptError, error_for
from sysprompt_client.mcp.backend import FragmentSummary, FragmentText, PromptSummary, Variant
from sysprompt_client.results import CompactResult, PromptResult, prompt_from_json
from sysprompt_core.paths import real_roots

if TYPE_CHECKING:
    from sysprompt.prompts.models import ConversationPrompt

T = TypeVar("T")

NO_CWD = (
    "give cwd, the conversation's working directory (an absolute path): over HTTP the "
    "server does not know the agent's, and the prompt is built for it."
)


def fragment_cwd() -> str:
    """Where ``/mcp`` renders a fragment: the first allowed root when the server reads
    directories (``SERVER_RESOLVES`` has ``git`` or ``file``), so ``file:`` and ``git:``
    show what the server sees there; else ``/``, only a value (nothing is read)."""
    conf = app_settings()
    if not cwd_on_server(conf.server_resolves):
        return "/"
    roots = real_roots(conf.allowed_roots)
    return roots[0] if roots else "/"


def _no_cwd(conversation_id: str) -> InvalidRequest:
    """A first turn (or a compaction) without ``cwd``: refused, naming the field. Said
    alike whether the conversation is absent or another's."""
    message = f"Conversation {conversation_id!r} has no stored system prompt yet: {NO_CWD}"
    return InvalidRequest(f"cwd: {message}", status=400, errors={"cwd": [message]})


def api_error(error: Exception) -> SyspromptError:
    """What the REST API would answer for ``error``, as the client's exception (its
    class from the status, its message the API's sentence)."""
    answer = exception_handler(error, {})
    if answer is None:  # not reached: the handler answers everything, bugs with 500
        return error_for(status.HTTP_500_INTERNAL_SERVER_ERROR, None)
    return error_for(answer.status_code, answer.data)


def as_api(call: Callable[[], T]) -> T:
    """``call()``, any failure raised as :func:`api_error` says."""
    try:
        return call()
    except SyspromptError:
        raise
    except Exception as error:  # noqa: BLE001 - every failure answers as the API would
        raise api_error(error) from error


def _same_prompt(row: ConversationPrompt, name: str | None) -> None:
    """Nothing when the call names no prompt or the one ``row`` is frozen from (by its
    name or a former one); the API's 409 naming both otherwise, as ``resolve`` answers."""
    frozen = row.prompt.name
    if name is None or name == frozen or prompt_get(name).pk == row.prompt_id:
        return
    raise PromptConflict(
        f"Conversation {row.conversation_id!r} is frozen from prompt {frozen!r}; this call "
        f"names prompt {name!r}. A conversation keeps its prompt: send {frozen!r} (or no "
        "prompt), or start a new conversation."
    )


class DjangoBackend:
    """The MCP answers for ``user`` (an agent host's or an author's token)."""

    def __init__(self, user: AbstractUser) -> None:
        self.user = user
        self._request_thread = threading.get_ident()

    def _answer(self, call: Callable[[], T]) -> T:
        """``call()`` as the API would answer (:func:`as_api`), run on the request's
        own thread: the MCP layer calls a backend in a worker thread of the request's
        event loop, from which the call is handed back to the request's thread (that
        thread serves such calls while it waits for the exchange; see
        ``sysprompt.mcp.transport``). So the database work uses the request's
        connection, which Django closes or keeps as for any request; a worker thread
        would open one of its own per call."""
        if threading.get_ident() == self._request_thread:
            return as_api(call)
        try:
            return anyio.from_thread.run(on_request_thread(as_api), call)
        except anyio.NoEventLoopError:  # neither: run here, and close what it opened
            try:
                return as_api(call)
            finally:
                connections.close_all()

    # Read --------------------------------------------------------------------------------

    def system_prompt(
        self,
        conversation_id: str,
        *,
        cwd: str | None = None,
        model: str | None = None,
        provider: str | None = None,
        label: str | None = None,
        prompt: str | None = None,
    ) -> PromptResult:
        """``resolve``: the first turn builds and stores the prompt, every later one
        answers the stored bytes. Without ``cwd`` a stored conversation is answered as
        it is (its frozen context needs none); a first turn needs one. ``prompt``: the
        named prompt, as the API's body takes it."""
        return self._answer(
            lambda: self._resolve(
                conversation_id,
                cwd=cwd,
                model=model,
                provider=provider,
                label=label,
                prompt=prompt,
            )
        )

    def _resolve(
        self,
        conversation_id: str,
        *,
        cwd: str | None,
        model: str | None,
        provider: str | None,
        label: str | None,
        prompt: str | None,
    ) -> PromptResult:
        if cwd is None:
            try:
                row = prompts.conversation_prompt_visible(conversation_id, user=self.user)
            except ConversationNotFound:  # absent or another's: the same answer
                raise _no_cwd(conversation_id) from None
            _same_prompt(row, prompt)
            return prompt_from_json(prompt_payload(row), conversation_id)
        arguments = self._conversation_input(
            s.ResolveInputSerializer,
            cwd=cwd,
            model=model,
            provider=provider,
            label=label,
            prompt=prompt,
        )
        stored_now = prompt_services.conversation_prompt_resolve(
            conversation_id=conversation_id, user=self.user, **arguments
        )
        data = prompt_payload(stored_now.prompt)
        if stored_now.mismatch:
            data["context_mismatch"] = list(stored_now.mismatch)
        return prompt_from_json(data, conversation_id)

    def compact(
        self,
        conversation_id: str,
        *,
        cwd: str | None = None,
        model: str | None = None,
        provider: str | None = None,
        label: str | None = None,
        prompt: str | None = None,
    ) -> CompactResult:
        """``compact``: construct afresh (stored), and the compaction turn's prompt. What
        the call leaves out of the context (``cwd`` too) is the stored conversation's
        frozen one (``context_kept``); a conversation without a stored prompt needs
        ``cwd``."""

        def compacted() -> CompactResult:
            arguments = self._conversation_input(
                s.ConversationInputSerializer,
                cwd=cwd,
                model=model,
                provider=provider,
                label=label,
                prompt=prompt,
            )
            done = prompt_services.conversation_prompt_compact(
                conversation_id=conversation_id, user=self.user, **arguments
            )
            frozen = prompt_from_json(prompt_payload(done.stored.prompt), conversation_id)
            return CompactResult(
                compaction_prompt=done.compaction_prompt,
                prompt=frozen,
                context_kept=done.stored.kept,
            )

        return self._answer(compacted)

    def _conversation_input(
        self, serializer_class: type[s.ConversationInputSerializer], **given: str | None
    ) -> dict[str, Any]:
        """What the API's resolve and compact take from their body, checked the same way
        (``sysprompt.api.views._conversation_input``)."""
        serializer = serializer_class(
            data={key: value for key, value in given.items() if value is not None}
        )
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        if given.get("model") is None:  # "" for rendering; none given for the comparison
            data["model"] = None
        host = host_context(data)
        chosen = data.pop("label", None)
        build = conversation_build(None if chosen is None else call_label_valid(chosen))
        return {**data, "host": host, "build": build}

    def named_prompts(self) -> Sequence[PromptSummary] | None:
        """The named prompts the user may start a conversation from (not archived; an
        agent host's allowed ones), by name."""

        def listed() -> list[PromptSummary]:
            return [
                PromptSummary(
                    name=found.name,
                    description=found.description,
                    tags=tuple(tag for tag in found.tags or () if isinstance(tag, str)),
                )
                for found in prompts_usable(self.user)
            ]

        return self._answer(listed)

    def fragments(self) -> Sequence[FragmentSummary]:
        def listed() -> list[FragmentSummary]:
            found = []
            for fragment in library.fragments_list():
                live = tuple(
                    Variant(provider=v.provider, model=v.model)
                    for v in fragment.variants
                    if not v.deleted
                )
                if live:
                    found.append(FragmentSummary(name=fragment.name, variants=live))
            return found

        return self._answer(listed)

    def fragment(
        self, name: str, *, provider: str | None = None, model: str | None = None
    ) -> FragmentText:
        """The variant ``provider`` and ``model`` get ((P, M), else (P, —), else (—, —)),
        rendered by the library preview, as ``POST /api/library/preview`` with
        ``fragment`` renders it for the stdio command. An HTTP request carries no
        working directory: the preview renders in :func:`fragment_cwd`."""

        def rendered() -> FragmentText:
            checked = fragment_name_valid(name, "name")
            variant_key_valid(provider, model)
            preview = rendering.template_preview(
                cwd=fragment_cwd(),
                model=model or "",
                fragment=checked,
                host=HostContext(provider=provider or None),
            )
            chosen = preview.rendered.fragments_used[0]  # the preview lists it first
            return FragmentText(
                name=checked,
                text=preview.rendered.prompt or "",
                provider=chosen.provider,
                model=chosen.model,
                version=chosen.version,
            )

        return self._answer(rendered)

    def permissions(self) -> frozenset[str]:
        """What the user may do, by the API's rules (``GET /api/me``)."""

        def granted() -> frozenset[str]:
            return frozenset(name for name, may in caller_permissions(self.user).items() if may)

        return self._answer(granted)

    def labels(self) -> Sequence[Mapping[str, Any]]:
        def listed() -> list[dict[str, Any]]:
            self._require(IsReleaseAuthor.message)
            return [label_data(state) for state in releases.labels_list()]

        return self._answer(listed)

    # Write (offered only when SYSPROMPT_MCP_WRITE is on) -----------------------------------

    def save_fragment(
        self,
        name: str,
        *,
        text: str,
        provider: str | None = None,
        model: str | None = None,
    ) -> Mapping[str, Any]:
        def saved() -> dict[str, Any]:
            self._require(CanEditLibrary.message)
            checked = fragment_name_valid(name, "name")
            key = variant_key_valid(provider, model)
            body = ls.VariantInputSerializer(data={"text": text})
            body.is_valid(raise_exception=True)
            state = library_services.variant_save(
                name=checked,
                provider=key.provider,
                model=key.model,
                text=body.validated_data["text"],
                author=self.user,
                if_match=None,
                **variant_settings(body.validated_data, checked, key),
            )
            return dict(ls.VariantOutputSerializer(state).data)

        return self._answer(saved)

    def delete_fragment(
        self, name: str, *, provider: str | None = None, model: str | None = None
    ) -> Mapping[str, Any]:
        def deleted() -> dict[str, Any]:
            self._require(CanEditLibrary.message)
            checked = fragment_name_valid(name, "name")
            key = variant_key_valid(provider, model)
            state = library_services.variant_delete(
                name=checked,
                provider=key.provider,
                model=key.model,
                author=self.user,
                if_match=None,
            )
            return dict(ls.VariantOutputSerializer(state).data)

        return self._answer(deleted)

    def create_release(self, *, message: str | None = None) -> Mapping[str, Any]:
        def created() -> dict[str, Any]:
            self._require(IsReleaseAuthor.message)
            body = rs.ReleaseInputSerializer(data={} if message is None else {"message": message})
            body.is_valid(raise_exception=True)
            made = release_services.release_create(
                message=body.validated_data.get("message", ""), author=self.user
            )
            return release_detail(made.release.number)

        return self._answer(created)

    def set_label(self, name: str, *, target: Any, message: str | None = None) -> Mapping[str, Any]:
        def moved() -> dict[str, Any]:
            self._require(IsReleaseAuthor.message)
            given: dict[str, Any] = {"target": target}
            if message is not None:
                given["message"] = message
            done = label_put(name, lambda: given, author=self.user)
            return label_detail(done.label)

        return self._answer(moved)

    def _require(self, message: str) -> None:
        """The API's 403 (with its permission class's message) unless the user is a
        prompt author."""
        if not self.user.has_perm(TEMPLATE_EDIT_PERMISSION):
            raise Forbidden(message, status=status.HTTP_403_FORBIDDEN)


__all__ = ["DjangoBackend", "api_error"]
