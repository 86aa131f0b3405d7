"""The Releases page's forms, and how their text becomes what the services take.

The forms check shape only (lengths, which choice); the values themselves are checked
by ``sysprompt.releases`` (names, targets, pointers, test contexts), whose refusals
(:class:`~sysprompt.errors.InvalidInput`, naming an API field such as
``target.split[1].weight``) :func:`refusal_add` shows under the form field that holds
that value, saying which part was wrong.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal, InvalidOperation
from typing import Any

from django import forms

from sysprompt.conf import app_settings
from sysprompt.errors import InvalidInput
from sysprompt.releases.validation import MESSAGE_MAX_LENGTH
from sysprompt_core.limits import MODEL_MAX_LENGTH
from sysprompt_core.releases import LABEL_NAME_MAX_LENGTH, LATEST, SPLIT_TOTAL

TARGET_KINDS = [
    ("latest", "Latest (the working copy: every save reaches it)"),
    ("release", "A release"),
    ("split", "A split of releases"),
]


def message_field() -> forms.CharField:
    return forms.CharField(required=False, max_length=MESSAGE_MAX_LENGTH, strip=False)


class ReleaseCreateForm(forms.Form):
    message = message_field()


class CompareForm(forms.Form):
    release = forms.CharField(max_length=20)
    with_ = forms.CharField(max_length=20, required=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["with"] = self.fields.pop("with_")


class PublishForm(forms.Form):
    label = forms.CharField(max_length=LABEL_NAME_MAX_LENGTH)
    candidate = forms.CharField(max_length=20)


class PublishConfirmForm(PublishForm):
    message = message_field()
    share = forms.CharField(required=False, max_length=10)
    force = forms.BooleanField(required=False)


class LabelSetForm(forms.Form):
    name = forms.CharField(max_length=LABEL_NAME_MAX_LENGTH)
    kind = forms.ChoiceField(choices=TARGET_KINDS)
    release = forms.CharField(max_length=20, required=False)
    arms = forms.CharField(required=False, max_length=2000, strip=False)
    message = message_field()
    protected = forms.BooleanField(required=False)
    force = forms.BooleanField(required=False)


class GateForm(forms.Form):
    """A label's gate on its page: the suite, the thresholds (the pass rate in percent)
    and the models ticked; ``remove`` (the other button) removes it."""

    suite = forms.CharField(required=False, max_length=LABEL_NAME_MAX_LENGTH)
    max_regressions = forms.CharField(required=False, max_length=20)
    min_pass_rate = forms.CharField(required=False, max_length=20)
    models = forms.MultipleChoiceField(required=False)
    remove = forms.BooleanField(required=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        models = self.fields["models"]
        assert isinstance(models, forms.MultipleChoiceField)
        models.choices = [(name, name) for name in app_settings().models]


class RollbackForm(forms.Form):
    message = message_field()
    force = forms.BooleanField(required=False)


class TestContextForm(forms.Form):
    __test__ = False  # not a pytest test class, whatever its name says

    name = forms.CharField(max_length=LABEL_NAME_MAX_LENGTH)
    cwd = forms.CharField(required=False, max_length=4096, strip=False)
    values = forms.CharField(required=False, max_length=100_000, strip=False)
    provider = forms.CharField(required=False, max_length=MODEL_MAX_LENGTH, strip=False)
    model = forms.CharField(required=False, max_length=MODEL_MAX_LENGTH, strip=False)
    tools = forms.CharField(required=False, max_length=20_000)
    variables = forms.CharField(required=False, max_length=100_000, strip=False)
    override = forms.CharField(required=False, max_length=100_000, strip=False)


# --- text → values ---------------------------------------------------------------------

_ARM = re.compile(r"^\s*(?P<pointer>\S+)\s+(?P<weight>\S+?)\s*$")


def target_of_form(data: dict[str, Any]) -> object:
    """The target JSON of a :class:`LabelSetForm`'s cleaned data (the service checks it).

    A split is one arm per line: ``3 9000`` (basis points) or ``3 90%`` (percent), the
    pointer a release number or ``latest``."""
    kind = data["kind"]
    if kind == "latest":
        return LATEST
    if kind == "release":
        return {"release": _number(data.get("release") or "")}
    arms = []
    for line_number, line in enumerate((data.get("arms") or "").splitlines(), start=1):
        if not line.strip():
            continue
        match = _ARM.match(line)
        if match is None:
            raise InvalidInput(
                "arms",
                f"Line {line_number}: write one arm per line, a release number (or latest) "
                "and its weight, e.g. '3 9000' (basis points) or '3 90%'.",
            )
        arms.append(
            {
                "release": _number(match["pointer"]),
                "weight": _weight(match["weight"], line_number),
            }
        )
    return {"split": arms}


def _number(text: str) -> object:
    text = text.strip()
    if text == LATEST:
        return LATEST
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 10 else text


def _weight(text: str, line_number: int) -> object:
    if text.endswith("%"):
        try:
            points = Decimal(text[:-1]) * 100
        except InvalidOperation:
            points = Decimal("NaN")
        if points.is_finite() and points == points.to_integral_value():
            return int(points)
        raise InvalidInput(
            "arms",
            f"Line {line_number}: {text!r} is no percentage of at most two decimals "
            f"(1% is 100 basis points; the weights add up to {SPLIT_TOTAL:,}).",
        )
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 10 else text


def gate_of_form(data: dict[str, Any]) -> dict[str, Any]:
    """The gate JSON of a :class:`GateForm`'s cleaned data (the service checks it):
    the pass rate from percent to a share, the models as ticked (at least one)."""
    if not data["models"]:
        raise InvalidInput(
            "gate.models", "Tick at least one model: the gate counts runs made with it."
        )
    return {
        "suite": data["suite"].strip(),
        "max_regressions": _whole(data["max_regressions"] or "0"),
        "min_pass_rate": _share(data["min_pass_rate"] or "0"),
        "models": list(data["models"]),
    }


def _whole(text: str) -> object:
    text = text.strip()
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 10 else text


def _share(text: str) -> float:
    """A percentage (``90``, ``12.5%``) as a share of 1."""
    try:
        percent = Decimal(text.strip().removesuffix("%"))
    except InvalidOperation:
        percent = Decimal("NaN")
    if not percent.is_finite() or not 0 <= percent <= 100:
        raise InvalidInput("gate.min_pass_rate", f"{text!r} is no percentage from 0 to 100.")
    return float(percent / 100)


def share_of_text(text: str) -> object:
    """The confirm form's share: blank for all conversations (``None``), else percent
    (``10``, ``12.5%``) as basis points; the service checks the range."""
    text = text.strip()
    if not text:
        return None
    try:
        points = Decimal(text.removesuffix("%")) * 100
    except InvalidOperation:
        points = Decimal("NaN")
    if points.is_finite() and points == points.to_integral_value():
        return int(points)
    raise InvalidInput(
        "weight", f"{text!r} is no percentage of at most two decimals, such as 10 or 12.5."
    )


def pointer_of_text(text: str) -> object:
    """A candidate or a comparison's side as the form gives it: ``latest`` or digits."""
    return _number(text)


