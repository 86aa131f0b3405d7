"""The audit of users, groups, permissions and tokens, whatever changes them: the real
Django admin (through the test client, as a superuser), the ORM as a shell or a
command uses it, ``createsuperuser``. Each change is a record naming who made it (the
admin's user; the system outside a request) and never a password, its hash or a
token's key."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from axes.models import AccessAttempt
from django.contrib.auth.models import Group, Permission, User
from django.core.management import call_command
from django.forms import MultiWidget
from django.test import Client
from django.utils import timezone
from rest_framework.authtoken.models import Token

from sysprompt.accounts.services import groups_ensure
from sysprompt.accounts.signals import fingerprint
from sysprompt.events.models import AuditRecord
from sysprompt.groups import PROMPT_PUBLISHERS_GROUP

pytestmark = pytest.mark.django_db

Record = tuple[str, str, str, str]  # actor, action, object, summary


@pytest.fixture
def root(db: None) -> User:
    return User.objects.create_superuser("root", password="Root-pw-9f2c")


@pytest.fixture
def admin_web(root: User) -> Client:
    client = Client()
    client.force_login(root)
    return client


@pytest.fixture
def ada(db: None) -> User:
    groups_ensure()
    return User.objects.create_user("ada", password="Ada-pw-4b1e")


def records_since(mark: int) -> list[Record]:
    return list(
        AuditRecord.objects.filter(pk__gt=mark)
        .order_by("pk")
        .values_list("actor", "action", "object", "summary")
    )


def mark() -> int:
    return AuditRecord.objects.order_by("-pk").values_list("pk", flat=True).first() or 0


def change_form_data(client: Client, url: str, **changes: Any) -> dict[str, Any]:
    """The POST the admin's change form at ``url`` would send unchanged, with
    ``changes``: every field's current value as its widget writes it."""
    form = client.get(url).context["adminform"].form
    data: dict[str, Any] = {}
    for name, field in form.fields.items():
        if field.disabled:
            continue
        value = form[name].value()
        if isinstance(field.widget, MultiWidget):
            parts = field.widget.decompress(value) or []
            data.update({f"{name}_{i}": "" if p is None else str(p) for i, p in enumerate(parts)})
        elif isinstance(value, bool):
            if value:
                data[name] = "on"
        elif isinstance(value, list | tuple):
            data[name] = [str(item) for item in value]
        elif value is not None:
            data[name] = str(value)
    for name, value in changes.items():
        if value is False:
            data.pop(name, None)
        else:
            data[name] = value
    return data


def permission(name: str) -> Permission:
    app_label, codename = name.split(".")
    return Permission.objects.get(content_type__app_label=app_label, codename=codename)


# --- the Django admin -----------------------------------------------------------------------


def test_admin_adding_a_user_to_prompt_publishers_is_recorded(admin_web: Client, ada: User) -> None:
    url = f"/admin/auth/user/{ada.pk}/change/"
    publishers = Group.objects.get(name=PROMPT_PUBLISHERS_GROUP)
    before = mark()

    answer = admin_web.post(url, change_form_data(admin_web, url, groups=[str(publishers.pk)]))

    assert answer.status_code == 302, answer.context and answer.context["adminform"].form.errors
    assert ada.groups.filter(pk=publishers.pk).exists()
    assert records_since(before) == [
        (
            "root",
            "user.group_added",
            "user ada",
            "added user ada to group Prompt publishers in the Django admin",
        )
    ]


def test_admin_giving_and_taking_a_permission_is_recorded(admin_web: Client, ada: User) -> None:
    url = f"/admin/auth/user/{ada.pk}/change/"
    publish = permission("releases.publish_release")
    before = mark()

    admin_web.post(url, change_form_data(admin_web, url, user_permissions=[str(publish.pk)]))
    admin_web.post(url, change_form_data(admin_web, url, user_permissions=[]))

    assert [r[:3] for r in records_since(before)] == [
        ("root", "user.permission_added", "user ada"),
        ("root", "user.permission_removed", "user ada"),
    ]
    assert "releases.publish_release" in records_since(before)[0][3]


def test_admin_making_a_user_superuser_says_the_flag_changed(admin_web: Client, ada: User) -> None:
    url = f"/admin/auth/user/{ada.pk}/change/"
    before = mark()

    admin_web.post(url, change_form_data(admin_web, url, is_superuser="on", is_staff="on"))

    assert records_since(before) == [
        (
            "root",
            "user.changed",
            "user ada",
            "changed user ada in the Django admin: is_superuser off → on, is_staff off → on",
        )
    ]


