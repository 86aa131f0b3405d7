"""Filters of the Evaluations page: ``{% load evaluations_ui %}``.

* ``{{ run.candidate|side_text }}`` — a run's side in words: "latest", "release 3",
  "label production".
* ``{{ value|json_text }}`` — a check's field or a context as compact JSON text.
"""

from __future__ import annotations

import json

from django import template

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
