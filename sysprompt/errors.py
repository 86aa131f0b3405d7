"""The server's exceptions: one hierarchy under :class:`SyspromptError`.

Services, selectors and validation raise them; ``sysprompt.api.errors`` maps each to
its HTTP status in one table, and the editor shows their messages. Each says what was
wrong and what to do; none leaves anything half-written.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sysprompt.library.selectors import VariantState
    from sysprompt.prompts.selectors import CurrentTemplate


class SyspromptError(Exception):
    """Something the caller asked for cannot be done; nothing was written."""


class InvalidInput(SyspromptError, ValueError):
    """Input that names ``field`` and what is wrong with it; nothing was read or written."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


class BodyTooLarge(SyspromptError):
    """A request body over the limit; refused before it was read."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"The request body is {size:,} bytes; the limit is {limit:,} bytes.")
        self.size = size
        self.limit = limit


class TemplateTooLarge(SyspromptError):
    """A template over ``SYSPROMPT["MAX_TEMPLATE_BYTES"]``; nothing was written."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(
            f"The template is {size:,} bytes in UTF-8; the limit is {limit:,} bytes "
            "(SYSPROMPT_MAX_TEMPLATE_BYTES)."
        )
        self.size = size
        self.limit = limit


class ConversationNotFound(SyspromptError):
    """No stored prompt under this id that the user may see (the API's 404).

    The message is the same whether there is no row or someone else's, so an answer
    tells no more than "not yours"."""

    def __init__(self, conversation_id: str) -> None:
        super().__init__(f"Conversation {conversation_id!r} has no stored system prompt.")
        self.conversation_id = conversation_id


class ConversationForbidden(SyspromptError):
    """A conversation the user may see but not change or delete (the API's 403)."""

    def __init__(self, conversation_id: str, permission: str) -> None:
        super().__init__(
            f"Conversation {conversation_id!r} belongs to another user; changing or "
            f"deleting it needs the permission {permission}."
        )
        self.conversation_id = conversation_id
        self.permission = permission


class ConversationAmbiguous(SyspromptError):
    """A conversation id that several agent hosts use, named without a host (the API's
    409): the caller names the host (``/api/agent-hosts/{username}/conversations/…``)."""

    def __init__(self, conversation_id: str, hosts: list[str]) -> None:
        named = ", ".join(repr(host) if host else "(no owner)" for host in hosts)
        super().__init__(
            f"Conversation {conversation_id!r} is the id of several agent hosts' "
            f"conversations: {named}. Name the host: "
            f"/api/agent-hosts/{{username}}/conversations/{conversation_id}/…"
        )
        self.conversation_id = conversation_id
        self.hosts = hosts


class ResolutionBusy(SyspromptError):
    """Values the template reaches could not be read *now* because the readers were
    busy (every git reader of this server process was reading until the deadline);
    nothing was stored, so a first turn never freezes a prompt without them. The API
    answers 503 with ``Retry-After``."""

    def __init__(self, keys: frozenset[str], retry_after: float) -> None:
        self.keys = tuple(sorted(keys))
        self.retry_after = max(1, math.ceil(retry_after))
        named = ", ".join(self.keys)
        super().__init__(
            f"{named} could not be read now: every git reader of the server was busy "
            f"until the deadline. Nothing was stored; try again in {self.retry_after} s."
        )


class PromptNotFound(SyspromptError):
    """No prompt has (or had) that name, or the agent host may not use it (the 404)."""

    def __init__(self, name: str) -> None:
        super().__init__(f"There is no prompt named {name!r}.")
        self.name = name


class PromptArchived(SyspromptError):
    """The prompt is archived: it starts no new conversation (the API's 410)."""

    def __init__(self, name: str) -> None:
        super().__init__(
            f"The prompt {name!r} is archived: it starts no new conversation. "
            "Unarchive it to use it again."
        )
        self.name = name


class PromptConflict(SyspromptError):
    """A prompt cannot be named, deleted or used so (the API's 409); nothing was written."""


class PromptForbidden(SyspromptError):
    """A change of a prompt restricted to groups the user is in none of (the 403)."""

    def __init__(self, name: str, action: str, groups: list[list[str]]) -> None:
        named = "; and ".join(" or ".join(level) for level in groups)
        super().__init__(
            f"The prompt {name!r} is restricted: to {action} it you must be a member of "
            f"{named} (or a superuser)."
        )
        self.name = name
        self.action = action
        self.groups = groups


class AdminBootstrapError(SyspromptError):
    """The admin cannot be created: a user named ``admin`` exists but is no superuser."""


class PreconditionFailed(SyspromptError):
    """``If-Match`` named a version that is no longer current; nothing was written."""

    def __init__(self, current: CurrentTemplate) -> None:
        super().__init__(
            f"The template has changed since you loaded it: version {current.version} "
            f"(ETag {current.etag}) is current. Reload it, merge, and save again."
        )
        self.current = current


class AgentHostError(SyspromptError):
    """The agent host cannot be set up under that name; nothing was written."""


class AgentHostNotFound(AgentHostError):
    """No agent host (a user in the "Agent hosts" group) has that name."""

    def __init__(self, name: str) -> None:
        super().__init__(f"There is no agent host named {name!r}.")
        self.name = name


class TemplateVersionImmutable(SyspromptError):
    """An attempt to change or delete a stored template version."""


