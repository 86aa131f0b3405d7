"""A new release is a ``release.created`` — audit record and event, in the release's
transaction; answering the existing release for an unchanged working copy records
nothing; the root template's source only for subscriptions that include text."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django_tasks_db.models import DBTaskResult
from pytest_django import Settings

from sysprompt.conf import app_settings
from sysprompt.events import services
from sysprompt.events.models import AuditRecord, Event
from sysprompt.prompts.models import TemplateVersion
from sysprompt.releases.models import Release
from sysprompt.releases.services import release_create
from tests.events.support import ALLOW_LOCAL, receiving, run_queued
from tests.releases.support import save, template


def _working_copy() -> None:
    template("Base [fragment:core] [fragment:tone]")
    save("core", "Core.")
    save("tone", "Calm.")
    save("tone", "Terse.", provider="openai")


def test_release_create_is_audited_and_enqueued(writer: User, everything: int) -> None:
    _working_copy()

    made = release_create(message="First cut", author=writer)

    assert made.created
    record = AuditRecord.objects.get(action="release.created")
    assert (record.actor, record.object) == ("writer", "release 1")
    assert record.summary == (
        "created release 1 (template version 1, 3 fragment versions): First cut"
    )
    event = Event.objects.get(type="release.created")
    assert event.data == {
        "actor": "writer",
        "prompt": "default",
        "number": 1,
        "message": "First cut",
        "template_version": 1,
        "fragment_count": 3,
    }
    assert event.text == {"template": "Base [fragment:core] [fragment:tone]"}
    assert event.webhook_ids == [everything]


def test_release_create_of_the_built_in_template_sends_its_source(
    writer: User, everything: int
) -> None:
    release_create(author=writer)

    event = Event.objects.get(type="release.created")
    assert (event.data["template_version"], event.data["fragment_count"]) == (0, 0)
    assert event.text == {"template": app_settings().default_template}


def _template_reads(queries: CaptureQueriesContext) -> int:
    column = f'"{TemplateVersion._meta.db_table}"."text"'
    return sum(column in query["sql"] for query in queries.captured_queries)


def test_release_create_reads_the_template_only_when_an_event_is_sent(writer: User) -> None:
    _working_copy()
    with CaptureQueriesContext(connection) as unsubscribed:
        release_create(author=writer)
    services.webhook_create(
        url="https://ci.example.com/", events=["release.created"], author=writer
    )
    save("core", "Two.")
    with CaptureQueriesContext(connection) as subscribed:
        release_create(author=writer)

    assert (_template_reads(unsubscribed), _template_reads(subscribed)) == (0, 1)
    assert AuditRecord.objects.filter(action="release.created").count() == 2


def test_release_create_unchanged_records_nothing(writer: User, everything: int) -> None:
    _working_copy()
    first = release_create(message="one", author=writer)
    before = (AuditRecord.objects.count(), Event.objects.count(), DBTaskResult.objects.count())

    again = release_create(message="two", author=writer)

    assert (again.created, again.release.pk) == (False, first.release.pk)
    after = (AuditRecord.objects.count(), Event.objects.count(), DBTaskResult.objects.count())
    assert after == before


def test_release_create_rolled_back_records_and_enqueues_nothing(
    writer: User, everything: int
) -> None:
    _working_copy()
    before = (AuditRecord.objects.count(), Event.objects.count(), DBTaskResult.objects.count())

    with pytest.raises(RuntimeError), transaction.atomic():
        assert release_create(message="doomed", author=writer).created
        raise RuntimeError("the caller's transaction fails after the release")

    assert not Release.objects.exists()
    after = (AuditRecord.objects.count(), Event.objects.count(), DBTaskResult.objects.count())
    assert after == before


def test_release_created_reaches_receivers_with_text_only_when_asked(
    writer: User, settings: Settings
) -> None:
    settings.SYSPROMPT = dict(ALLOW_LOCAL)
    _working_copy()
    with receiving() as with_text, receiving() as without:
        for receiver, include in ((with_text, True), (without, False)):
            receiver.secret = services.webhook_create(
                url=receiver.url, events=["release.created"], include_text=include, author=writer
            ).secret

        release_create(message="Ship it", author=writer)
        run_queued()

        [texted] = with_text.wait_for(1)
        [plain] = without.wait_for(1)
    assert plain.verified is not None and texted.verified is not None
    assert plain.verified["type"] == "release.created"
    assert plain.verified["data"] == {
        "actor": "writer",
        "prompt": "default",
        "number": 1,
        "message": "Ship it",
        "template_version": 1,
        "fragment_count": 3,
    }
    assert texted.verified["data"] == {
        **plain.verified["data"],
        "template": "Base [fragment:core] [fragment:tone]",
    }
    assert b"Base [fragment" not in plain.body
