"""The admin shows the releases app's tables and lets nobody write them."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from sysprompt.accounts.services import agent_host_ensure
from sysprompt.releases import services
from tests.releases.support import save

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("model", ["release", "label", "labelmove", "testcontext", "hostlabel"])
def test_admin_lists_rows_read_only(model: str) -> None:
    root = User.objects.create_superuser("root", "", "pw")
    save("core", "x")
    services.release_create(message="shown", author=root)
    services.label_set(name="staging", target={"release": 1}, author=root)
    agent_host_ensure(name="host-1")
    services.host_label_set(username="host-1", label="staging", author=root)
    client = Client()
    client.force_login(root)

    listed = client.get(f"/admin/releases/{model}/")
    add = client.get(f"/admin/releases/{model}/add/")

    assert listed.status_code == 200
    assert add.status_code == 403
