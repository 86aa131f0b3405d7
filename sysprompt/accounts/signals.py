"""The audit of accounts, whatever changes them: users, groups, the permissions given to
either, group memberships and API tokens.

Services are not the only door to these tables: the Django admin, ``manage.py shell``,
``createsuperuser`` and ``changepassword`` write them directly. So the records come
from Django's model signals, connected once (:func:`connect`, from the app's
``ready``):

* ``pre_save``/``post_save``/``post_delete`` on the user model, ``Group`` and
  ``Token`` (and DRF's ``TokenProxy``, the admin's): created, changed (what changed:
  the password only by name, flags with their values, other fields by name),
  renamed, deleted;
* ``m2m_changed`` on ``User.groups``, ``User.user_permissions`` and
  ``Group.permissions``, from either side (``user.groups.add`` or
  ``group.user_set.add``; ``clear`` too);
* ``post_delete`` on django-axes' records, when a person deletes one in the admin.

The actor is the request's user (``sysprompt.events.actors``: the admin's, the API's,
the editor's), else the system. A record never holds a password, its hash or a token's
key: a token is named by its owner and a fingerprint. Signals run in the change's
transaction (the admin's views are atomic): a change that rolls back leaves no record.
Changes made by migrations use historical models and are not recorded.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.db.models import Model
from django.db.models.signals import m2m_changed, post_delete, post_save, pre_save
from rest_framework.authtoken.models import Token, TokenProxy

from sysprompt.events import records
from sysprompt.events.actors import current_actor, through_admin

FINGERPRINT_CHARS = 12
"""How many hex digits of a token key's SHA-256 name it in the audit log."""

_FLAGS = ("is_active", "is_staff", "is_superuser")
_IGNORED = frozenset({"last_login"})  # written at every login: not a change of the account
_BEFORE = "_sysprompt_audit_before"
_CLEARED = "_sysprompt_audit_cleared"


def fingerprint(key: str) -> str:
    """``sha256:`` and the first hex digits of the key's SHA-256: enough to tell tokens
    apart, nothing to rebuild one from."""
    return "sha256:" + hashlib.sha256(key.encode()).hexdigest()[:FINGERPRINT_CHARS]


def _name(user: Any) -> str:
    return str(user.get_username())


# --- users ----------------------------------------------------------------------------------


def _user_fields(model: type[Model]) -> list[str]:
    return [
        field.attname
        for field in model._meta.concrete_fields
        if not field.primary_key and field.attname not in _IGNORED
    ]


def user_before(sender: type[Model], instance: Any, update_fields: Any = None, **_: Any) -> None:
    """Keep the stored row of a user about to be saved, to say afterwards what changed
    (not for a new user, nor for a save of ``last_login`` alone)."""
    instance.__dict__.pop(_BEFORE, None)  # a failed save's, never compared
    if instance._state.adding or instance.pk is None:
        return
    if update_fields is not None and set(update_fields) <= _IGNORED:
        return
    fields = _user_fields(sender)
    if update_fields is not None:  # the save writes only these: compare only these
        fields = [field for field in fields if field in set(update_fields)]
    before = sender._default_manager.filter(pk=instance.pk).values(*fields).first()
    setattr(instance, _BEFORE, before)


def user_saved(sender: type[Model], instance: Any, created: bool, **_: Any) -> None:
    if created:
        flags = [flag.removeprefix("is_") for flag in _FLAGS[1:] if getattr(instance, flag)]
        if not instance.is_active:
            flags.append("inactive")
        if not instance.has_usable_password():
            flags.append("no usable password")
        records.user_created(actor=current_actor(), user=_name(instance), flags=flags)
        return
    before = instance.__dict__.pop(_BEFORE, None)
    if before is None:
        return
    changes = [
        _change(field, old, getattr(instance, field))
        for field, old in before.items()
        if _differs(old, getattr(instance, field))
    ]
    if changes:
        records.user_changed(actor=current_actor(), user=_name(instance), changes=changes)


def _differs(old: object, new: object) -> bool:
    """Whether a field changed; a time only by its microseconds did not (the admin's
    form shows ``date_joined`` to the second, so every save there drops them)."""
    if isinstance(old, datetime) and isinstance(new, datetime):
        return old.replace(microsecond=0) != new.replace(microsecond=0)
    return old != new