class FragmentNotFound(SyspromptError):
    """No live variant (or no variant at all) of that fragment for that provider and
    model (the API's 404)."""

    def __init__(self, name: str, provider: str | None = None, model: str | None = None) -> None:
        super().__init__(f"There is no fragment {name!r} with {_variant_words(provider, model)}.")
        self.name = name
        self.provider = provider
        self.model = model


class VariantConflict(SyspromptError):
    """``If-Match`` named a version of a variant that is no longer its newest (or the
    variant has no version yet); nothing was written."""

    def __init__(self, current: VariantState | None) -> None:
        if current is None:
            message = (
                'The variant has no version yet, so If-Match can only be "*" (or left '
                "out). Reload it and save again."
            )
        else:
            message = (
                f"The variant has changed since you loaded it: version {current.version} "
                f"(ETag {current.etag}) is current. Reload it, merge, and save again."
            )
        super().__init__(message)
        self.current = current


def _variant_words(provider: str | None, model: str | None) -> str:
    if provider is None:
        return "a default variant"
    if model is None:
        return f"a variant for {provider!r}"
    return f"a variant for {provider!r}, model {model!r}"


class WebhookNotFound(SyspromptError):
    """No webhook subscription has that id (the API's 404)."""

    def __init__(self, webhook_id: int) -> None:
        super().__init__(f"There is no webhook subscription {webhook_id}.")
        self.webhook_id = webhook_id


class AuditRecordImmutable(SyspromptError):
    """An attempt to change or delete a record of the audit log, which only grows."""


class ReleaseNotFound(SyspromptError):
    """No release has that number (the API's 404)."""

    def __init__(self, number: int) -> None:
        super().__init__(f"There is no release {number}; GET /api/releases lists them.")
        self.number = number


class LabelNotFound(SyspromptError):
    """No label has that name (the API's 404 for a label in the path)."""

    def __init__(self, name: str) -> None:
        super().__init__(f"There is no label {name!r}; GET /api/labels lists them.")
        self.name = name


class LabelProtected(SyspromptError):
    """A protected label, and a user without the permission to move it (the API's 403);
    nothing was changed."""

    def __init__(self, name: str, permission: str, *, host: str | None = None) -> None:
        if host is None:
            said = (
                f"Label {name!r} is protected: changing it needs the permission {permission} "
                '(the "Prompt publishers" group). Ask a publisher, or point an unprotected '
                "label at the release."
            )
        else:  # an agent host's label or instance override: what the label's hosts get
            said = (
                f"Agent host {host!r} changes what protected label {name!r} serves: its label "
                f"and its instance override need the permission {permission} (the "
                '"Prompt publishers" group), as moving the label does. Ask a publisher.'
            )
        super().__init__(said)
        self.name = name
        self.permission = permission


class GateForceForbidden(LabelProtected):
    """A forced move of a gated label by a user who may not publish (the API's 403)."""

    def __init__(self, name: str, permission: str) -> None:
        super().__init__(name, permission)
        self.args = (
            f"Moving label {name!r} past its gate needs the permission {permission} "
            '(the "Prompt publishers" group).',
        )


class GateNotPassed(SyspromptError):
    """A move of a gated label that its gate refuses (the API's 409), saying what is
    missing; nothing was changed. A publisher may force it with a message."""

    def __init__(self, label: str, suite: str, reasons: list[str]) -> None:
        self.label = label
        self.suite = suite
        self.reasons = reasons
        super().__init__(self.said('"force": true'))

    def said(self, force: str) -> str:
        """The refusal, naming how a publisher forces the move: ``force`` is the API's
        field or the editor's checkbox."""
        return (
            f"Label {self.label!r} is gated by suite {self.suite!r}: "
            + "; ".join(self.reasons)
            + ". Start a run of the suite with the release as candidate and the label as "
            f"baseline, or (a publisher) move it anyway with {force} and a message."
        )


class TestContextNotFound(SyspromptError):
    """No test context has that name (the API's 404)."""

    __test__ = False  # not a pytest test class, whatever its name says

    def __init__(self, name: str) -> None:
        super().__init__(f"There is no test context {name!r}; GET /api/test-contexts lists them.")
        self.name = name


class SuiteNotFound(SyspromptError):
    """No evaluation suite has that name."""

    def __init__(self, name: str) -> None:
        super().__init__(f"There is no suite {name!r}; GET /api/suites lists them.")
        self.name = name


class CaseNotFound(SyspromptError):
    """The suite has no case of that name."""

    def __init__(self, suite: str, name: str) -> None:
        super().__init__(
            f"Suite {suite!r} has no case {name!r}; GET /api/suites/{suite}/cases lists them."
        )
        self.suite = suite
        self.name = name


class EvaluationNotFound(SyspromptError):
    """No evaluation run has that id."""

    def __init__(self, run_id: int) -> None:
        super().__init__(f"There is no evaluation {run_id}; GET /api/evaluations lists them.")
        self.run_id = run_id


class RunRefused(SyspromptError):
    """A run a limit refuses as it starts (the API's 429): the user has as many runs
    going as ``EVAL_MAX_RUNS_PER_USER`` allows, or the day's ``EVAL_DAILY_BUDGET``
    would be passed; nothing was stored. ``retry_after``: seconds until it may pass
    (None: when a run ends)."""

    def __init__(self, message: str, *, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after
