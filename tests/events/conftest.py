"""Fixtures of the events tests that change releases: users with and without the
permission to publish, the production label, a subscription to every event type."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from sysprompt.events import services
from sysprompt.events.catalog import EVENT_TYPES
from sysprompt.releases.services import production_ensure
from tests.releases.support import AUTHOR, PUBLISH, user


@pytest.fixture
def writer(db: None) -> User:
    """A prompt author without the permission to publish; production → latest (a
    transactional test may have emptied the tables the migration filled)."""
    production_ensure()
    return user("writer", AUTHOR)


@pytest.fixture
def publisher(db: None) -> User:
    """A prompt author who may move protected labels; production → latest."""
    production_ensure()
    return user("publisher", AUTHOR, PUBLISH)


@pytest.fixture
def everything(writer: User) -> int:
    """A subscription to every event type with prompt text (nothing is sent: no worker
    runs). Its id."""
    return services.webhook_create(
        url="https://ci.example.com/", events=list(EVENT_TYPES), include_text=True, author=writer
    ).webhook.id
