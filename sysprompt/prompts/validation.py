"""Input checks: what the API and the editor pass in, checked before anything is read.

Each check returns the value it accepts (``cwd_check`` with the real path of the
directory it opened, or only the path when the server resolves nothing in a directory;
``host_context_check`` a :class:`HostContext`, with the host-supplied ``values``) or raises
:class:`~sysprompt.errors.InvalidInput` or :class:`~sysprompt.errors.TemplateTooLarge`.
"""

from __future__ import annotations

import errno
import os
import re
from dataclasses import dataclass
from typing import Any

from sysprompt.conf import app_settings
from sysprompt.errors import InvalidInput, TemplateTooLarge
from sysprompt.library.selectors import library_source
from sysprompt.library.validation import override_valid
from sysprompt_core.errors import InvalidOverride
from sysprompt_core.library import Override, check_variables, is_variable_name
from sysprompt_core.limits import (
    CONVERSATION_ID_MAX_LENGTH,
    CONVERSATION_ID_PATTERN,
    HOST_TOOLS_MAX_COUNT,
    HOST_VARIABLE_NAME_MAX_LENGTH,
    MODEL_MAX_LENGTH,
)
from sysprompt_core.paths import directory_real_path, is_inside, real_roots
from sysprompt_core.variables import InvalidHostValues, check_supplied

CONVERSATION_ID = re.compile(CONVERSATION_ID_PATTERN)


def template_size_check(text: str) -> None:
    """Raise :class:`TemplateTooLarge` when ``text`` is over the configured limit."""
    limit = app_settings().max_template_bytes
    if len(text) > limit // 4 and (size := len(text.encode("utf-8"))) > limit:
        raise TemplateTooLarge(size, limit)


def conversation_id_check(conversation_id: str) -> str:
    """``conversation_id`` when it is 1–200 letters, digits and ``._:-``."""
    if not CONVERSATION_ID.fullmatch(conversation_id):
        raise InvalidInput(
            "conversation_id",
            f"{conversation_id[:220]!r} is not a valid conversation id: use 1 to "
            f"{CONVERSATION_ID_MAX_LENGTH} characters among letters, digits and . _ : -",
        )
    return conversation_id


# The host-local types whose resolvers work in the working directory: unless the server
# resolves one of them itself (``SERVER_RESOLVES``), ``cwd`` is only a value to it.
DIRECTORY_TYPES = frozenset({"git", "file"})


class CheckedCwd(str):
    """A working directory that passed :func:`cwd_check`.

    The string is the path as given, normalised: what is stored and what
    ``[prompt:cwd]`` shows. ``real`` is the real path of the directory that was opened
    when it was checked: what every resolver works in (``ResolveContext.directory``).
    ``real`` is ``None`` when the server resolves nothing in a directory
    (``SERVER_RESOLVES`` without ``git`` and ``file``, a central deployment): the cwd is
    then only a value, and nothing on the server's disk was opened for it.
    """

    real: str | None

    def __new__(cls, path: str, real: str | None) -> CheckedCwd:
        checked = super().__new__(cls, path)
        checked.real = real
        return checked

    def __reduce__(self) -> tuple[type[CheckedCwd], tuple[str, str | None]]:
        return (CheckedCwd, (str(self), self.real))

    @property
    def on_disk(self) -> bool:
        """Whether the cwd names a directory of the server's that was checked."""
        return self.real is not None


def cwd_on_server(server_resolves: frozenset[str]) -> bool:
    """Whether a ``cwd`` is a directory on the server's disk: when the server resolves
    ``git:`` or ``file:`` values itself (``SERVER_RESOLVES``)."""
    return not DIRECTORY_TYPES.isdisjoint(server_resolves)


def cwd_check(cwd: str) -> CheckedCwd:
    """``cwd`` normalised, when it is an absolute path, and, when the server resolves
    ``git:`` or ``file:`` values itself (:func:`cwd_on_server`), an existing directory
    in the allowed roots.

    On the server's disk, the directory is opened once (``O_DIRECTORY``, nothing is
    read) and the path of the opened descriptor is what must lie inside the allowed
    roots, so no symlink swapped in between a check and a use can move it; that path is
    returned as ``.real``. Otherwise nothing is looked up (no root, no ``stat``, no
    open): the cwd is the agent host's, on a machine the server does not see, and
    ``.real`` is ``None``.
    """
    if "\0" in cwd or not os.path.isabs(cwd):
        raise InvalidInput("cwd", f"{cwd!r} is not an absolute path; pass the full path.")
    conf = app_settings()
    if not cwd_on_server(conf.server_resolves):
        return CheckedCwd(os.path.normpath(cwd), None)
    roots = real_roots(conf.allowed_roots)
    allowed = ", ".join(roots) or "none are configured"
    outside = InvalidInput(
        "cwd",
        f"{cwd!r} is outside the allowed roots ({allowed}); "
        "set SYSPROMPT_ALLOWED_ROOTS to allow it.",
    )
    try:
        # The cheap check first, so that nothing outside is opened. ``realpath`` raises
        # when a link it is following vanishes (a swap under way).
        if not any(is_inside(os.path.realpath(cwd), root) for root in roots):
            raise outside
        real = directory_real_path(cwd)
    except OSError as exc:
        if exc.errno == errno.ENOTSUP:
            raise InvalidInput("cwd", f"{cwd!r} cannot be checked: {exc.strerror}.") from None
        raise InvalidInput("cwd", f"{cwd!r} is not an existing directory.") from None
    if not any(is_inside(real, root) for root in roots):
        raise outside
    return CheckedCwd(os.path.normpath(cwd), real)


