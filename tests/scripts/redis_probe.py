"""Not collected by the suite (no ``test_`` prefix): tests/scripts/test_redis_database.py
runs it in a pytest of its own. It enqueues an RQ job on the queue SYSPROMPT_PROBE_QUEUE
at the Redis the run was given (``TEST_REDIS_URL``), leaves it there, as a test killed
mid-way would, and writes that URL to SYSPROMPT_PROBE_LOG."""

from __future__ import annotations

import os

import redis
from rq import Queue


def test_enqueue_and_leave_the_job() -> None:
    url = os.environ["TEST_REDIS_URL"]
    with redis.Redis.from_url(url) as connection:
        queue = Queue(os.environ["SYSPROMPT_PROBE_QUEUE"], connection=connection)
        queue.enqueue("builtins.print", "left behind")
        assert queue.count == 1
    with open(os.environ["SYSPROMPT_PROBE_LOG"], "w", encoding="utf-8") as log:
        log.write(url)
