"""Not collected by the suite (no ``test_`` prefix): tests/scripts/test_test_script.py
runs it through scripts/test, naming it as pytest's argument. It checks that the
database and TEST_REDIS_URL answer and appends what it saw to SYSPROMPT_PROBE_LOG.
SYSPROMPT_PROBE_FAIL makes it fail; SYSPROMPT_PROBE_WAIT makes it wait that many
seconds first, once inside the test (so the caller can interrupt a run there), which
it announces with the file SYSPROMPT_PROBE_LOG + ".waiting"."""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.db import connection

pytestmark = pytest.mark.django_db


def test_database_and_redis_answer() -> None:
    wait = float(os.environ.get("SYSPROMPT_PROBE_WAIT", "0"))
    if wait:
        Path(os.environ["SYSPROMPT_PROBE_LOG"] + ".waiting").touch()  # interrupt me now
        time.sleep(wait)
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        assert cursor.fetchone() == (1,)
    redis = urlsplit(os.environ["TEST_REDIS_URL"])
    with socket.create_connection((redis.hostname, redis.port or 6379), timeout=5) as server:
        server.sendall(b"PING\r\n")
        assert server.recv(64) == b"+PONG\r\n"
    with open(os.environ["SYSPROMPT_PROBE_LOG"], "a", encoding="utf-8") as log:
        seen = {
            "vendor": connection.vendor,
            "port": str(connection.settings_dict.get("PORT") or ""),
            "redis": os.environ["TEST_REDIS_URL"],
        }
        log.write(json.dumps(seen) + "\n")
    assert not os.environ.get("SYSPROMPT_PROBE_FAIL"), "failing on purpose"
