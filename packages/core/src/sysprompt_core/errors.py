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