def _change(field: str, old: object, new: object) -> str:
    """How a record says a field changed: never a password (or its hash), the flags
    with their values, the user name with both names, other fields by name."""
    if field in _FLAGS:
        return f"{field} {'on' if old else 'off'} → {'on' if new else 'off'}"
    if field == get_user_model().USERNAME_FIELD:
        return f"{field} {old} → {new}"
    return field


def user_deleted(sender: type[Model], instance: Any, **_: Any) -> None:
    records.user_deleted(actor=current_actor(), user=_name(instance))


# --- groups ---------------------------------------------------------------------------------


def group_before(sender: type[Model], instance: Group, **_: Any) -> None:
    instance.__dict__.pop(_BEFORE, None)
    if instance._state.adding or instance.pk is None:
        return
    setattr(instance, _BEFORE, Group.objects.filter(pk=instance.pk).values_list("name").first())


def group_saved(sender: type[Model], instance: Group, created: bool, **_: Any) -> None:
    if created:
        records.group_changed(actor=current_actor(), group=instance.name, change="created")
        return
    before = instance.__dict__.pop(_BEFORE, None)
    if before is not None and before[0] != instance.name:
        records.group_changed(
            actor=current_actor(), group=instance.name, change="renamed", was=before[0]
        )


def group_deleted(sender: type[Model], instance: Group, **_: Any) -> None:
    records.group_changed(actor=current_actor(), group=instance.name, change="deleted")


# --- tokens ---------------------------------------------------------------------------------


def token_before(sender: type[Model], instance: Token, **_: Any) -> None:
    instance.__dict__.pop(_BEFORE, None)
    if instance._state.adding:
        return
    setattr(instance, _BEFORE, Token.objects.filter(pk=instance.pk).values_list("user_id").first())


def token_saved(sender: type[Model], instance: Token, created: bool, **_: Any) -> None:
    before = instance.__dict__.pop(_BEFORE, None)
    if not created and (before is None or before[0] == instance.user_id):
        return  # saved again, same owner: nothing changed that the log names
    records.token_changed(
        actor=current_actor(),
        user=_name(instance.user),
        fingerprint=fingerprint(instance.key),
        change="created" if created else "changed",
    )


def token_deleted(sender: type[Model], instance: Token, **_: Any) -> None:
    users = get_user_model()._default_manager
    owner = users.filter(pk=instance.user_id).first()
    records.token_changed(
        actor=current_actor(),
        user=_name(owner) if owner is not None else f"#{instance.user_id}",
        fingerprint=fingerprint(instance.key),
        change="deleted",
    )


# --- memberships and permissions --------------------------------------------------------------


def _permission_names(ids: Iterable[int]) -> list[str]:
    rows = Permission.objects.filter(pk__in=list(ids)).values_list(
        "content_type__app_label", "codename"
    )
    return sorted(f"{app}.{codename}" for app, codename in rows)


def _labels(model: type[Model], ids: Iterable[int]) -> list[str]:
    """What each related object is called in a record, for ``ids`` of ``model``."""
    if model is Permission:
        return _permission_names(ids)
    if model is Group:
        return sorted(Group.objects.filter(pk__in=list(ids)).values_list("name", flat=True))
    users = get_user_model()
    field = users.USERNAME_FIELD
    return sorted(
        str(n)
        for n in users._default_manager.filter(pk__in=list(ids)).values_list(field, flat=True)
    )


def _related_ids(instance: Any, accessor: str) -> set[int]:
    return set(getattr(instance, accessor).values_list("pk", flat=True))


def membership_changed(
    sender: type[Model],
    instance: Any,
    action: str,
    reverse: bool,
    model: type[Model],
    pk_set: set[int] | None,
    **_: Any,
) -> None:
    """``User.groups`` (forward: ``instance`` a user, ``model`` Group; reverse: a group
    and users)."""
    ids = _changed_ids(instance, action, pk_set, "user_set" if reverse else "groups")
    if ids is None:
        return
    added = action == "post_add"
    actor = current_actor()
    for name in _labels(model, ids):
        user, group = (name, instance.name) if reverse else (_name(instance), name)
        records.user_group(actor=actor, user=user, group=group, added=added)


