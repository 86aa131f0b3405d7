"""Releases §2: label names and targets, checked from JSON into values and back."""

from __future__ import annotations

from typing import Any

import pytest

from sysprompt_core.errors import CoreError, InvalidTarget
from sysprompt_core.releases import (
    LATEST,
    RELEASE_NUMBER_MAX,
    Arm,
    Single,
    Split,
    is_label_name,
    label_name_check,
    parse_target,
    percent,
)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("latest", Single(LATEST)),
        ({"release": 3}, Single(3)),
        ({"release": RELEASE_NUMBER_MAX}, Single(RELEASE_NUMBER_MAX)),
        (
            {"split": [{"release": 3, "weight": 9000}, {"release": "latest", "weight": 1000}]},
            Split((Arm(3, 9000), Arm(LATEST, 1000))),
        ),
        (
            {"split": [{"release": n, "weight": 1000} for n in range(1, 11)]},
            Split(tuple(Arm(n, 1000) for n in range(1, 11))),
        ),
        (
            {"split": [{"weight": 1, "release": 1}, {"release": 2, "weight": 9999}]},
            Split((Arm(1, 1), Arm(2, 9999))),
        ),
    ],
)
def test_parse_target_when_valid_gives_the_value_and_its_json_back(
    value: object, expected: Any
) -> None:
    target = parse_target(value)

    assert target == expected
    assert parse_target(target.as_json()) == target


def _split(*arms: tuple[object, object]) -> dict[str, object]:
    return {"split": [{"release": release, "weight": weight} for release, weight in arms]}


@pytest.mark.parametrize(
    ("value", "field", "message"),
    [
        (None, "target", "null is not a target"),
        ("Latest", "target", "'Latest' is not a target"),
        (3, "target", "3 is not a target"),
        ([], "target", "a list is not a target"),
        ({}, "target", "an object is not a target"),
        ({"release": 1, "split": []}, "target", "is not a target"),
        ({"version": 1}, "target", "'version' is not a kind of target"),
        ({"release": 0}, "target.release", "0 is not a release number"),
        ({"release": -1}, "target.release", "is not a release number"),
        ({"release": "3"}, "target.release", "'3' is not a release number"),
        ({"release": 1.0}, "target.release", "1.0 is not a release number"),
        ({"release": True}, "target.release", "a boolean is not a release number"),
        ({"release": "latest"}, "target.release", "is not a release number"),
        ({"release": RELEASE_NUMBER_MAX + 1}, "target.release", "is not a release number"),
        ({"split": "latest"}, "target.split", "a split is a list of arms"),
        (_split((1, 10000)), "target.split", "a split has 2 to 10 arms; this one has 1"),
        ({"split": []}, "target.split", "this one has 0"),
        (
            {"split": [{"release": n, "weight": 909} for n in range(1, 12)]},
            "target.split",
            "this one has 11",
        ),
        (_split((1, 9000), (2, 900)), "target.split", "add up to 9,900 basis points"),
        (_split((1, 9000), (2, 1001)), "target.split", "add up to 10,001 basis points"),
        (_split((1, 10000), (2, 0)), "target.split[0].weight", "10000 is not a weight"),
        (_split((1, 5000), (2, 0)), "target.split[1].weight", "0 is not a weight"),
        (_split((1, 5000), (2, -5000)), "target.split[1].weight", "is not a weight"),
        (_split((1, 5000), (2, 5000.0)), "target.split[1].weight", "is not a weight"),
        (_split((1, 5000), (2, "50%")), "target.split[1].weight", "is not a weight"),
        (_split((1, 5000), (0, 5000)), "target.split[1].release", "0 is not a release number"),
        (_split((1, 5000), ("main", 5000)), "target.split[1].release", 'or "latest"'),
        (_split((1, 5000), (1, 5000)), "target.split[1].release", "release 1 is already arm 0"),
        (
            _split(("latest", 5000), ("latest", 5000)),
            "target.split[1].release",
            "latest is already arm 0",
        ),
        ({"split": [{"release": 1, "weight": 5000}, 2]}, "target.split[1]", "an arm is"),
        (
            {"split": [{"release": 1, "weight": 5000}, {"release": 2}]},
            "target.split[1]",
            "an arm is",
        ),
        (
            {"split": [{"release": 1, "weight": 5000, "x": 1}, {"release": 2, "weight": 5000}]},
            "target.split[0]",
            "an arm is",
        ),
    ],
)
def test_parse_target_when_invalid_names_the_field(value: object, field: str, message: str) -> None:
    with pytest.raises(InvalidTarget) as caught:
        parse_target(value)

    assert caught.value.field == field
    assert message in caught.value.message
    assert isinstance(caught.value, CoreError)


@pytest.mark.parametrize(
    "name", ["production", "staging", "a", "0", "tenant-42", "v1.2_rc", "x" * 63, "9" * 63]
)
def test_label_name_check_when_valid_returns_it(name: str) -> None:
    assert label_name_check(name) == name
    assert is_label_name(name)


@pytest.mark.parametrize(
    "name",
    ["", "Production", "-x", ".x", "_x", "x" * 64, "a b", "a/b", "é", "latest", "x\n", 3, None],
)
def test_label_name_check_when_invalid_names_the_field(name: object) -> None:
    with pytest.raises(InvalidTarget) as caught:
        label_name_check(name, "label")

    assert caught.value.field == "label"
    assert "a label's name is 1 to 63 characters" in caught.value.message
    assert not (isinstance(name, str) and is_label_name(name))


def test_describe_names_each_pointer_and_weight() -> None:
    split = Split((Arm(3, 8750), Arm(LATEST, 1250)))

    assert split.describe() == "split: release 3 87.5%, latest 12.5%"
    assert Single(4).describe() == "release 4"
    assert Single(LATEST).describe() == "latest"
    assert split.pointers == (3, LATEST)
    assert percent(1) == "0.01%"
