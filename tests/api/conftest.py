"""Fixtures of the API tests: a real agent host (a user in the "Agent hosts" group, as
``create_agent_host`` makes one) and its token client."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from sysprompt.accounts.services import AgentHost, agent_host_ensure


@pytest.fixture
def host(db: None) -> AgentHost:
    return agent_host_ensure(name="host-1")


@pytest.fixture
def host_client(host: AgentHost) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {host.token}")
    return client