def test_admin_user_created_password_changed_and_deleted_never_show_the_hash(
    admin_web: Client,
) -> None:
    before = mark()
    added = admin_web.post(
        "/admin/auth/user/add/",
        {
            "username": "grace",
            "password1": "Grace-pw-77aa1",
            "password2": "Grace-pw-77aa1",
            "usable_password": "true",
        },
    )
    grace = User.objects.get(username="grace")
    changed = admin_web.post(
        f"/admin/auth/user/{grace.pk}/password/",
        {"password1": "Other-pw-3c9d2", "password2": "Other-pw-3c9d2", "usable_password": "true"},
    )
    hashes = [grace.password, User.objects.get(pk=grace.pk).password]
    deleted = admin_web.post(f"/admin/auth/user/{grace.pk}/delete/", {"post": "yes"})

    assert (added.status_code, changed.status_code, deleted.status_code) == (302, 302, 302)
    found = records_since(before)
    assert [r[:3] for r in found] == [
        ("root", "user.created", "user grace"),
        ("root", "user.password_changed", "user grace"),
        ("root", "user.deleted", "user grace"),
    ]
    assert found[1][3] == "changed user grace in the Django admin: password"
    text = str(found)
    for secret in (*hashes, "Grace-pw-77aa1", "Other-pw-3c9d2", "pbkdf2", "argon2"):
        assert secret not in text


def test_admin_token_created_and_deleted_show_a_fingerprint_never_the_key(
    admin_web: Client, ada: User
) -> None:
    before = mark()
    admin_web.post("/admin/authtoken/tokenproxy/add/", {"user": str(ada.pk)})
    key = Token.objects.get(user=ada).key
    admin_web.post(f"/admin/authtoken/tokenproxy/{ada.pk}/delete/", {"post": "yes"})

    found = records_since(before)
    assert not Token.objects.filter(user=ada).exists()
    assert [r[:3] for r in found] == [
        ("root", "token.created", "token of user ada"),
        ("root", "token.deleted", "token of user ada"),
    ]
    assert fingerprint(key) in found[0][3] and fingerprint(key) in found[1][3]
    assert key not in str(found)


def test_admin_group_created_renamed_and_deleted_with_its_permissions(admin_web: Client) -> None:
    publish = permission("releases.publish_release")
    before = mark()
    admin_web.post("/admin/auth/group/add/", {"name": "Night shift", "permissions": [publish.pk]})
    group = Group.objects.get(name="Night shift")
    admin_web.post(
        f"/admin/auth/group/{group.pk}/change/", {"name": "Day shift", "permissions": []}
    )
    admin_web.post(f"/admin/auth/group/{group.pk}/delete/", {"post": "yes"})

    assert [r[1:] for r in records_since(before)] == [
        ("group.created", "group Night shift", "created group Night shift in the Django admin"),
        (
            "group.permission_added",
            "group Night shift",
            "gave group Night shift the permission releases.publish_release in the Django admin",
        ),
        (
            "group.changed",
            "group Day shift",
            "renamed group Night shift to Day shift in the Django admin",
        ),
        (
            "group.permission_removed",
            "group Day shift",
            "took from group Day shift the permission releases.publish_release in the Django admin",
        ),
        ("group.deleted", "group Day shift", "deleted group Day shift in the Django admin"),
    ]


def test_admin_deleting_a_lockout_is_recorded_and_axes_own_cleanup_is_not(
    admin_web: Client,
) -> None:
    attempt = AccessAttempt.objects.create(
        username="ada",
        ip_address="203.0.113.9",
        user_agent="x",
        failures_since_start=5,
        attempt_time=timezone.now(),
        get_data="",
        post_data="",
        http_accept="",
        path_info="/",
    )
    before = mark()

    admin_web.post(f"/admin/axes/accessattempt/{attempt.pk}/delete/", {"post": "yes"})
    AccessAttempt.objects.create(
        username="bob",
        ip_address="203.0.113.10",
        user_agent="y",
        failures_since_start=1,
        attempt_time=timezone.now(),
    )
    AccessAttempt.objects.filter(username="bob").delete()  # axes' own, outside the admin

    assert records_since(before) == [
        (
            "root",
            "login_attempt.deleted",
            "failed-login record of ada",
            "deleted the failed-login record of ada from 203.0.113.9 in the Django admin",
        )
    ]


# --- the ORM: a shell, a command ------------------------------------------------------------


