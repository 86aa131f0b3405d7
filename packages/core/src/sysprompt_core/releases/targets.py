"""Labels and what they point at, as values: names, targets and their JSON forms.

A **label** (``production``, ``staging``, a tenant's name) says what a conversation is
built from. Its name matches ``LABEL_NAME_PATTERN`` (lowercase, at most 63
characters); ``latest`` is no label's name (it names the working copy).

A label's **target** is one of:

* ``"latest"`` — the working copy itself, moving with every save;
* ``{"release": N}`` — release ``N``;
* ``{"split": [{"release": N or "latest", "weight": W}, …]}`` — 2 to 10 **arms**, each
  a release (or ``latest``, at most once each) with a weight in basis points (1 to
  9,999); the weights add up to 10,000.

:func:`parse_target` checks a JSON value into a :class:`Target` or raises
:class:`~sysprompt_core.errors.InvalidTarget` naming the part that is wrong
(``target``, ``target.release``, ``target.split``, ``target.split[1].weight``) and what
to write instead; :meth:`Single.as_json` / :meth:`Split.as_json` give the JSON back in
the same canonical form (what is stored and answered). A **pointer** is what one arm
(or a single target) builds from: a release number or ``"latest"``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, TypeAlias, TypeGuard

from sysprompt_core.errors import InvalidTarget

LABEL_NAME_MAX_LENGTH = 63
LABEL_NAME_PATTERN = r"[a-z0-9][a-z0-9._-]{0,62}"
"""A label's name (use ``fullmatch``): a lowercase letter or digit, then up to 62 of
lowercase letters, digits, ``.``, ``_`` and ``-``."""
PRODUCTION = "production"
"""The label that always exists, and the one a conversation uses when nothing says
otherwise."""
LATEST: Literal["latest"] = "latest"
"""The working copy, as a target or an arm's pointer."""

SPLIT_TOTAL = 10_000
"""What a split's weights add up to: basis points (1 = 0.01 %)."""
SPLIT_MIN_ARMS = 2
SPLIT_MAX_ARMS = 10
RELEASE_NUMBER_MAX = 2_147_483_647
"""The largest release number (the database's integer column)."""

Pointer: TypeAlias = int | Literal["latest"]
"""What a conversation is built from: a release number, or ``"latest"``."""

_NAME = re.compile(LABEL_NAME_PATTERN)
_FORMS = (
    '"latest", {"release": <number>} or '
    '{"split": [{"release": <number> or "latest", "weight": <basis points>}, …]}'
)


@dataclass(frozen=True, slots=True)
class Arm:
    """One arm of a split: its pointer and its weight in basis points."""

    pointer: Pointer
    weight: int


@dataclass(frozen=True, slots=True)
class Single:
    """A target of one pointer: ``"latest"`` or one release."""

    pointer: Pointer

    @property
    def pointers(self) -> tuple[Pointer, ...]:
        return (self.pointer,)

    def as_json(self) -> object:
        return LATEST if self.pointer == LATEST else {"release": self.pointer}

    def describe(self) -> str:
        return describe_pointer(self.pointer)


@dataclass(frozen=True, slots=True)
class Split:
    """A target of 2–10 weighted arms (see the module docstring)."""

    arms: tuple[Arm, ...]

    @property
    def pointers(self) -> tuple[Pointer, ...]:
        return tuple(arm.pointer for arm in self.arms)

    def as_json(self) -> object:
        return {"split": [{"release": arm.pointer, "weight": arm.weight} for arm in self.arms]}

    def describe(self) -> str:
        return "split: " + ", ".join(
            f"{describe_pointer(arm.pointer)} {percent(arm.weight)}" for arm in self.arms
        )


Target: TypeAlias = Single | Split


def describe_pointer(pointer: Pointer) -> str:
    """``"latest"`` or ``"release 3"``: how messages name a pointer."""
    return LATEST if pointer == LATEST else f"release {pointer}"


def percent(weight: int) -> str:
    """Basis points as a percentage: ``9000`` → ``"90%"``, ``1250`` → ``"12.5%"``."""
    return f"{weight / 100:g}%"


def is_label_name(name: str) -> bool:
    """Whether ``name`` can be a label's name (``latest`` cannot)."""
    return name != LATEST and _NAME.fullmatch(name) is not None


