"""Library §4: overrides (checked from JSON), merging, and layers applied in order."""

from __future__ import annotations

import pytest

from sysprompt_core.errors import CoreError, InvalidOverride
from sysprompt_core.library.overrides import (
    Override,
    Strategy,
    apply_layers,
    check_variables,
    merge,
    parse_override,
)
from sysprompt_core.limits import (
    HOST_VARIABLE_NAME_MAX_LENGTH,
    HOST_VARIABLE_VALUE_MAX_BYTES,
    HOST_VARIABLES_MAX_COUNT,
)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        ("Be brief.", Override(content="Be brief.")),
        ("", Override(content="")),
        ({"content": "Be brief."}, Override(content="Be brief.")),
        (
            {"content": "x", "strategy": "prepend"},
            Override(content="x", strategy="prepend"),
        ),
        ({"content": "x", "strategy": None}, Override(content="x")),
        ({"content": "x", "variables": None}, Override(content="x")),
        ({"preset": "personas/reviewer"}, Override(preset="personas/reviewer")),
        (
            {"preset": "expert", "variables": {"topic": "physics", "team name": "A"}},
            Override(preset="expert", variables={"topic": "physics", "team name": "A"}),
        ),
        (
            {"preset": "expert", "variables": None, "strategy": "append"},
            Override(preset="expert", strategy="append"),
        ),
    ],
)
def test_parse_override_when_valid(value: object, expected: Override | None) -> None:
    assert parse_override(value) == expected


@pytest.mark.parametrize(
    ("value", "field", "message"),
    [
        (42, "override", "got a number"),
        (["x"], "override", "got an array"),
        (True, "override", "got a boolean"),
        ({}, "override", "it has neither"),
        ({"strategy": "append"}, "override", "it has neither"),
        ({"content": "x", "preset": "core"}, "override", "it has both"),
        ({"content": "x", "strategy": "replace"}, "override.strategy", "never removes"),
        ({"preset": "core", "strategy": "replace"}, "override.strategy", "never removes"),
        ({"content": "x", "strategy": "APPEND"}, "override.strategy", '"append" or "prepend"'),
        ({"content": "x", "strategy": 1}, "override.strategy", '"append" or "prepend"'),
        ({"content": "x", "tag": "y"}, "override.tag", "unknown key"),
        ({"content": 3}, "override.content", "got a number"),
        ({"content": None}, "override.content", "got null"),
        ({"content": "x", "variables": {}}, "override.variables", "apply to a preset"),
        ({"preset": 7}, "override.preset", "got a number"),
        ({"preset": "Core"}, "override.preset", "for example 'core'"),
        ({"preset": "../etc"}, "override.preset", "segment '..'"),
        ({"preset": "core", "variables": ["a"]}, "override.variables", "got an array"),
        ({"preset": "core", "variables": {"a": 1}}, "override.variables.a", "is a string"),
        ({"preset": "core", "variables": {" a": "x"}}, "override.variables. a", "'var:'"),
        ({"preset": "core", "variables": {"a]": "x"}}, "override.variables.a]", "'var:'"),
        ({"preset": "core", "variables": {"": "x"}}, "override.variables.", "'var:'"),
        ({"preset": "core", "variables": {"a\nb": "x"}}, "override.variables.a\nb", "'var:'"),
    ],
)
def test_parse_override_when_invalid(value: object, field: str, message: str) -> None:
    with pytest.raises(InvalidOverride) as caught:
        parse_override(value)
    assert caught.value.field == field
    assert message in caught.value.message
    assert str(caught.value).startswith(f"{field}: ")
    assert isinstance(caught.value, CoreError) and isinstance(caught.value, ValueError)


def test_parse_override_when_field_given_names_it() -> None:
    with pytest.raises(InvalidOverride) as caught:
        parse_override({"content": "x", "strategy": "replace"}, field="call_override")
    assert caught.value.field == "call_override.strategy"


