"""Filters of the Evaluations page: ``{% load evaluations_ui %}``.

* ``{{ run.candidate|side_text }}`` — a run's side in words: "latest", "release 3",
  "label production".
* ``{{ value|json_text }}`` — a check's field, a context or a tool call's arguments as
  compact JSON text (never a Python repr).
* ``{{ run|status_text }}``, ``{{ run|status_class }}`` — a run's status as the pages
  show it: a finished run with cases in error says so first ("finished with errors",
  the error colour), never the green of a run that passed.
* ``{{ value|cost_text }}`` — a cost in the models' price units: ``0.0123``, ``12.35``.
* ``{{ usage|usage_text }}`` — a side's tokens (``results.Usage``): "120 in / 30 out
  tokens", or "error" when every call failed and none reported any.
"""

from __future__ import annotations

import json
from typing import Any

from django import template

from sysprompt.evaluations.results import Usage
from sysprompt.evaluations.selectors import run_errors
from sysprompt_core.releases import LATEST, describe_pointer

register = template.Library()


@register.filter
def side_text(value: object) -> str:
    if value == LATEST:
        return describe_pointer(LATEST)
    if isinstance(value, int) and not isinstance(value, bool):
        return describe_pointer(value)
    if isinstance(value, dict) and "label" in value:
        return f"label {value['label']}"
    return str(value)


@register.filter
def json_text(value: object) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


VERDICTS = {
    "regression": "regression",
    "fix": "fix",
    "same_pass": "passes on both",
    "same_fail": "fails on both",
    "error": "error",
}


@register.filter
def verdict_text(value: object) -> str:
    return VERDICTS.get(str(value), "—")


@register.filter
def status_text(run: Any) -> str:
    errors = run_errors(run)
    if errors:
        return "finished with errors"
    return str(run.status)


@register.filter
def status_class(run: Any) -> str:
    """The CSS suffix of ``eval-status-…``: ``errors`` for a finished run with errors."""
    return "errors" if run_errors(run) else str(run.status)


@register.filter
def cost_text(value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "—"
    if value >= 1:
        return f"{value:,.2f}"
    return f"{value:.4g}"


@register.filter
def usage_text(usage: Usage | None) -> str:
    if usage is None or usage.done == 0:
        return "no answer"
    if usage.input_tokens is None and usage.output_tokens is None:
        return "error" if usage.failed else "no tokens reported"
    tokens_in = "?" if usage.input_tokens is None else f"{usage.input_tokens:,}"
    tokens_out = "?" if usage.output_tokens is None else f"{usage.output_tokens:,}"
    text = f"{tokens_in} in / {tokens_out} out tokens"
    if usage.cost is not None:
        text += f" · cost {cost_text(usage.cost)}"
    if usage.failed:
        text += f" · {usage.failed} call{'s' if usage.failed != 1 else ''} in error"
    return text