def label_name_check(name: object, field: str = "name") -> str:
    """``name`` when it can be a label's name; :class:`InvalidTarget` naming ``field``."""
    if isinstance(name, str) and is_label_name(name):
        return name
    if name == LATEST:
        reason = '"latest" is the working copy itself, not a label'
    else:
        shown = repr(name)[:80] if isinstance(name, str) else f"a {type(name).__name__}"
        reason = f"{shown} is not a label name"
    raise InvalidTarget(
        field,
        f"{reason}: a label's name is 1 to {LABEL_NAME_MAX_LENGTH} characters, a lowercase "
        "letter or digit followed by lowercase letters, digits, '.', '_' or '-' "
        "(such as 'staging', 'canary' or 'tenant-42').",
    )


def parse_target(value: object, field: str = "target") -> Target:
    """``value`` (JSON) as a :class:`Target`; :class:`InvalidTarget` naming the part
    that is wrong otherwise (see the module docstring)."""
    if value == LATEST:
        return Single(LATEST)
    if not _is_object(value) or len(value) != 1:
        raise InvalidTarget(field, f"{_shown(value)} is not a target; write {_FORMS}.")
    [(key, inner)] = value.items()
    if key == "release":
        return Single(_release_number(inner, f"{field}.release"))
    if key == "split":
        return Split(_arms(inner, f"{field}.split"))
    raise InvalidTarget(field, f"{_shown(key)} is not a kind of target; write {_FORMS}.")


def parse_pointer(value: object, field: str) -> Pointer:
    """A release number or ``"latest"``; :class:`InvalidTarget` naming ``field``."""
    if value == LATEST:
        return LATEST
    return _release_number(value, field, also='or "latest"')


def _release_number(value: object, field: str, also: str = "") -> int:
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= RELEASE_NUMBER_MAX:
        return value
    alternative = f" {also}" if also else ""
    raise InvalidTarget(
        field,
        f"{_shown(value)} is not a release number: write a whole number from 1 "
        f"(a release's number){alternative}.",
    )


def _arms(value: object, field: str) -> tuple[Arm, ...]:
    if not isinstance(value, list):
        raise InvalidTarget(
            field, f'a split is a list of arms {{"release", "weight"}}, not {_shown(value)}.'
        )
    if not SPLIT_MIN_ARMS <= len(value) <= SPLIT_MAX_ARMS:
        raise InvalidTarget(
            field,
            f"a split has {SPLIT_MIN_ARMS} to {SPLIT_MAX_ARMS} arms; this one has "
            f'{len(value)}. For one release, point the label at it: {{"release": N}}.',
        )
    arms: list[Arm] = []
    seen: dict[Pointer, int] = {}
    for index, item in enumerate(value):
        where = f"{field}[{index}]"
        if not _is_object(item) or set(item) != {"release", "weight"}:
            raise InvalidTarget(
                where,
                f'an arm is {{"release": <number> or "latest", "weight": <basis points>}}, '
                f"not {_shown(item)}.",
            )
        pointer = parse_pointer(item["release"], f"{where}.release")
        if pointer in seen:
            raise InvalidTarget(
                f"{where}.release",
                f"{describe_pointer(pointer)} is already arm {seen[pointer]}: each release "
                "(and latest) may be one arm only; add the weights together.",
            )
        seen[pointer] = index
        arms.append(Arm(pointer, _weight(item["weight"], f"{where}.weight")))
    total = sum(arm.weight for arm in arms)
    if total != SPLIT_TOTAL:
        raise InvalidTarget(
            field,
            f"the weights add up to {total:,} basis points; they must add up to "
            f"{SPLIT_TOTAL:,} (100%): one basis point is 0.01%.",
        )
    return tuple(arms)


def _weight(value: object, field: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value < SPLIT_TOTAL:
        return value
    raise InvalidTarget(
        field,
        f"{_shown(value)} is not a weight: write a whole number of basis points from 1 "
        f"to {SPLIT_TOTAL - 1:,} (100 is 1%; all the arms' weights add up to {SPLIT_TOTAL:,}).",
    )


def _is_object(value: object) -> TypeGuard[dict[object, object]]:
    return isinstance(value, dict)


def _shown(value: object) -> str:
    if isinstance(value, str):
        return repr(value)[:80]
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return repr(value)[:40]
    return "a list" if isinstance(value, list) else "an object"