_NOT_GIVEN: Any = object()


@dataclass(frozen=True)
class HostContext:
    """What an agent host said about a conversation besides its cwd and model.

    ``None`` (or ``override_given`` false) means the field was not given: a construct
    or compact of a stored conversation then keeps what was stored (see
    :func:`HostContext.over`). ``override`` and ``call_override`` are checked;
    ``override_json`` is the thread override as given, which is what is stored.

    ``values`` are the host-local values the host supplied (``"type:name"`` → text, or
    ``None``: it does not exist), used instead of the server's own resolution; they are
    this request's only, never stored (a later construct sends them again).
    """

    provider: str | None = None
    tools: tuple[str, ...] | None = None
    variables: dict[str, str] | None = None
    override: Override | None = None
    override_json: object = None
    override_given: bool = False
    call_override: Override | None = None
    values: dict[str, str | None] | None = None

    def over(self, stored: HostContext) -> HostContext:
        """This context with every field it does not give taken from ``stored``."""
        given_override = self.override_given
        return HostContext(
            provider=self.provider if self.provider is not None else stored.provider,
            tools=self.tools if self.tools is not None else stored.tools,
            variables=self.variables if self.variables is not None else stored.variables,
            override=self.override if given_override else stored.override,
            override_json=self.override_json if given_override else stored.override_json,
            override_given=given_override or stored.override_given,
            call_override=self.call_override,
            values=self.values,
        )


def host_context_check(
    *,
    provider: object = None,
    tools: object = None,
    variables: object = None,
    override: object = _NOT_GIVEN,
    call_override: object = None,
    values: object = None,
) -> HostContext:
    """The host context of a request, checked field by field (:class:`InvalidInput`
    names the field): ``provider`` a string of at most 200 characters, ``tools`` at most
    200 names, ``variables`` at most 200 names → values of at most 64 KiB, the overrides
    in one of the forms of :func:`sysprompt_core.library.parse_override`, ``values``
    host-local keys → text or null, each at most ``MAX_FILE_BYTES`` and together at most
    ``MAX_READ_BYTES`` (:func:`sysprompt_core.variables.check_supplied`). Leaving
    ``override`` out is not the same as giving ``null``: the first keeps a stored
    conversation's thread override, the second removes it.

    Nothing is read here: whether a preset exists is checked (:func:`preset_check`)
    only where the override is used, so a later turn that repeats the thread override
    of its first turn still reads one row, even if that preset is gone by now."""
    override_given = override is not _NOT_GIVEN
    return HostContext(
        provider=_provider_check(provider),
        tools=_tools_check(tools),
        variables=None if variables is None else _variables_check(variables),
        override=override_valid(override, "override") if override_given else None,
        override_json=override if override_given else None,
        override_given=override_given,
        call_override=override_valid(call_override, "call_override"),
        values=None if values is None else _values_check(values),
    )


def preset_check(override: Override | None, field: str) -> None:
    """Refuse (:class:`InvalidInput` naming ``<field>.preset``) an override whose preset
    is not a fragment of the library."""
    if override is not None and override.preset is not None:
        override_valid({"preset": override.preset}, field, library_source())


def _provider_check(provider: object) -> str | None:
    if provider is None:
        return None
    if not isinstance(provider, str) or len(provider) > MODEL_MAX_LENGTH:
        raise InvalidInput(
            "provider",
            f"the provider is a name of at most {MODEL_MAX_LENGTH} characters, "
            "such as 'anthropic' or 'openai'.",
        )
    return provider


def _tools_check(tools: object) -> tuple[str, ...] | None:
    if tools is None:
        return None
    if not isinstance(tools, list | tuple):
        raise InvalidInput("tools", "tools are a list of tool names, such as ['shell', 'grep'].")
    if len(tools) > HOST_TOOLS_MAX_COUNT:
        raise InvalidInput(
            "tools", f"{len(tools):,} tools given; at most {HOST_TOOLS_MAX_COUNT} are allowed."
        )
    for tool in tools:
        if not isinstance(tool, str) or len(tool) > HOST_VARIABLE_NAME_MAX_LENGTH:
            raise InvalidInput("tools", f"a tool name is a string; got {tool!r:.60}.")
        if not is_variable_name(tool):
            raise InvalidInput(
                "tools",
                f"{tool!r:.60} cannot be a tool name: it must be what may follow 'tool:' "
                "in a tag (no '[', ']' or line break, no space at either end).",
            )
    return tuple(dict.fromkeys(tools))


def _values_check(values: object) -> dict[str, str | None]:
    conf = app_settings()
    try:
        return check_supplied(
            values,
            "values",
            max_value_bytes=conf.max_file_bytes,
            max_total_bytes=conf.max_read_bytes,
        )
    except InvalidHostValues as exc:
        raise InvalidInput(exc.field, exc.message) from None


def _variables_check(variables: object) -> dict[str, str]:
    try:
        return check_variables(variables, "variables")
    except InvalidOverride as exc:
        raise InvalidInput(exc.field, exc.message) from None
