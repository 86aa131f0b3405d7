"""The audit log only grows: a record never changes and is never deleted, not one by
one, not in bulk, not when its actor's user is deleted."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from sysprompt.errors import AuditRecordImmutable
from sysprompt.events.models import AuditRecord
from sysprompt.events.services import event_record


@pytest.fixture
def record(author: User) -> AuditRecord:
    event_record(actor=author, action="template.saved", object="template version 1", summary="x")
    return AuditRecord.objects.get(action="template.saved")


def test_record_refuses_save_and_delete(record: AuditRecord) -> None:
    record.summary = "rewritten"
    with pytest.raises(AuditRecordImmutable):
        record.save()
    with pytest.raises(AuditRecordImmutable):
        record.delete()
    with pytest.raises(AuditRecordImmutable):
        AuditRecord.objects.filter(pk=record.pk).update(summary="rewritten")
    with pytest.raises(AuditRecordImmutable):
        AuditRecord.objects.all().delete()

    assert AuditRecord.objects.get(pk=record.pk).summary == "x"


def test_record_outlives_its_actor(record: AuditRecord, author: User) -> None:
    author.delete()

    kept = AuditRecord.objects.get(pk=record.pk)
    assert (kept.actor, kept.actor_id) == ("author", record.actor_id)


def test_summary_is_one_line_and_bounded(author: User) -> None:
    event_record(actor=author, action="a.b", object="o\nbject", summary="two\nlines " + "x" * 600)

    kept = AuditRecord.objects.get(action="a.b")
    assert "\n" not in kept.summary + kept.object
    assert len(kept.summary) == 500 and kept.summary.endswith("…")


def test_system_changes_have_no_actor(db: None) -> None:
    event_record(actor=None, action="fragment.installed", object="fragment core", summary="x")

    assert AuditRecord.objects.get().actor == ""
