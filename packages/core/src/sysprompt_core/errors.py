"""The core's exceptions: one hierarchy under :class:`CoreError`.

Rendering itself never fails (anything malformed stays text); these are the few things
a caller must handle: a template too large to render within the prompt limit, and a
resolver module that is written wrong.
"""

from __future__ import annotations


class CoreError(Exception):
    """Raised by sysprompt-core; every other failure is a value that does not exist."""


class RegistryError(CoreError, ValueError):
    """A resolver module or registration is wrong: a programming error, raised early."""


class PromptTooLarge(CoreError, ValueError):
    """The template's literal text alone renders to more than the limit (UTF-8 bytes)."""

    def __init__(self, size: int, limit: int, setting: str | None = None) -> None:
        where = f" ({setting})" if setting else ""
        super().__init__(
            f"The template's text alone, without any variable, renders to {size:,} bytes "
            f"in UTF-8; a prompt may have at most {limit:,} bytes{where}."
        )
        self.size = size
        self.limit = limit
        self.setting = setting


class InvalidFragmentName(CoreError, ValueError):
    """A fragment name is outside the rules; the message shows a valid one
    (:func:`sysprompt_core.library.names.fragment_name_check` builds it)."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(message)
        self.name = name


class InvalidOverride(CoreError, ValueError):
    """An override (or host-supplied variables) is refused: ``field`` names the part that
    is wrong (``override.strategy``, ``variables.name``), the message says how to fix it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class InvalidVariantKey(CoreError, ValueError):
    """A variant key is refused: a model without a provider, or a provider or model
    without any letter or digit."""


class InvalidTarget(CoreError, ValueError):
    """A label's name or target (releases) is refused: ``field`` names the part that is
    wrong (``name``, ``target.split``, ``target.split[1].weight``), the message says
    what to write instead."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class InvalidCheck(CoreError, ValueError):
    """An evaluation check is refused: ``field`` names the part that is wrong
    (``checks[2].pattern``, ``checks[0].type``), the message says what to write instead."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
