"""Accounts: the first administrator, the three groups, and agent hosts with their tokens.

The groups: "Prompt authors" (edit the template and the library, see and change every
conversation, manage agent hosts, create releases, move unprotected labels), "Prompt
publishers" (move protected labels such as ``production``: publish) and "Agent hosts"
(no permission: they resolve their own conversations). The first admin is put in
"Prompt publishers" when it is created (a superuser has every permission anyway; the
membership shows it in the admin and stays if the flag is ever taken away).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from django.apps import apps
from django.contrib.auth import get_user_model
from django.contrib.auth.management import create_permissions
from django.contrib.auth.models import Group, Permission
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Field
from rest_framework.authtoken.models import Token

from sysprompt.errors import AdminBootstrapError, AgentHostError, AgentHostNotFound
from sysprompt.events import records
from sysprompt.events.actors import acting
from sysprompt.events.services import Actor

# The group names live below every app; re-exported for the callers of this module.
from sysprompt.groups import AGENT_HOSTS_GROUP as AGENT_HOSTS_GROUP
from sysprompt.groups import PROMPT_AUTHORS_GROUP as PROMPT_AUTHORS_GROUP
from sysprompt.groups import PROMPT_PUBLISHERS_GROUP as PROMPT_PUBLISHERS_GROUP
from sysprompt.prompts.permissions import (
    CONVERSATION_CHANGE_PERMISSION,
    CONVERSATION_DELETE_PERMISSION,
    CONVERSATION_VIEW_PERMISSION,
    TEMPLATE_EDIT_PERMISSION,
)
from sysprompt.releases.permissions import PUBLISH_PERMISSION

ADMIN_USERNAME = "admin"


@dataclass(frozen=True)
class AdminBootstrap:
    """What :func:`admin_ensure` did: ``password`` is set only when it created the admin."""

    username: str
    password: str | None


@transaction.atomic
def admin_ensure(*, password: str | None = None) -> AdminBootstrap:
    """Create the ``admin`` superuser unless a superuser already exists.

    Raises AdminBootstrapError when no superuser exists but the name is taken.
    ``password`` defaults to a fresh random one. Idempotent: with a superuser present,
    nothing is written and the first superuser's name is returned without a password.
    """
    user_model = get_user_model()
    existing = user_model.objects.filter(is_superuser=True).order_by("pk").first()
    if existing is not None:
        return AdminBootstrap(username=existing.get_username(), password=None)
    if user_model.objects.filter(username=ADMIN_USERNAME).exists():
        raise AdminBootstrapError(
            f"A user named {ADMIN_USERNAME!r} exists but is not a superuser; "
            "create one with `manage.py createsuperuser`."
        )
    password = password or secrets.token_urlsafe(12)
    admin = user_model.objects.create_superuser(
        username=ADMIN_USERNAME, email="", password=password
    )
    groups_ensure()
    admin.groups.add(Group.objects.get(name=PROMPT_PUBLISHERS_GROUP))
    return AdminBootstrap(username=ADMIN_USERNAME, password=password)


# Who may create agent hosts and rotate their tokens in the app (the Agent hosts page):
# whoever may create API tokens; prompt authors may.
AGENT_HOSTS_PERMISSION = "authtoken.add_token"

GROUP_PERMISSIONS: dict[str, tuple[str, ...]] = {
    PROMPT_AUTHORS_GROUP: (
        TEMPLATE_EDIT_PERMISSION,
        "sysprompt.view_templateversion",
        CONVERSATION_VIEW_PERMISSION,
        CONVERSATION_CHANGE_PERMISSION,
        CONVERSATION_DELETE_PERMISSION,
        AGENT_HOSTS_PERMISSION,
    ),
    PROMPT_PUBLISHERS_GROUP: (PUBLISH_PERMISSION,),
    AGENT_HOSTS_GROUP: (),
}


@transaction.atomic
def groups_ensure() -> list[Group]:
    """Create the groups of :data:`GROUP_PERMISSIONS` and grant their permissions.

    Idempotent and additive: permissions an administrator granted a group since stay.
    """
    for label in ("sysprompt", "releases", "authtoken"):
        create_permissions(apps.get_app_config(label), verbosity=0)
    groups = []
    for name, wanted in GROUP_PERMISSIONS.items():
        group, _ = Group.objects.get_or_create(name=name)
        if wanted:
            group.permissions.add(*_permissions(wanted))
        groups.append(group)
    return groups


def _permissions(names: Sequence[str]) -> list[Permission]:
    found = []
    for name in names:
        app_label, codename = name.split(".", 1)
        found.append(Permission.objects.get(content_type__app_label=app_label, codename=codename))
    return found


@dataclass(frozen=True)
class AgentHost:
    """What :func:`agent_host_ensure` did. ``token`` is the key to send as
    ``Authorization: Token <key>``."""

    username: str
    token: str
    user_created: bool
    token_created: bool


@transaction.atomic
def agent_host_ensure(*, name: str, rotate: bool = False, author: Actor = None) -> AgentHost:
    """A user for an agent host, in the "Agent hosts" group, and its API token.

    Creates the user (without a usable password: it only calls the API) or reuses an
    existing one; reuses its token unless ``rotate`` replaces it. Raises
    :class:`AgentHostError` when the name is not a valid user name, or names a user
    that is inactive or may change the template (its token would not be an agent
    host's).
    """
    user_model = get_user_model()
    field = user_model._meta.get_field(user_model.USERNAME_FIELD)
    assert isinstance(field, Field)
    if not name:
        raise AgentHostError("The agent host's name is empty; give a name such as my-host.")
    try:
        field.run_validators(name)
    except ValidationError as error:
        raise AgentHostError(
            f"{name!r} is not a valid user name: {' '.join(error.messages)}"
        ) from None
    with acting(author):  # the user, group and token records name the author too
        return _host_write(name, rotate, author)


def _host_write(name: str, rotate: bool, author: Actor) -> AgentHost:
    user_model = get_user_model()
    user = user_model._default_manager.filter(**{user_model.USERNAME_FIELD: name}).first()
    user_created = user is None
    if user is None:
        user = user_model._default_manager.create_user(**{user_model.USERNAME_FIELD: name})
    elif not user.is_active:
        raise AgentHostError(
            f"User {name!r} is inactive, so its token would not work; "
            "reactivate it in the admin or choose another name."
        )
    elif user.has_perm(TEMPLATE_EDIT_PERMISSION):
        raise AgentHostError(
            f"User {name!r} may change the template, so it is no agent host; choose another "
            f"name (for this user's own token: manage.py drf_create_token {name})."
        )
    user.groups.add(Group.objects.get_or_create(name=AGENT_HOSTS_GROUP)[0])
    if rotate:
        Token.objects.filter(user=user).delete()
    token, token_created = Token.objects.get_or_create(user=user)
    if change := _host_change(user_created, token_created, rotate):
        records.host_account(actor=author, host=name, change=change)
    return AgentHost(
        username=name, token=token.key, user_created=user_created, token_created=token_created
    )


def _host_change(user_created: bool, token_created: bool, rotate: bool) -> str | None:
    """What the audit log calls what :func:`agent_host_ensure` did (None: nothing)."""
    if user_created:
        return "created"
    if rotate:
        return "token_rotated"
    return "token_created" if token_created else None


def agent_host_create(*, name: str, author: Actor = None) -> AgentHost:
    """A new agent host and its first token (the app's "New agent host").

    Unlike :func:`agent_host_ensure`, never takes over an existing user: that would put
    a person's account in the "Agent hosts" group and hand its token to whoever asked.
    Raises :class:`AgentHostError` when the name is taken or not a valid user name.
    """
    user_model = get_user_model()
    taken = AgentHostError(
        f"A user named {name!r} already exists; choose another name "
        "(for an existing agent host, rotate its token instead)."
    )
    try:
        with transaction.atomic():
            if user_model._default_manager.filter(**{user_model.USERNAME_FIELD: name}).exists():
                raise taken
            return agent_host_ensure(name=name, author=author)
    except IntegrityError:  # created by a concurrent request between the check and the insert
        raise taken from None


@transaction.atomic
def agent_host_rotate(*, name: str, author: Actor = None) -> AgentHost:
    """Replace the token of the agent host ``name`` (or give it one it lacks).

    Raises :class:`AgentHostNotFound` unless ``name`` is a user in the "Agent hosts"
    group, and :class:`AgentHostError` when that user is inactive or may change the
    template (see :func:`agent_host_ensure`).
    """
    user_model = get_user_model()
    hosts = user_model._default_manager.filter(groups__name=AGENT_HOSTS_GROUP)
    if not hosts.filter(**{user_model.USERNAME_FIELD: name}).exists():
        raise AgentHostNotFound(name)
    return agent_host_ensure(name=name, rotate=True, author=author)
