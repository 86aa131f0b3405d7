"""The admin shows the library's tables and lets nobody write them."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from sysprompt.library.services import library_install

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client_logged_in(db: None) -> Client:
    client = Client()
    client.force_login(User.objects.create_superuser("root", "", "pw"))
    return client


@pytest.mark.parametrize("model", ["fragmentversion", "shippeddefault", "hostoverride"])
def test_admin_lists_rows_read_only(admin_client_logged_in: Client, model: str) -> None:
    library_install()

    listed = admin_client_logged_in.get(f"/admin/library/{model}/")
    add = admin_client_logged_in.get(f"/admin/library/{model}/add/")

    assert listed.status_code == 200
    assert add.status_code == 403
