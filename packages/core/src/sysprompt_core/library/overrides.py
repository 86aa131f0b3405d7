"""Overrides: text layered onto the rendered root template (instance, thread, call).

An override arrives as JSON and is checked by ``parse_override(value)`` into an
:class:`Override`, or refused with :class:`~sysprompt_core.errors.InvalidOverride`
naming the field and saying what to write instead. The accepted forms:

* ``None`` — no override;
* ``"text"`` — freeform content, appended;
* ``{"content": "text", "strategy"?: "append" | "prepend"}``;
* ``{"preset": "<fragment name>", "variables"?: {name: value}, "strategy"?: …}``.

An optional key given as ``null`` counts as not given. Exactly one of ``content`` and
``preset``; ``"replace"`` is refused on purpose (an
override adds to the prompt, it never removes what the base requires). Variables are
checked by ``check_variables`` (also for the request's own ``variables``): at most
``HOST_VARIABLES_MAX_COUNT``, each name one that ``[var:<name>]`` can reference, each
value at most ``HOST_VARIABLE_VALUE_MAX_BYTES`` in UTF-8.

Merging is ``merge(base, addition, strategy)``: ``append`` → ``base + "\\n\\n" +
addition``, ``prepend`` → ``addition + "\\n\\n" + base``; a side that is ``None``,
empty or only whitespace is left out (no stray separator), and a result that is only
whitespace is ``None``. ``apply_layers`` folds a sequence of such layers in order.
Rendering a preset is not done here: the caller renders it and passes the text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal, TypeGuard, get_args

from sysprompt_core._json import json_type
from sysprompt_core.errors import InvalidFragmentName, InvalidOverride
from sysprompt_core.library.names import fragment_name_check, is_variable_name
from sysprompt_core.limits import (
    HOST_VARIABLE_NAME_MAX_LENGTH,
    HOST_VARIABLE_VALUE_MAX_BYTES,
    HOST_VARIABLES_MAX_COUNT,
)

Strategy = Literal["append", "prepend"]
STRATEGIES: tuple[Strategy, ...] = get_args(Strategy)
DEFAULT_STRATEGY: Strategy = "append"
SEPARATOR = "\n\n"

_CONTENT_KEYS = frozenset({"content", "strategy"})
_PRESET_KEYS = frozenset({"preset", "variables", "strategy"})
_FORMS = (
    'a string, {"content": "…", "strategy"?: "append" | "prepend"} or '
    '{"preset": "<fragment name>", "variables"?: {…}, "strategy"?: "append" | "prepend"}'
)


@dataclass(frozen=True)
class Override:
    """One checked override: exactly one of ``content`` and ``preset``.

    ``strategy`` is ``None`` when the override does not say: then a preset's own
    strategy applies, else ``append`` (``strategy_or``).
    """

    content: str | None = None
    preset: str | None = None
    variables: Mapping[str, str] = field(default_factory=dict, hash=False)
    strategy: Strategy | None = None

    def __post_init__(self) -> None:
        if (self.content is None) == (self.preset is None):
            raise ValueError("an Override has exactly one of content and preset")
        object.__setattr__(self, "variables", MappingProxyType(dict(self.variables)))

    def strategy_or(self, preset_strategy: Strategy | None = None) -> Strategy:
        """The strategy to merge with: the override's, else the preset's, else append."""
        return self.strategy or preset_strategy or DEFAULT_STRATEGY


def parse_override(value: object, field: str = "override") -> Override | None:
    """Check a JSON value as an override (see the module docstring); ``field`` is the
    request field it came from, used in messages (``override``, ``call_override``)."""
    if value is None:
        return None
    if isinstance(value, str):
        return Override(content=value)
    if not isinstance(value, dict):
        raise InvalidOverride(field, f"an override is null, {_FORMS}; got {json_type(value)}.")
    return _parse_object(value, field)


def check_variables(value: object, field: str = "variables") -> dict[str, str]:
    """Check host-supplied variables (an object of string → string) within the limits."""
    if not _is_object(value):
        raise InvalidOverride(
            field, f"variables are an object of names to string values; got {json_type(value)}."
        )
    if len(value) > HOST_VARIABLES_MAX_COUNT:
        raise InvalidOverride(
            field,
            f"{len(value):,} variables given; at most {HOST_VARIABLES_MAX_COUNT} are allowed.",
        )
    checked: dict[str, str] = {}
    for name, text in value.items():
        key = _check_name(name, field)
        checked[key] = _check_value(key, text, field)
    return checked


def check_strategy(value: object, field: str = "strategy") -> Strategy:
    """Check a merge strategy: ``append`` or ``prepend`` (``replace`` refused, with why)."""
    if value == "replace":
        raise InvalidOverride(
            field,
            '"replace" is not a strategy: an override adds to the prompt, it never '
            'removes what the base requires. Use "append" (after the base, the default) '
            'or "prepend" (before it).',
        )
    if not _is_strategy(value):
        raise InvalidOverride(
            field, f'the strategy is "append" or "prepend"; got {_json_repr(value)}.'
        )
    return value


def merge(base: str | None, addition: str | None, strategy: Strategy) -> str | None:
    """``base`` with ``addition`` after it (``append``) or before it (``prepend``),
    joined by ``SEPARATOR`` with neither side trimmed (after a side that ends with a line
    ending that is two blank lines); an empty side is left out; only whitespace is
    ``None``."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}: expected one of {STRATEGIES}")
    parts = (base, addition) if strategy == "append" else (addition, base)
    kept = [part for part in parts if part is not None and part.strip()]
    return SEPARATOR.join(kept) if kept else None


