"""Input checks of releases and labels: each returns the value it accepts or raises
:class:`~sysprompt.errors.InvalidInput` naming the field (``name``, ``target.split``,
``target.split[1].weight``, ``message``, ``window_days`` …), with the core's message
where the rule is the core's (:mod:`sysprompt_core.releases.targets`). Nothing here
reads the database: whether a release or a label exists is the selectors' question.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sysprompt.errors import InvalidInput
from sysprompt.prompts.validation import CheckedCwd, HostContext, cwd_check, host_context_check
from sysprompt_core.errors import InvalidTarget
from sysprompt_core.limits import MODEL_MAX_LENGTH
from sysprompt_core.releases import (
    LATEST,
    Pointer,
    Single,
    Target,
    label_name_check,
    parse_pointer,
    parse_target,
)

MESSAGE_MAX_LENGTH = 4000
"""The longest message of a release or a label move, in characters."""
WINDOW_DAYS_DEFAULT = 7
WINDOW_DAYS_MAX = 365
TEST_CONTEXTS_MAX = 100
"""The most test contexts one installation keeps: each runs in every impact report."""


def label_name_valid(name: object, field: str = "name") -> str:
    """``name`` when it can be a label's name (``production``, ``staging``)."""
    try:
        return label_name_check(name, field)
    except InvalidTarget as error:
        raise InvalidInput(error.field, error.message) from None


def call_label_valid(name: object, field: str = "label") -> str:
    """The label a call names (``resolve``, ``construct``, ``compact``, the references):
    a label's name, or ``"latest"``, the working copy itself (as Langfuse's ``latest``
    names the newest version), which needs no label."""
    return LATEST if name == LATEST else label_name_valid(name, field)


def target_valid(value: object, field: str = "target") -> Target:
    """A label's target, checked (:func:`sysprompt_core.releases.parse_target`)."""
    try:
        return parse_target(value, field)
    except InvalidTarget as error:
        raise InvalidInput(error.field, error.message) from None


def pointer_valid(value: object, field: str) -> Pointer:
    """A release number or ``"latest"`` (an impact's candidate, a comparison's other side)."""
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 10:
        value = int(value)  # from a query string
    try:
        return parse_pointer(value, field)
    except InvalidTarget as error:
        raise InvalidInput(error.field, error.message) from None


def candidate_valid(value: object, field: str = "candidate") -> Pointer:
    """What a label would point at (an impact's or a publish's candidate): a release
    number, ``{"release": N}`` (as a label's target names one) or ``"latest"``."""
    if isinstance(value, dict):
        if set(value) != {"release"}:
            raise InvalidInput(
                field,
                'a candidate is a release number, {"release": <number>} or "latest" '
                "(a split is no candidate: set it with PUT /api/labels/{name}).",
            )
        target = target_valid(value, field)
        assert isinstance(target, Single)  # {"release": N} is one
        return target.pointer
    return pointer_valid(value, field)


def message_valid(value: object, field: str = "message") -> str:
    """A release's or a move's message: text of at most ``MESSAGE_MAX_LENGTH`` characters
    (``None``: none)."""
    if value is None:
        return ""
    if not isinstance(value, str) or len(value) > MESSAGE_MAX_LENGTH:
        raise InvalidInput(
            field, f"a message is text of at most {MESSAGE_MAX_LENGTH:,} characters."
        )
    return value


def window_days_valid(value: object, field: str = "window_days") -> int:
    """How many days back an impact report looks: a whole number from 1 to 365."""
    if value is None:
        return WINDOW_DAYS_DEFAULT
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= WINDOW_DAYS_MAX:
        return value
    raise InvalidInput(
        field,
        f"{value!r:.40} is not a number of days: write a whole number from 1 to "
        f"{WINDOW_DAYS_MAX} (default {WINDOW_DAYS_DEFAULT}).",
    )


@dataclass(frozen=True)
class CheckedTestContext:
    """A test context's fields, checked: the cwd as :func:`cwd_check` accepted it
    (``None``: none, the context renders with the host-local values it supplies
    alone), the model, and the rest as an agent host's request would give them."""

    name: str
    cwd: CheckedCwd | None
    model: str
    host: HostContext
    override_json: object


def test_context_valid(
    *, name: str, fields: dict[str, Any], location_required: bool = True
) -> CheckedTestContext:
    """A test context, checked field by field as a conversation's host context is
    (``cwd``, ``values``, ``provider``, ``tools``, ``variables``, ``override``), and
    ``model`` (at most 200 characters). It needs a ``cwd`` or host-local ``values``
    (a central deployment's hosts send values and the server reads no directory): with
    neither, 400 on ``cwd`` — unless ``location_required`` is off (an evaluation case's
    inline context: ``{"provider", "model"}`` alone renders as a turn without a cwd)."""
    checked_name = label_name_valid(name)
    model = fields.get("model") or ""
    if not isinstance(model, str) or len(model) > MODEL_MAX_LENGTH:
        raise InvalidInput("model", f"the model is text of at most {MODEL_MAX_LENGTH} characters.")
    cwd = fields.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise InvalidInput("cwd", "the cwd is an absolute path, such as '/home/ada/project'.")
    given = {
        key: fields[key]
        for key in ("provider", "tools", "variables", "values")
        if fields.get(key) is not None
    }
    override = fields.get("override")
    host = host_context_check(**given, override=override)
    if location_required and not cwd and not host.values:
        raise InvalidInput(
            "cwd",
            "a test context needs a cwd (an absolute path, such as '/home/ada/project') or "
            'host-local values (values, such as {"git:branch": "main"}).',
        )
    return CheckedTestContext(
        name=checked_name,
        cwd=cwd_check(cwd) if cwd else None,
        model=model,
        host=host,
        override_json=override,
    )