def user_permissions_changed(
    sender: type[Model],
    instance: Any,
    action: str,
    reverse: bool,
    model: type[Model],
    pk_set: set[int] | None,
    **_: Any,
) -> None:
    """``User.user_permissions`` (forward: a user; reverse: a permission and users)."""
    ids = _changed_ids(instance, action, pk_set, "user_set" if reverse else "user_permissions")
    if ids is None:
        return
    _permissions_record(instance, model, ids, reverse, action == "post_add", "user")


def group_permissions_changed(
    sender: type[Model],
    instance: Any,
    action: str,
    reverse: bool,
    model: type[Model],
    pk_set: set[int] | None,
    **_: Any,
) -> None:
    """``Group.permissions`` (forward: a group; reverse: a permission and groups)."""
    ids = _changed_ids(instance, action, pk_set, "group_set" if reverse else "permissions")
    if ids is None:
        return
    _permissions_record(instance, model, ids, reverse, action == "post_add", "group")


def _permissions_record(
    instance: Any, model: type[Model], ids: set[int], reverse: bool, added: bool, kind: str
) -> None:
    actor = current_actor()
    if reverse:  # one permission, several holders
        (permission,) = _permission_names([instance.pk])
        for holder in _labels(model, ids):
            records.permission_given(
                actor=actor, holder=f"{kind} {holder}", permission=permission, added=added
            )
        return
    holder = f"{kind} {_name(instance) if kind == 'user' else instance.name}"
    for permission in _permission_names(ids):
        records.permission_given(actor=actor, holder=holder, permission=permission, added=added)


def _changed_ids(
    instance: Any, action: str, pk_set: set[int] | None, accessor: str
) -> set[int] | None:
    """The related ids an ``m2m_changed`` added or removed, once it is done (``None``:
    nothing to record yet). A ``clear`` names none: what it takes away is read
    before (``pre_clear``) and kept on the instance until ``post_clear``."""
    if action == "pre_clear":
        cleared = dict(instance.__dict__.get(_CLEARED) or {})
        cleared[accessor] = _related_ids(instance, accessor)
        setattr(instance, _CLEARED, cleared)
        return None
    if action == "post_clear":
        ids = (instance.__dict__.get(_CLEARED) or {}).pop(accessor, set())
        return set(ids) or None
    if action in ("post_add", "post_remove") and pk_set:
        return set(pk_set)
    return None


# --- django-axes ----------------------------------------------------------------------------


def login_record_deleted(sender: type[Model], instance: Any, **_: Any) -> None:
    """A person deleting one of django-axes' records in the admin (axes deletes its own
    at a successful login and when they expire: those are not recorded)."""
    if not through_admin():
        return
    kinds: dict[type[Model], str] = {
        AccessAttempt: "attempt",
        AccessLog: "log",
        AccessFailureLog: "failure_log",
    }
    kind = kinds[sender]
    records.login_record_deleted(
        actor=current_actor(),
        kind=kind,
        user=str(instance.username or "(no user name)"),
        address=str(instance.ip_address or "an unknown address"),
    )


def connect() -> None:
    """Connect every receiver above (``dispatch_uid``: once, however often called)."""
    users = get_user_model()
    pairs: list[tuple[Any, Any, type[Model] | Any]] = [
        (pre_save, user_before, users),
        (post_save, user_saved, users),
        (post_delete, user_deleted, users),
        (pre_save, group_before, Group),
        (post_save, group_saved, Group),
        (post_delete, group_deleted, Group),
        (m2m_changed, membership_changed, users.groups.through),
        (m2m_changed, user_permissions_changed, users.user_permissions.through),
        (m2m_changed, group_permissions_changed, Group.permissions.through),
    ]
    for token_model in (Token, TokenProxy):
        pairs += [
            (pre_save, token_before, token_model),
            (post_save, token_saved, token_model),
            (post_delete, token_deleted, token_model),
        ]
    for axes_model in (AccessAttempt, AccessLog, AccessFailureLog):
        pairs.append((post_delete, login_record_deleted, axes_model))
    for signal, receiver, sender in pairs:
        signal.connect(
            receiver,
            sender=sender,
            weak=False,
            dispatch_uid=f"sysprompt.audit.{receiver.__name__}.{sender._meta.label}",
        )
