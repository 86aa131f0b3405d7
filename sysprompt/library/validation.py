"""Input checks of the library: each raises :class:`~sysprompt.errors.InvalidInput`
naming the field, with the core's message (which says what to write instead).

raw input → the core's rule (``sysprompt_core.library``) → a checked value, or
``InvalidInput(field, message)``; nothing here reads the database except
:func:`override_valid`, which asks the given :class:`FragmentSource` whether a preset
exists.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeGuard, get_args

from sysprompt.conf import app_settings
from sysprompt.errors import InvalidInput, TemplateTooLarge
from sysprompt_core.library import (
    DEFAULT_STRATEGY,
    FragmentSource,
    InvalidFragmentName,
    InvalidOverride,
    InvalidVariantKey,
    Override,
    Strategy,
    VariantKey,
    check_strategy,
    check_variables,
    fragment_name_check,
    parse_override,
)
from sysprompt_core.limits import MODEL_MAX_LENGTH

Source = Literal["user", "default", "import"]
SOURCES: tuple[Source, ...] = get_args(Source)


@dataclass(frozen=True)
class VariantSettings:
    """A version's settings, checked (library spec §2.5)."""

    compress: bool = False
    defaults: dict[str, str] = field(default_factory=dict)
    strategy: Strategy = DEFAULT_STRATEGY


def fragment_name_valid(name: str, field: str = "name") -> str:
    """``name`` if it is a fragment name (``core``, ``env/git-repository``)."""
    try:
        return fragment_name_check(name)
    except InvalidFragmentName as error:
        raise InvalidInput(field, str(error)) from None


def variant_key_valid(provider: str | None, model: str | None) -> VariantKey:
    """The normalised key of a variant; ``None`` or ``""`` is "any". Refused (field
    ``provider`` or ``model``): over 200 characters, no letter or digit, a model without
    a provider."""
    provider = provider or None
    model = model or None
    for name, value in (("provider", provider), ("model", model)):
        if value is not None and len(value) > MODEL_MAX_LENGTH:
            raise InvalidInput(
                name, f"The {name} has {len(value):,} characters; at most {MODEL_MAX_LENGTH}."
            )
    try:
        VariantKey(provider)
    except InvalidVariantKey as error:
        raise InvalidInput("provider", str(error)) from None
    try:
        return VariantKey(provider, model)
    except InvalidVariantKey as error:
        raise InvalidInput("model", str(error)) from None


def text_size_valid(text: str, limit: int | None = None) -> str:
    """``text`` unless it is over ``SYSPROMPT_MAX_TEMPLATE_BYTES`` (:class:`TemplateTooLarge`);
    ``limit``: that setting, already read (checking many texts)."""
    limit = app_settings().max_template_bytes if limit is None else limit
    if len(text) > limit // 4 and (size := len(text.encode("utf-8", "surrogatepass"))) > limit:
        raise TemplateTooLarge(size, limit)
    return text


def settings_valid(
    compress: object = False, defaults: object = None, strategy: object = DEFAULT_STRATEGY
) -> VariantSettings:
    """A version's settings: ``compress`` a boolean, ``defaults`` names → strings (as
    ``var:`` can reference them; ``None`` is ``{}``), ``strategy`` append or prepend."""
    if not isinstance(compress, bool):
        raise InvalidInput("compress", "compress is true or false.")
    if isinstance(defaults, Mapping) and not isinstance(defaults, dict):
        defaults = dict(defaults)  # a TreeRecord's or a FragmentVariant's read-only mapping
    try:
        checked = check_variables({} if defaults is None else defaults, "defaults")
        chosen = check_strategy(strategy, "strategy")
    except InvalidOverride as error:
        raise InvalidInput(error.field, error.message) from None
    return VariantSettings(compress=compress, defaults=checked, strategy=chosen)


def source_valid(source: object) -> Source:
    """Who wrote a version: ``user``, ``default`` (the installer) or ``import``."""
    if not _is_source(source):
        raise InvalidInput("source", f"the source is one of {', '.join(SOURCES)}.")
    return source


def override_valid(
    value: object, field: str = "override", source: FragmentSource | None = None
) -> Override | None:
    """An override in one of the forms of :func:`~sysprompt_core.library.parse_override`;
    with ``source``, a preset must be a fragment with at least one live variant there
    (refused as ``<field>.preset``)."""
    try:
        override = parse_override(value, field)
    except InvalidOverride as error:
        raise InvalidInput(error.field, error.message) from None
    preset = None if override is None else override.preset
    if preset is not None and source is not None and not source.variants(preset):
        raise InvalidInput(
            f"{field}.preset",
            f"there is no fragment {preset!r} in the library; a preset names a library "
            "fragment (create it first, or pick one from the Library page).",
        )
    return override


def _is_source(value: object) -> TypeGuard[Source]:
    return value in SOURCES
