"""System checks: a bad ``settings.SYSPROMPT`` fails ``manage.py check`` and runserver;
git readers that the kernel cannot confine are warned about by ``check``, and logged
(an error: they read nothing) when the server starts (``config.wsgi``)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from django.apps import AppConfig
from django.core.checks import CheckMessage, Error, Warning
from django.core.exceptions import ImproperlyConfigured

from sysprompt.conf import app_settings
from sysprompt_core.sandbox.confinement import unconfined_reason

UNCONFINED_HINT = (
    "git: values are still read in worker processes with a memory limit, killed at "
    "their deadline, and the path checks still refuse a repository whose parts lie "
    "outside SYSPROMPT_ALLOWED_ROOTS; but without Landlock libgit2 may open files "
    "outside the roots through symlinks inside .git or a configuration include it "
    "reads before any check, and without the seccomp filter a reader may connect to "
    'other services (docs/security.md, "Where the kernel cannot confine the '
    'readers"). Run on Linux 5.13+ with Landlock enabled and seccomp filters allowed, '
    "or set SYSPROMPT_SERVER_RESOLVES without git."
)
REFUSED_HINT = (
    "Run on Linux 5.13+ with Landlock enabled and seccomp filters allowed; or set "
    "SYSPROMPT_SERVER_RESOLVES without git (agent hosts then send their own values); "
    "or accept unconfined readers with SYSPROMPT_GIT_ALLOW_UNCONFINED=true "
    '(docs/security.md, "Where the kernel cannot confine the readers").'
)

logger = logging.getLogger("sysprompt.git")


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
    """When the server reads repositories (``git`` in ``SERVER_RESOLVES``) but its git
    readers cannot be confined by the kernel: ``W002``, they read nothing (the default);
    ``W001``, they read unconfined (``GIT_ALLOW_UNCONFINED``)."""
    found = _unconfined()
    if found is None:
        return []
    why, allowed = found
    if allowed:
        return [
            Warning(
                f"git readers are not confined by the kernel: {why}; they read anyway "
                "(SYSPROMPT_GIT_ALLOW_UNCONFINED=true).",
                hint=UNCONFINED_HINT,
                id="sysprompt.W001",
            )
        ]
    return [
        Warning(
            f"git: values will not be read: git readers cannot be confined by the kernel "
            f"here: {why}.",
            hint=REFUSED_HINT,
            id="sysprompt.W002",
        )
    ]


def report_git_confinement() -> None:
    """At the server's start (``config.wsgi``): log an error when git readers cannot be
    confined and so read nothing, a warning when they read unconfined."""
    found = _unconfined()
    if found is None:
        return
    why, allowed = found
    if allowed:
        logger.warning(
            "git readers are not confined by the kernel (%s); they read anyway "
            "(SYSPROMPT_GIT_ALLOW_UNCONFINED=true). %s",
            why,
            UNCONFINED_HINT,
        )
    else:
        logger.error(
            "git: values will not be read: git readers cannot be confined by the kernel "
            "here (%s). %s",
            why,
            REFUSED_HINT,
        )


def _unconfined() -> tuple[str, bool] | None:
    """Why the server's git readers could not be confined, and whether they read anyway;
    None when they can be, or the server reads no repository."""
    try:
        conf = app_settings()
    except ImproperlyConfigured:
        return None  # check_app_settings reports it
    if "git" not in conf.server_resolves:
        return None
    why = unconfined_reason(landlock=conf.git_landlock)
    return None if why is None else (why, conf.git_allow_unconfined)
