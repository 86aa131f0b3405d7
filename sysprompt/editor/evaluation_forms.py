"""The Evaluations page's case form: rows of turns and checks as posted, and back.

A case's turns and checks are rows of numbered fields (``turn-0-role``,
``check-2-pattern``); "Add a turn" and the check menu (a type, then "Add check") are
submit buttons that post the form back with one more row of that type's fields
(nothing is stored), so the form needs no script. :func:`form_of_post` reads the rows,
:func:`case_of_form` makes them the service's fields (``sysprompt.evaluations.services``
checks every value); :func:`error_slot` tells under
which row or field a refusal (``InvalidInput`` naming ``checks[1].pattern``) belongs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.http import QueryDict

from sysprompt.errors import InvalidInput
from sysprompt_core.evaluations import CHECK_TYPES

ROWS_MAX = 200
"""The most turn or check rows one posted form may hold."""

CHECK_FIELDS: dict[str, tuple[str, ...]] = {
    "contains": ("value", "ignore_case"),
    "not_contains": ("value", "ignore_case"),
    "equals": ("value",),
    "starts_with": ("value",),
    "regex": ("pattern",),
    "json": (),
    "json_schema": ("schema",),
    "max_chars": ("value",),
    "tool_called": ("name", "arguments"),
    "judge": ("rubric", "model"),
}
"""The fields the menu's row of each check type shows (the core's ``CHECK_TYPES``)."""

CHECK_LABELS = {
    "contains": "Contains",
    "not_contains": "Does not contain",
    "equals": "Equals",
    "starts_with": "Starts with",
    "regex": "Matches a regular expression",
    "json": "Is JSON",
    "json_schema": "Is JSON valid under a schema",
    "max_chars": "At most N characters",
    "tool_called": "Calls a tool",
    "judge": "A judge model decides",
}
assert set(CHECK_FIELDS) == set(CHECK_TYPES) == set(CHECK_LABELS)

_JSON_FIELDS = ("schema", "arguments")


@dataclass
class CaseForm:
    """What the form shows: the case's values as text, and the errors by slot
    (``name``, ``turn-2``, ``check-0``, ``context``, ``tools``, ``reference``, ``form``)."""

    name: str = ""
    turns: list[dict[str, str]] = field(default_factory=lambda: [{"role": "user", "content": ""}])
    checks: list[dict[str, Any]] = field(default_factory=list)
    test_context: str = ""
    context: str = ""
    tools: str = ""
    reference: str = ""
    errors: dict[str, str] = field(default_factory=dict)

    def error(self, slot: str, message: str) -> None:
        self.errors.setdefault(slot, message)


def form_of_case(case: Mapping[str, Any]) -> CaseForm:
    """A stored case (``services.case_json``) as the form's text."""
    context = dict(case.get("context") or {})
    test_context = str(context.pop("test_context", "")) if "test_context" in context else ""
    checks = []
    for check in case.get("checks") or []:
        row: dict[str, Any] = {"type": check.get("type", "")}
        for name in CHECK_FIELDS.get(row["type"], ()):
            value = check.get(name)
            if name in _JSON_FIELDS:
                row[name] = "" if value is None else json.dumps(value, indent=2)
            elif name == "ignore_case":
                row[name] = bool(value)
            else:
                row[name] = "" if value is None else str(value)
        checks.append(row)
    return CaseForm(
        name=str(case.get("name", "")),
        turns=[dict(turn) for turn in case.get("messages") or []],
        checks=checks,
        test_context=test_context,
        context=json.dumps(context, indent=2) if context else "",
        tools=json.dumps(case.get("tools"), indent=2) if case.get("tools") else "",
        reference=case.get("reference") or "",
    )


def _rows(post: QueryDict, prefix: str) -> list[int]:
    pattern = re.compile(rf"^{prefix}-(\d{{1,3}})-")
    found = {int(m[1]) for key in post if (m := pattern.match(key))}
    return sorted(index for index in found if index < ROWS_MAX)