@pytest.mark.parametrize(
    ("variables", "field", "message"),
    [
        (
            {f"v{i}": "" for i in range(HOST_VARIABLES_MAX_COUNT + 1)},
            "variables",
            f"at most {HOST_VARIABLES_MAX_COUNT}",
        ),
        ({"a" * (HOST_VARIABLE_NAME_MAX_LENGTH + 1): "x"}, "variables.aaaa", "1 to 200"),
        ({"big": "x" * (HOST_VARIABLE_VALUE_MAX_BYTES + 1)}, "variables.big", "65,537 bytes"),
        ({"big": "é" * (HOST_VARIABLE_VALUE_MAX_BYTES // 2 + 1)}, "variables.big", "65,538"),
        ("x", "variables", "got a string"),
    ],
)
def test_check_variables_when_over_limits(variables: object, field: str, message: str) -> None:
    with pytest.raises(InvalidOverride) as caught:
        check_variables(variables)
    assert caught.value.field.startswith(field)
    assert message in caught.value.message


@pytest.mark.parametrize(
    "variables",
    [
        {},
        {f"v{i}": "" for i in range(HOST_VARIABLES_MAX_COUNT)},
        {"a" * HOST_VARIABLE_NAME_MAX_LENGTH: "x"},
        {"big": "x" * HOST_VARIABLE_VALUE_MAX_BYTES},
        {"team name": "", "a:b": "c", "X": "[not parsed]"},
    ],
)
def test_check_variables_when_within_limits(variables: dict[str, str]) -> None:
    assert check_variables(variables) == variables


def test_override_when_built_is_immutable() -> None:
    variables = {"a": "1"}
    override = Override(preset="core", variables=variables)
    variables["a"] = "2"
    assert override.variables == {"a": "1"}
    with pytest.raises(TypeError):
        override.variables["a"] = "3"  # type: ignore[index]
    with pytest.raises(ValueError, match="exactly one"):
        Override()
    with pytest.raises(ValueError, match="exactly one"):
        Override(content="x", preset="core")


@pytest.mark.parametrize(
    ("override", "preset_strategy", "strategy"),
    [
        (Override(content="x"), None, "append"),
        (Override(content="x", strategy="prepend"), None, "prepend"),
        (Override(preset="p"), "prepend", "prepend"),
        (Override(preset="p", strategy="append"), "prepend", "append"),
        (Override(preset="p"), None, "append"),
    ],
)
def test_override_strategy_or_when_preset_strategy(
    override: Override, preset_strategy: Strategy | None, strategy: Strategy
) -> None:
    assert override.strategy_or(preset_strategy) == strategy


@pytest.mark.parametrize(
    ("base", "addition", "strategy", "result"),
    [
        ("base", "more", "append", "base\n\nmore"),
        ("base", "more", "prepend", "more\n\nbase"),
        ("base\n", "more", "append", "base\n\n\nmore"),
        (None, "more", "append", "more"),
        ("", "more", "prepend", "more"),
        ("base", None, "append", "base"),
        ("base", "", "prepend", "base"),
        ("base", " \n\t", "append", "base"),
        (" \n", "more", "append", "more"),
        (None, None, "append", None),
        ("", "", "prepend", None),
        (" ", "\n", "append", None),
    ],
)
def test_merge_when_sides(
    base: str | None, addition: str | None, strategy: Strategy, result: str | None
) -> None:
    assert merge(base, addition, strategy) == result


def test_merge_when_strategy_unknown_raises() -> None:
    with pytest.raises(ValueError, match="unknown strategy"):
        merge("a", "b", "replace")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("base", "layers", "result"),
    [
        ("base", [], "base"),
        (" ", [], None),
        (None, [], None),
        (
            "base",
            [("instance", "append"), ("thread", "prepend"), ("call", "append")],
            "thread\n\nbase\n\ninstance\n\ncall",
        ),
        ("base", [(None, "append"), ("", "prepend"), ("x", "prepend")], "x\n\nbase"),
        (None, [("a", "prepend"), ("b", "prepend")], "b\n\na"),
        ("", [(" ", "append"), (None, "prepend")], None),
    ],
)
def test_apply_layers_when_layers(
    base: str | None, layers: list[tuple[str | None, Strategy]], result: str | None
) -> None:
    assert apply_layers(base, layers) == result
