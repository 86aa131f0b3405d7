"""gunicorn settings for serving sysprompt in production, read from the environment.

Run from the checkout: ``.venv/bin/gunicorn`` (gunicorn reads ./gunicorn.conf.py).
Every variable is described in docs/production.md; gunicorn's own variables
(``FORWARDED_ALLOW_IPS``, ``GUNICORN_CMD_ARGS``) keep working as well.
"""

from __future__ import annotations

import os


def _int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        raise SystemExit(f"{name}={raw!r} is not a whole number.") from None


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


wsgi_app = "config.wsgi:application"
proc_name = "sysprompt"

bind = [
    address.strip()
    for address in os.environ.get(
        "GUNICORN_BIND", f"127.0.0.1:{os.environ.get('PORT', '8000')}"
    ).split(",")
    if address.strip()
]

# Threads, not processes, carry the concurrency: a request mostly waits on the
# database, git or the disk. Each thread keeps its own database connection.
worker_class = "gthread"
workers = _int("WEB_CONCURRENCY", max(2, _cores()))
threads = _int("GUNICORN_THREADS", 4)

# Longer than the idle timeout of the proxy in front (nginx and most load balancers:
# 60 s), so the proxy, not gunicorn, closes an idle connection it might reuse.
keepalive = _int("GUNICORN_KEEPALIVE", 75)
timeout = _int("GUNICORN_TIMEOUT", 30)
graceful_timeout = _int("GUNICORN_GRACEFUL_TIMEOUT", 30)

_access_log = os.environ.get("GUNICORN_ACCESS_LOG", "-").strip()
accesslog = None if _access_log.lower() in {"", "off", "none"} else _access_log
errorlog = "-"

# gunicorn's control socket defaults to one path per user, which two servers on one
# host would fight over: only on request.
_control_socket = os.environ.get("GUNICORN_CONTROL_SOCKET", "").strip()
control_socket_disable = not _control_socket
if _control_socket:
    control_socket = _control_socket