def tools_parse(text: str) -> list[str]:
    """Tool names, separated by commas, spaces or lines."""
    return [tool for tool in re.split(r"[\s,]+", text) if tool]


def override_parse(text: str) -> object:
    """The override field: blank for none, a JSON object (``{"preset": …}`` or
    ``{"content": …, "strategy": …}``) when it starts with ``{``, else the text itself
    (content appended)."""
    if not text.strip():
        return None
    if text.lstrip().startswith("{"):
        try:
            return json.loads(text)
        except json.JSONDecodeError as error:
            raise InvalidInput(
                "override", f"The override starts with '{{' but is no JSON object: {error}."
            ) from None
    return text


def override_text(value: object) -> str:
    """The inverse of :func:`override_parse`, for a form's initial text."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False)


_SPLIT_PART = re.compile(r"^target\.split\[(\d+)\]\.(release|weight)$")

_FIELD_OF = {
    "target.release": "release",
    "target.split": "arms",
    "target": "kind",
    "candidate": "candidate",
    "label": "label",
    "with": "with",
    "weight": "share",
    "gate.suite": "suite",
    "gate.max_regressions": "max_regressions",
    "gate.min_pass_rate": "min_pass_rate",
    "gate.models": "models",
}


def refusal_add(form: forms.Form, error: InvalidInput) -> None:
    """Show a service's refusal under the form field holding the value it names (the
    form's error when none does); a split's arm is named by its line."""
    field = error.field
    message = error.message
    part = _SPLIT_PART.match(field)
    if part is not None:
        field = "arms"
        message = f"Arm {int(part[1]) + 1}, {part[2]}: {message}"
    else:
        field = _FIELD_OF.get(field, field.split(".", 1)[0])
    if field == "share":
        message = f"{message} (1% is 100 basis points: a share is above 0% and below 100%.)"
    if field not in form.fields:
        form.add_error(None, f"{error.field}: {message}")
    else:
        form.add_error(field, message)