def apply_layers(base: str | None, layers: Sequence[tuple[str | None, Strategy]]) -> str | None:
    """Fold ``layers`` (text, strategy) onto ``base`` in order, each with ``merge``."""
    result = base if base is not None and base.strip() else None
    for addition, strategy in layers:
        result = merge(result, addition, strategy)
    return result


def _parse_object(value: dict[object, object], field: str) -> Override:
    for key in value:
        if not isinstance(key, str) or key not in _CONTENT_KEYS | _PRESET_KEYS:
            raise InvalidOverride(
                f"{field}.{key}",
                "unknown key; an override object has the keys content and strategy, "
                "or preset, variables and strategy.",
            )
    has_content, has_preset = "content" in value, "preset" in value
    if has_content == has_preset:
        which = "both" if has_content else "neither"
        raise InvalidOverride(
            field, f"an override has exactly one of content and preset; it has {which}."
        )
    given = value.get("strategy")
    strategy = None if given is None else check_strategy(given, f"{field}.strategy")
    if has_content:
        if value.get("variables") is not None:
            raise InvalidOverride(
                f"{field}.variables", "variables apply to a preset; content is used as written."
            )
        content = value["content"]
        if not isinstance(content, str):
            raise InvalidOverride(
                f"{field}.content", f"content is a string; got {json_type(content)}."
            )
        return Override(content=content, strategy=strategy)
    preset = _check_preset(value["preset"], f"{field}.preset")
    variables = check_variables(_or_empty(value.get("variables")), f"{field}.variables")
    return Override(preset=preset, variables=variables, strategy=strategy)


def _check_preset(value: object, field: str) -> str:
    if not isinstance(value, str):
        raise InvalidOverride(
            field, f"preset is the name of a library fragment; got {json_type(value)}."
        )
    try:
        return fragment_name_check(value)
    except InvalidFragmentName as error:
        raise InvalidOverride(field, str(error)) from None


def _or_empty(value: object) -> object:
    return {} if value is None else value


def _check_name(name: object, field: str) -> str:
    """Return ``name`` checked as a variable name."""
    if not isinstance(name, str):
        raise InvalidOverride(field, f"a variable name is a string; got {json_type(name)}.")
    if len(name) > HOST_VARIABLE_NAME_MAX_LENGTH or not is_variable_name(name):
        shown = name if len(name) <= 40 else name[:40] + "…"
        raise InvalidOverride(
            f"{field}.{shown}",
            "a variable name is what may follow 'var:' in a tag: 1 to "
            f"{HOST_VARIABLE_NAME_MAX_LENGTH} characters, no '[', ']' or line break, "
            "no space at either end (for example 'project' or 'team name').",
        )
    return name


def _check_value(name: str, text: object, field: str) -> str:
    if not isinstance(text, str):
        raise InvalidOverride(
            f"{field}.{name}", f"a variable's value is a string; got {json_type(text)}."
        )
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > HOST_VARIABLE_VALUE_MAX_BYTES:
        raise InvalidOverride(
            f"{field}.{name}",
            f"the value has {size:,} bytes in UTF-8; at most "
            f"{HOST_VARIABLE_VALUE_MAX_BYTES:,} are allowed.",
        )
    return text


def _is_object(value: object) -> TypeGuard[dict[object, object]]:
    return isinstance(value, dict)


def _is_strategy(value: object) -> TypeGuard[Strategy]:
    return value in STRATEGIES


def _json_repr(value: object) -> str:
    text = repr(value) if not isinstance(value, str) else f'"{value}"'
    return text if len(text) <= 40 else text[:40] + "…"
