"""Fixtures of the API tests: a real agent host (a user in the "Agent hosts" group, as
``create_agent_host`` makes one) and its token client; a publisher (an author who may
move protected labels) and the production label as the migration leaves it."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from sysprompt.accounts.services import AgentHost, agent_host_ensure
from sysprompt.releases.services import production_ensure
from tests.conftest import token_client
from tests.releases.support import AUTHOR, PUBLISH, user


@pytest.fixture
def host(db: None) -> AgentHost:
    return agent_host_ensure(name="host-1")


@pytest.fixture
def host_client(host: AgentHost) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {host.token}")
    return client


@pytest.fixture
def production(db: None) -> None:
    """production → latest, protected, as the migration leaves it (a transactional test
    elsewhere may have emptied the tables since)."""
    production_ensure()


@pytest.fixture
def publisher(db: None) -> User:
    return user("publisher", AUTHOR, PUBLISH)


@pytest.fixture
def publisher_client(publisher: User) -> APIClient:
    return token_client(publisher)
