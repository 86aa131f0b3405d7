"""Every change the other apps make is recorded in the same transaction: the audit
record, and for webhook event types the event with a delivery for each subscription
that wants it. A change that is refused records nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User

from sysprompt.accounts import services as accounts
from sysprompt.errors import PreconditionFailed, VariantConflict
from sysprompt.events import services
from sysprompt.events.catalog import EVENT_TYPES
from sysprompt.events.models import AuditRecord, Delivery, Event
from sysprompt.library import services as library
from sysprompt.library.installer import library_install
from sysprompt.prompts.catalog import default_prompt
from sysprompt.prompts.services import template_save
from sysprompt.transfer.readers import Archive
from sysprompt.transfer.services import library_import


@pytest.fixture
def subscribed(author: User) -> int:
    """A subscription to every event type (nothing is sent: no worker runs)."""
    return services.webhook_create(
        url="https://ci.example.com/", events=list(EVENT_TYPES), include_text=True, author=author
    ).webhook.id


def _core(author: User) -> object:
    return library.variant_save(name="core", text="Core.", author=author)


CHANGES: list[tuple[str, Callable[[User], Any], str, str, dict[str, Any]]] = [
    (
        "template save",
        lambda a: template_save(text="Hi", author=a),
        "template.saved",
        "template.saved",
        {"version": 1, "compress": False, "text": "Hi"},
    ),
    (
        "fragment save",
        lambda a: library.variant_save(name="core", provider="openai", text="O.", author=a),
        "fragment.saved",
        "fragment.saved",
        {"name": "core", "provider": "openai", "change": "saved", "source": "user", "text": "O."},
    ),
    (
        "fragment delete",
        lambda a: (_core(a), library.variant_delete(name="core", author=a)),
        "fragment.deleted",
        "fragment.saved",
        {"name": "core", "version": 2, "change": "deleted", "deleted": True},
    ),
    (
        "fragment restore",
        lambda a: (
            _core(a),
            library.variant_delete(name="core", author=a),
            library.variant_restore(name="core", number=1, author=a),
        ),
        "fragment.restored",
        "fragment.saved",
        {"version": 3, "change": "restored", "deleted": False},
    ),
    (
        "host override",
        lambda a: (
            accounts.agent_host_ensure(name="build-01"),
            library.host_override_set(
                prompt_id=default_prompt().pk, username="build-01", override="Be brief.", author=a
            ),
        ),
        "host.override_set",
        "host.changed",
        {"host": "build-01", "change": "override_set", "override": "Be brief."},
    ),
    (
        "agent host creation",
        lambda a: accounts.agent_host_create(name="build-02", author=a),
        "host.created",
        "host.changed",
        {"host": "build-02", "change": "created"},
    ),
    (
        "token rotation",
        lambda a: (
            accounts.agent_host_ensure(name="build-03"),
            accounts.agent_host_rotate(name="build-03", author=a),
        ),
        "host.token_rotated",
        "host.changed",
        {"host": "build-03", "change": "token_rotated"},
    ),
]


@pytest.mark.parametrize(
    ("change", "action", "event_type", "data"),
    [pytest.param(c, a, t, d, id=name) for name, c, a, t, d in CHANGES],
)
def test_change_is_audited_and_enqueued(
    author: User,
    subscribed: int,
    change: Callable[[User], Any],
    action: str,
    event_type: str,
    data: dict[str, Any],
) -> None:
    change(author)

    record = AuditRecord.objects.filter(action=action).get()
    event = Event.objects.filter(type=event_type).order_by("-id").first()
    assert event is not None
    shown = {**event.data, **(event.text or {})}
    assert {key: shown[key] for key in data} == data
    assert shown["actor"] == record.actor == "author"
    assert event.webhook_ids == [subscribed]


def test_refused_change_records_nothing(author: User, subscribed: int) -> None:
    template_save(text="one", author=author)
    library.variant_save(name="core", text="Core.", author=author)
    before = (AuditRecord.objects.count(), Event.objects.count())

    with pytest.raises(PreconditionFailed):
        template_save(text="two", author=author, if_match=['"stale"'])
    with pytest.raises(VariantConflict):
        library.variant_save(name="core", text="New.", author=author, if_match=['"stale"'])

    assert (AuditRecord.objects.count(), Event.objects.count()) == before


def test_keep_mine_is_audited_without_an_event(author: User, subscribed: int) -> None:
    library_install()
    library.variant_save(name="core", text="Mine.", author=author)

    library.default_keep_mine(name="core", author=author)

    assert AuditRecord.objects.filter(action="fragment.kept", actor="author").count() == 1
    assert not Event.objects.filter(data__change="kept").exists()


def test_installer_is_audited_as_the_system(db: None) -> None:
    library_install()

    installed = AuditRecord.objects.filter(action="fragment.installed")
    assert installed.count() > 5
    assert set(installed.values_list("actor", flat=True)) == {""}


def test_import_is_one_record_listing_what_it_wrote(author: User, subscribed: int) -> None:
    archive = Archive(files={"system-prompt.md": b"[fragment:core]", "core.md": b"Core.\n"})

    report = library_import(archive=archive, dry_run=False, author=author)

    assert report.applied
    actions = list(AuditRecord.objects.order_by("id").values_list("action", flat=True))
    # the root template is saved as any save is; the fragments, written in bulk, are
    # listed by the import's one record
    assert actions[-2:] == ["template.saved", "library.imported"]
    assert not AuditRecord.objects.filter(action="fragment.saved").exists()
    imported = Event.objects.get(type="library.imported")
    assert imported.data["created"] + imported.data["changed"] == 2
    assert {item["path"] for item in imported.data["items"]} == {"system-prompt.md", "core.md"}


def test_unsubscribed_or_inactive_gets_no_event(author: User) -> None:
    wanted = services.webhook_create(
        url="https://a.example.com/", events=["fragment.saved"], author=author
    ).webhook.id
    off = services.webhook_create(
        url="https://b.example.com/", events=["template.saved"], active=False, author=author
    ).webhook.id

    template_save(text="x", author=author)

    assert not Event.objects.exists()
    assert AuditRecord.objects.filter(action="template.saved").count() == 1
    assert not Delivery.objects.filter(webhook_id__in=[wanted, off]).exists()
