"""How messages name a JSON value's kind: one definition, shared by every input check."""

from __future__ import annotations

import pytest

from sysprompt_core import _json
from sysprompt_core.library import overrides
from sysprompt_core.variables import supplied


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        (None, "null"),
        (True, "a boolean"),
        (3, "a number"),
        (2.5, "a number"),
        ("x", "a string"),
        ([1], "an array"),
        ((1,), "an array"),
        ({"a": 1}, "an object"),
        (b"x", "bytes"),
    ],
)
def test_json_type_names_each_kind(value: object, kind: str) -> None:
    assert _json.json_type(value) == kind


def test_json_type_is_defined_once_for_both_checks() -> None:
    for module in (supplied, overrides):
        assert vars(module)["json_type"] is _json.json_type
        assert "_json_type" not in vars(module)
