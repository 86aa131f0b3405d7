"""The evaluations' task, as Django's Tasks API runs it (a worker of the configured
backend on the evaluations' own queue: ``manage.py evaluations_worker``). A thin entry
into :mod:`sysprompt.evaluations.background`.

It is bound to the evaluations' queue (``SYSPROMPT_EVAL_TASKS_QUEUE``) when this module
is imported, as the backend checks the queue then; ``background.run_enqueue`` names it
again on every enqueue, so a changed setting takes effect at once.
"""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured
from django_tasks import task

from sysprompt.conf import DEFAULT_EVAL_TASKS_QUEUE, app_settings


def _queue() -> str:
    try:
        return app_settings().eval_tasks_queue
    except ImproperlyConfigured:  # reported by the system check (sysprompt.E001)
        return DEFAULT_EVAL_TASKS_QUEUE


@task(queue_name=_queue())
def run_work(run_id: int) -> str:
    """Work on run ``run_id`` for a while (a slice); its status when this task leaves
    it. Safe to run any number of times, side by side: each case and call is claimed."""
    from sysprompt.evaluations.background import run_slice  # the task module loads first

    return run_slice(run_id)
