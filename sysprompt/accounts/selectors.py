"""Reads about accounts: the agent hosts, as the app lists them (never their tokens)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db.models import Exists, OuterRef, Subquery
from rest_framework.authtoken.models import Token

from sysprompt.groups import AGENT_HOSTS_GROUP


@dataclass(frozen=True)
class AgentHostSummary:
    """One agent host on the list: whether it has a token and since when, not the token."""

    username: str
    created_at: datetime
    is_active: bool
    has_token: bool
    token_created_at: datetime | None


def agent_hosts() -> list[AgentHostSummary]:
    """The users in the "Agent hosts" group, by name. Token keys are never selected."""
    user_model = get_user_model()
    tokens = Token.objects.filter(user=OuterRef("pk"))
    rows = (
        user_model._default_manager.filter(groups__name=AGENT_HOSTS_GROUP)
        .annotate(has_token=Exists(tokens), token_created_at=Subquery(tokens.values("created")[:1]))
        .order_by(user_model.USERNAME_FIELD)
        .values(
            user_model.USERNAME_FIELD, "date_joined", "is_active", "has_token", "token_created_at"
        )
    )
    return [
        AgentHostSummary(
            username=row[user_model.USERNAME_FIELD],
            created_at=row["date_joined"],
            is_active=row["is_active"],
            has_token=row["has_token"],
            token_created_at=row["token_created_at"],
        )
        for row in rows
    ]


def is_agent_host(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Whether ``user`` is in the "Agent hosts" group (one query)."""
    if not user.is_authenticated:
        return False
    users = get_user_model()._default_manager
    return users.filter(pk=user.pk, groups__name=AGENT_HOSTS_GROUP).exists()
