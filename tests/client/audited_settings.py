"""The project's settings, plus an audit hook that writes down every file the process
touches: for a server started by tests/client/test_central_deployment.py.

``DJANGO_SETTINGS_MODULE=tests.client.audited_settings`` and
``SYSPROMPT_TEST_AUDIT_LOG=<file>`` make ``manage.py runserver`` import this module
first thing; from then on every ``open`` (``open()``, ``os.open``, ``io.open_code``, the
imports), directory listing, ``chdir`` and started program of the process — in any
thread, by any Python code — is appended to the log, one line each: the event, a tab,
the path (made absolute) or the program's arguments. An audit hook cannot be removed,
so nothing the server runs later can avoid it. (C libraries that open files
themselves, libgit2 and SQLite, are not Python and do not pass through it; the test
watches the host's files with inotify as well, which sees every process's opens.)
"""

from __future__ import annotations

import os
import sys

from config.settings import *  # noqa: F403 - these are the project's settings, audited

AUDIT_LOG_VARIABLE = "SYSPROMPT_TEST_AUDIT_LOG"

_PATH_EVENTS = frozenset({"open", "os.listdir", "os.scandir", "os.chdir", "os.walk"})
_PROGRAM_EVENTS = frozenset({"subprocess.Popen", "os.exec", "os.posix_spawn", "os.system"})

# Opened before the hook is added, and written with os.write: the log's own writes are
# not opens, so they do not recurse.
_log = os.open(os.environ[AUDIT_LOG_VARIABLE], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)


def _record(event: str, args: tuple[object, ...]) -> None:
    if event in _PATH_EVENTS and args and isinstance(args[0], str | bytes | os.PathLike):
        line = f"{event}\t{os.path.abspath(os.fsdecode(args[0]))}\n"
    elif event in _PROGRAM_EVENTS:
        line = f"{event}\t{args!r}\n"
    else:
        return
    os.write(_log, line.encode("utf-8", "surrogateescape"))


sys.addaudithook(_record)