def form_of_post(post: QueryDict) -> CaseForm:
    """The posted rows as the form shows them again (the order of their numbers); an
    "Add a turn", "Add check" or "Remove" button applied."""
    form = CaseForm(
        name=post.get("name", ""),
        turns=[
            {
                "role": post.get(f"turn-{i}-role", "user"),
                "content": post.get(f"turn-{i}-content", ""),
            }
            for i in _rows(post, "turn")
        ],
        checks=[],
        test_context=post.get("test_context", ""),
        context=post.get("context", ""),
        tools=post.get("tools", ""),
        reference=post.get("reference", ""),
    )
    for i in _rows(post, "check"):
        kind = post.get(f"check-{i}-type", "")
        row: dict[str, Any] = {"type": kind}
        for name in CHECK_FIELDS.get(kind, ()):
            if name == "ignore_case":
                row[name] = post.get(f"check-{i}-{name}") == "on"
            else:
                row[name] = post.get(f"check-{i}-{name}", "")
        form.checks.append(row)
    remove = post.get("remove_check", "")
    if remove.isascii() and remove.isdigit() and int(remove) < len(form.checks):
        del form.checks[int(remove)]
    remove_turn = post.get("remove_turn", "")
    if remove_turn.isascii() and remove_turn.isdigit() and int(remove_turn) < len(form.turns):
        del form.turns[int(remove_turn)]
    add = post.get("check_type", "") if "add_check" in post else ""
    if add in CHECK_FIELDS and len(form.checks) < ROWS_MAX:
        form.checks.append(
            {"type": add, **{n: False if n == "ignore_case" else "" for n in CHECK_FIELDS[add]}}
        )
    if "add_turn" in post and len(form.turns) < ROWS_MAX:
        last = form.turns[-1]["role"] if form.turns else "assistant"
        form.turns.append({"role": "assistant" if last == "user" else "user", "content": ""})
    return form


def edited(post: QueryDict) -> bool:
    """Whether the post only edits the form (a row added or removed): show it again."""
    return any(key in post for key in ("add_check", "add_turn", "remove_check", "remove_turn"))


def _json(text: str, slot: str, what: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as error:
        raise InvalidInput(slot, f"{what} is JSON: {error}") from None


def case_of_form(form: CaseForm) -> dict[str, Any]:
    """The service's fields; text that should be JSON and is not raises
    :class:`InvalidInput` naming the API field (``checks[1].schema``, ``context``)."""
    checks = []
    for index, row in enumerate(form.checks):
        check: dict[str, Any] = {"type": row["type"]}
        for name in CHECK_FIELDS.get(row["type"], ()):
            value = row.get(name)
            where = f"checks[{index}].{name}"
            if name == "ignore_case":
                if value:
                    check[name] = True
            elif name in _JSON_FIELDS:
                if str(value).strip():
                    check[name] = _json(str(value), where, "it")
                elif name == "schema":
                    raise InvalidInput(where, "a JSON Schema (an object) is needed")
            elif name == "model":
                if value:
                    check[name] = value
            elif row["type"] == "max_chars":
                text = str(value).strip()
                check[name] = int(text) if text.isascii() and text.isdigit() else text
            else:
                check[name] = value
        checks.append(check)
    if form.test_context and form.context.strip():
        raise InvalidInput("context", "name a test context, or give its fields inline, not both")
    if form.test_context:
        context: object = {"test_context": form.test_context}
    elif form.context.strip():
        context = _json(form.context, "context", "the inline context")
    else:
        context = {}
    fields: dict[str, Any] = {
        "name": form.name.strip(),
        "context": context,
        "messages": [turn for turn in form.turns if turn["content"].strip()],
        "tools": _json(form.tools, "tools", "the tools list") if form.tools.strip() else [],
        "checks": checks,
        "reference": form.reference or None,
    }
    return fields


_ROW_FIELD = re.compile(r"^(messages|checks)\[(\d+)\]")


def error_slot(form: CaseForm, error: InvalidInput) -> None:
    """Put a refusal under the row or field it names (the form's own slot otherwise);
    a turn's index counts the turns that were sent (blank ones are left out)."""
    match = _ROW_FIELD.match(error.field)
    rest = error.field.split(".", 1)[1] if "." in error.field else ""
    if match is not None and match[1] == "checks":
        form.error(f"check-{match[2]}", f"{rest + ': ' if rest else ''}{error.message}")
        return
    if match is not None:
        sent = [i for i, turn in enumerate(form.turns) if turn["content"].strip()]
        index = int(match[2])
        if index < len(sent):
            form.error(f"turn-{sent[index]}", error.message)
            return
    top = error.field.split(".", 1)[0].split("[", 1)[0]
    if top in ("name", "messages", "tools", "reference", "checks"):
        form.error(top, f"{error.field}: {error.message}" if error.field != top else error.message)
    elif top == "context":
        form.error("context", f"{error.field}: {error.message}")
    else:
        form.error("form", f"{error.field}: {error.message}")


def pointer_of_text(text: str) -> object:
    """A run side as the form gives it: ``latest``, a release number, or a label's name."""
    text = text.strip()
    if text == "latest":
        return "latest"
    if text.isascii() and text.isdigit() and len(text) <= 10:
        return int(text)
    return {"label": text}
