"""System checks: a bad ``settings.SYSPROMPT`` fails ``manage.py check`` and runserver;
git readers that the kernel cannot confine are warned about at start-up."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.apps import AppConfig
from django.core.checks import CheckMessage, Error, Warning
from django.core.exceptions import ImproperlyConfigured

from sysprompt.conf import app_settings
from sysprompt_core.sandbox import landlock_status

UNCONFINED_HINT = (
    "git: values are still read in worker processes with a memory limit, killed at "
    "their deadline, and the path checks still refuse a repository whose parts lie "
    "outside SYSPROMPT_ALLOWED_ROOTS; but libgit2 may open files outside the roots "
    "through symlinks inside .git or a configuration include it reads before any "
    'check (docs/security.md, "Where Landlock is unavailable"). Run on Linux 5.13+ '
    "with Landlock enabled, or set SYSPROMPT_SERVER_RESOLVES without git."
)


def check_app_settings(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: Any
) -> list[CheckMessage]:
    """Validate ``settings.SYSPROMPT`` at start-up instead of at first use."""
    try:
        app_settings()
    except ImproperlyConfigured as error:
        return [Error(str(error), id="sysprompt.E001")]
    return []


def check_git_confinement(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: Any
) -> list[CheckMessage]:
    """Warn when the server reads repositories (``git`` in ``SERVER_RESOLVES``) but its
    git readers cannot confine themselves with Landlock."""
    try:
        conf = app_settings()
    except ImproperlyConfigured:
        return []  # check_app_settings reports it
    if "git" not in conf.server_resolves:
        return []
    if not conf.git_landlock:
        reason = "Landlock is switched off (SYSPROMPT_GIT_LANDLOCK=false)"
    else:
        status = landlock_status()
        if status.available:
            return []
        reason = f"Landlock is unavailable: {status.reason}"
    return [
        Warning(
            f"git readers are not confined by the kernel: {reason}.",
            hint=UNCONFINED_HINT,
            id="sysprompt.W001",
        )
    ]