def _joined_and_cleared(user: User) -> None:
    user.groups.add(Group.objects.get(name="Prompt authors"))
    user.groups.clear()


def _saved(user: User, **fields: object) -> None:
    """``fields`` set (``password`` through ``set_password``), then the user saved."""
    for name, value in fields.items():
        if name == "password":
            user.set_password(str(value))
        else:
            setattr(user, name, value)
    user.save()


ORM_CASES: list[tuple[str, Callable[[User], object], list[tuple[str, str]]]] = [
    (
        "group.user_set.add (the reverse side)",
        lambda ada: Group.objects.get(name=PROMPT_PUBLISHERS_GROUP).user_set.add(ada),
        [("user.group_added", "added user ada to group Prompt publishers")],
    ),
    (
        "user.groups.clear",
        lambda ada: _joined_and_cleared(ada),
        [
            ("user.group_added", "added user ada to group Prompt authors"),
            ("user.group_removed", "removed user ada from group Prompt authors"),
        ],
    ),
    (
        "user.user_permissions.add",
        lambda ada: ada.user_permissions.add(permission("releases.publish_release")),
        [("user.permission_added", "gave user ada the permission releases.publish_release")],
    ),
    (
        "permission.user_set.add (the reverse side)",
        lambda ada: permission("releases.publish_release").user_set.add(ada),
        [("user.permission_added", "gave user ada the permission releases.publish_release")],
    ),
    (
        "group.permissions.add",
        lambda ada: Group.objects.get(name="Agent hosts").permissions.add(
            permission("releases.publish_release")
        ),
        [
            (
                "group.permission_added",
                "gave group Agent hosts the permission releases.publish_release",
            )
        ],
    ),
    (
        "set_password and save",
        lambda ada: _saved(ada, password="New-pw-81f0"),
        [("user.password_changed", "changed user ada: password")],
    ),
    (
        "a rename",
        lambda ada: _saved(ada, username="ada2"),
        [("user.changed", "changed user ada2: username ada → ada2")],
    ),
    (
        "is_active off",
        lambda ada: _saved(ada, is_active=False),
        [("user.changed", "changed user ada: is_active on → off")],
    ),
    (
        "a token made and deleted",
        lambda ada: Token.objects.create(user=ada).delete(),
        [
            ("token.created", "created the API token of user ada"),
            ("token.deleted", "deleted the API token of user ada"),
        ],
    ),
    (
        "the user deleted (its token with it)",
        lambda ada: (Token.objects.create(user=ada), ada.delete())[1],
        [
            ("token.created", "created the API token of user ada"),
            ("token.deleted", "deleted the API token of user ada"),
            ("user.deleted", "deleted user ada"),
        ],
    ),
    ("a login (last_login) records nothing", lambda ada: _login(ada), []),
]


def _login(user: User) -> None:
    user.last_login = timezone.now()
    user.save(update_fields=["last_login"])


@pytest.mark.parametrize(("case", "change", "expected"), ORM_CASES, ids=[c[0] for c in ORM_CASES])
def test_orm_changes_are_recorded_by_the_system(
    ada: User, case: str, change: Callable[[User], object], expected: list[tuple[str, str]]
) -> None:
    before = mark()

    change(ada)

    found = records_since(before)
    assert [r[0] for r in found] == [""] * len(expected)  # no request: the system
    assert [(action, summary.split(" (fingerprint")[0]) for _, action, _, summary in found] == (
        expected
    )
    assert "Ada-pw" not in str(found) and "New-pw" not in str(found)


def test_createsuperuser_is_recorded_by_the_system(
    db: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", "Boot-pw-5e6f")
    before = mark()

    call_command("createsuperuser", "--noinput", username="boss", email="boss@example.com")

    assert records_since(before) == [
        ("", "user.created", "user boss", "created user boss (staff, superuser)")
    ]


def test_an_agent_host_made_on_the_editor_page_is_recorded_by_its_author(ada: User) -> None:
    ada.groups.add(Group.objects.get(name="Prompt authors"))
    client = Client()
    client.force_login(ada)
    before = mark()

    answer = client.post("/agent-hosts/", {"name": "build-07"})

    assert answer.status_code == 200
    assert [r[:3] for r in records_since(before)] == [
        ("ada", "user.created", "user build-07"),
        ("ada", "user.group_added", "user build-07"),
        ("ada", "token.created", "token of user build-07"),
        ("ada", "host.created", "agent host build-07"),
    ]
    assert answer.context["host"].token not in str(records_since(before))
