"""The events' settings: the SYSPROMPT keys of webhooks and the task queue, and the
task backend chosen from the environment."""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import ImproperlyConfigured
from pytest_django import Settings

from sysprompt.conf import app_settings
from tests.config.test_conf import _python


@pytest.mark.parametrize(
    ("key", "value", "attribute", "expected"),
    [
        (
            "WEBHOOK_ALLOW_HTTP_HOSTS",
            ["CI.example.com.", "[::1]"],
            "webhook_allow_http_hosts",
            frozenset({"ci.example.com", "::1"}),
        ),
        (
            "WEBHOOK_ALLOW_PRIVATE",
            ["10.1.2.0/24", "Hooks.internal", "127.0.0.1"],
            "webhook_allow_private",
            ("10.1.2.0/24", "hooks.internal", "127.0.0.1"),
        ),
        ("WEBHOOK_ALLOW_PRIVATE", ["10.1.2.3/24"], "webhook_allow_private", ("10.1.2.0/24",)),
        ("WEBHOOK_TIMEOUT", 0.5, "webhook_timeout", 0.5),
        ("WEBHOOK_CONNECT_TIMEOUT", 2, "webhook_connect_timeout", 2.0),
        ("WEBHOOK_CONCURRENCY", 3, "webhook_concurrency", 3),
        ("WEBHOOK_RETRY_WINDOW", 60, "webhook_retry_window", 60.0),
        (
            "WEBHOOK_CA_FILE",
            "/etc/ssl/private-ca.pem",
            "webhook_ca_file",
            "/etc/ssl/private-ca.pem",
        ),
        ("TASKS_QUEUE", "sysprompt-staging", "tasks_queue", "sysprompt-staging"),
    ],
)
def test_events_settings_override_when_set(
    settings: Settings, key: str, value: object, attribute: str, expected: object
) -> None:
    settings.SYSPROMPT = {key: value}

    assert getattr(app_settings(), attribute) == expected


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("WEBHOOK_ALLOW_HTTP_HOSTS", "ci.example.com"),
        ("WEBHOOK_ALLOW_HTTP_HOSTS", ["not a host"]),
        ("WEBHOOK_ALLOW_HTTP_HOSTS", [3]),
        ("WEBHOOK_ALLOW_PRIVATE", ["10.0.0.0/33"]),
        ("WEBHOOK_ALLOW_PRIVATE", ["http://x"]),
        ("WEBHOOK_TIMEOUT", 0),
        ("WEBHOOK_CONNECT_TIMEOUT", "5"),
        ("WEBHOOK_CONCURRENCY", 0),
        ("WEBHOOK_CONCURRENCY", 65),
        ("WEBHOOK_CONCURRENCY", 2.5),
        ("WEBHOOK_RETRY_WINDOW", -1),
        ("WEBHOOK_CA_FILE", "relative.pem"),
        ("TASKS_QUEUE", ""),
        ("TASKS_QUEUE", "a queue"),
    ],
)
def test_events_settings_wrong_type_is_refused(settings: Settings, key: str, value: object) -> None:
    settings.SYSPROMPT = {key: value}

    with pytest.raises(ImproperlyConfigured, match=rf"settings\.SYSPROMPT\['{key}'\] must be"):
        app_settings()


_TASKS = """
import json
import django
from django.conf import settings
django.setup()
print(json.dumps({
    "TASKS": settings.TASKS,
    "RQ_QUEUES": getattr(settings, "RQ_QUEUES", None),
    "rq_installed": "django_rq" in settings.INSTALLED_APPS,
    "SYSPROMPT": settings.SYSPROMPT,
}))
"""


def test_tasks_backend_is_the_database_by_default() -> None:
    loaded = json.loads(_python(_TASKS).stdout)

    assert loaded["TASKS"] == {
        "default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": []}
    }
    assert loaded["RQ_QUEUES"] is None and not loaded["rq_installed"]


def test_tasks_backend_rq_with_redis_url_and_queue() -> None:
    result = _python(
        _TASKS,
        SYSPROMPT_TASKS_BACKEND="rq",
        REDIS_URL="redis://redis.internal:6379/3",
        SYSPROMPT_TASKS_QUEUE="sysprompt-prod",
        SYSPROMPT_WEBHOOK_ALLOW_PRIVATE="10.0.0.0/8, hooks.internal",
    )
    loaded = json.loads(result.stdout)

    assert loaded["TASKS"]["default"] == {
        "BACKEND": "django_tasks_rq.RQBackend",
        "QUEUES": ["sysprompt-prod", "evaluations"],
    }
    assert loaded["RQ_QUEUES"]["sysprompt-prod"]["URL"] == "redis://redis.internal:6379/3"
    assert loaded["RQ_QUEUES"]["evaluations"]["URL"] == "redis://redis.internal:6379/3"
    assert loaded["rq_installed"]
    assert loaded["SYSPROMPT"]["WEBHOOK_ALLOW_PRIVATE"] == ["10.0.0.0/8", "hooks.internal"]


def test_tasks_backend_unknown_is_refused() -> None:
    result = _python(_TASKS, SYSPROMPT_TASKS_BACKEND="celery")

    assert result.returncode != 0
    assert "SYSPROMPT_TASKS_BACKEND='celery': use database (the default) or rq." in result.stderr


_RECEIVERS = """
import json
import django
django.setup()
from sysprompt.errors import InvalidInput
from sysprompt.events.validation import webhook_url_valid
answers = {}
for url in ("http://127.0.0.1:9000/hook", "http://localhost:9000/hook", "http://[::1]:9000/hook"):
    try:
        answers[url] = webhook_url_valid(url)
    except InvalidInput as refusal:
        answers[url] = "refused: " + refusal.message
print(json.dumps(answers))
"""
LOCAL_RECEIVERS = (
    "http://127.0.0.1:9000/hook",
    "http://localhost:9000/hook",
    "http://[::1]:9000/hook",
)


@pytest.mark.parametrize(
    ("env", "accepted"),
    [
        ({"DEBUG": "true"}, True),  # scripts/serve: try a receiver on this machine at once
        ({}, False),  # production: DEBUG off, public https only
        ({"DEBUG": "false"}, False),
        # The operator's choice wins over the development default, set but empty included.
        ({"DEBUG": "true", "SYSPROMPT_WEBHOOK_ALLOW_HTTP_HOSTS": ""}, False),
    ],
)
def test_local_webhook_receivers_allowed_only_with_debug_on(
    env: dict[str, str], accepted: bool
) -> None:
    result = _python(_RECEIVERS, **env)
    assert result.returncode == 0, result.stderr
    answers = json.loads(result.stdout)

    for url in LOCAL_RECEIVERS:
        assert answers[url].startswith("refused: ") is not accepted, (url, answers[url])
