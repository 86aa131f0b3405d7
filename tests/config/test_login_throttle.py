"""Login throttling with django-axes: failed logins of one username from one address lock
that pair for the cool-off, on the login page and the admin's. Real login forms posted
through Django's test client, real database, real axes records; nothing is mocked."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.apps import apps
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from pytest_django import Settings

pytestmark = pytest.mark.django_db

PASSWORD = "the-right-password"
LOGIN_URLS = ["/accounts/login/", "/admin/login/"]


@pytest.fixture
def staff(db: None) -> User:
    return User.objects.create_user("ada", password=PASSWORD, is_staff=True)


@pytest.fixture
def other(db: None) -> User:
    return User.objects.create_user("grace", password=PASSWORD, is_staff=True)


def attempt(
    url: str,
    username: str,
    password: str,
    address: str = "203.0.113.7",
    forwarded_for: str | None = None,
) -> tuple[int, str, bool]:
    """One login from ``address``: status, body, and whether a session was made."""
    client = Client(REMOTE_ADDR=address)
    headers = {} if forwarded_for is None else {"X-Forwarded-For": forwarded_for}
    response = client.post(url, {"username": username, "password": password}, headers=headers)
    return response.status_code, response.content.decode(), "_auth_user_id" in client.session


LIMIT = 5


def fail(url: str, username: str, times: int, address: str = "203.0.113.7") -> None:
    """``times`` failed logins; the one that reaches the limit is answered with the lock."""
    for number in range(1, times + 1):
        status, _, logged_in = attempt(url, username, "wrong", address)
        assert (status, logged_in) == (429 if number >= LIMIT else 200, False)


@pytest.mark.parametrize("url", LOGIN_URLS)
def test_login_right_password_logs_in_when_under_limit(url: str, staff: User) -> None:
    fail(url, staff.username, 4)

    status, _, logged_in = attempt(url, staff.username, PASSWORD)

    assert (status, logged_in) == (302, True)


@pytest.mark.parametrize("url", LOGIN_URLS)
def test_login_locked_after_limit_even_with_right_password(url: str, staff: User) -> None:
    fail(url, staff.username, 5)

    status, body, logged_in = attempt(url, staff.username, PASSWORD)

    assert (status, logged_in) == (429, False)
    assert "Too many failed logins" in body
    assert 'href="/static/css/app.css"' in body  # the app's page, not axes' plain text
    assert "15 minutes" in body


def test_login_lockout_answers_retry_after(staff: User) -> None:
    fail("/accounts/login/", staff.username, 5)

    response = Client(REMOTE_ADDR="203.0.113.7").post(
        "/accounts/login/", {"username": staff.username, "password": PASSWORD}
    )

    assert response.status_code == 429
    assert response["Retry-After"] == str(15 * 60)
    assert "no-store" in response["Cache-Control"]


def test_login_lock_shared_by_login_page_and_admin(staff: User) -> None:
    fail("/accounts/login/", staff.username, LIMIT - 1)

    fifth, _, _ = attempt("/admin/login/", staff.username, "wrong")
    status, body, logged_in = attempt("/admin/login/", staff.username, PASSWORD)

    assert fifth == 429
    assert (status, logged_in) == (429, False)
    assert "Too many failed logins" in body


def test_login_other_username_not_locked(staff: User, other: User) -> None:
    fail("/accounts/login/", staff.username, 5)

    status, _, logged_in = attempt("/accounts/login/", other.username, PASSWORD)

    assert (status, logged_in) == (302, True)


def test_login_same_username_other_address_not_locked(staff: User) -> None:
    fail("/accounts/login/", staff.username, 5, address="203.0.113.7")

    status, _, logged_in = attempt(
        "/accounts/login/", staff.username, PASSWORD, address="198.51.100.9"
    )

    assert (status, logged_in) == (302, True)


def test_login_unknown_username_locked_too(db: None) -> None:
    """Guessing usernames is throttled like guessing passwords."""
    fail("/accounts/login/", "nobody", 5)

    status, _, _ = attempt("/accounts/login/", "nobody", "anything")

    assert status == 429


def test_login_lock_expires_after_cool_off(staff: User, settings: Settings) -> None:
    settings.AXES_COOLOFF_TIME = timedelta(seconds=1)
    fail("/accounts/login/", staff.username, 5)
    assert attempt("/accounts/login/", staff.username, PASSWORD)[0] == 429

    time.sleep(1.2)
    status, _, logged_in = attempt("/accounts/login/", staff.username, PASSWORD)

    assert (status, logged_in) == (302, True)


def test_login_success_before_limit_resets_count(staff: User) -> None:
    fail("/accounts/login/", staff.username, 4)
    assert attempt("/accounts/login/", staff.username, PASSWORD)[2]

    fail("/accounts/login/", staff.username, 4)  # 8 failures, but never 5 in a row
    status, _, logged_in = attempt("/accounts/login/", staff.username, PASSWORD)

    assert (status, logged_in) == (302, True)


def test_login_lock_lifted_by_axes_reset(staff: User) -> None:
    fail("/accounts/login/", staff.username, 5)
    attempts = apps.get_model("axes", "AccessAttempt")
    assert attempts.objects.filter(username=staff.username).exists()

    call_command("axes_reset_username", staff.username, verbosity=0)
    status, _, logged_in = attempt("/accounts/login/", staff.username, PASSWORD)

    assert (status, logged_in) == (302, True)


# --- whose address ------------------------------------------------------------------


def test_login_forwarded_for_ignored_without_proxy_count(staff: User) -> None:
    """Without TRUSTED_PROXY_COUNT a client cannot pick its address with a header."""
    for number in range(1, LIMIT + 1):
        status, _, _ = attempt(
            "/accounts/login/",
            staff.username,
            "wrong",
            forwarded_for=f"192.0.2.{number}",
        )
        assert status == (429 if number == LIMIT else 200)

    status, _, _ = attempt("/accounts/login/", staff.username, PASSWORD, forwarded_for="192.0.2.99")

    assert status == 429


def test_login_forwarded_for_rightmost_entry_used_behind_one_proxy(
    staff: User, settings: Settings
) -> None:
    """Behind one proxy (nginx appends $remote_addr), the client's address is the last
    entry; what the client itself put to the left is not believed."""
    settings.TRUSTED_PROXY_COUNT = 1
    proxy = "127.0.0.1"
    for number in range(1, LIMIT + 1):
        status, _, _ = attempt(
            "/accounts/login/",
            staff.username,
            "wrong",
            address=proxy,
            forwarded_for=f"10.9.9.{number}, 203.0.113.7",
        )
        assert status == (429 if number == LIMIT else 200)

    locked, _, _ = attempt(
        "/accounts/login/",
        staff.username,
        PASSWORD,
        address=proxy,
        forwarded_for="203.0.113.7",
    )
    elsewhere, _, logged_in = attempt(
        "/accounts/login/",
        staff.username,
        PASSWORD,
        address=proxy,
        forwarded_for="203.0.113.7, 198.51.100.9",
    )

    assert locked == 429
    assert (elsewhere, logged_in) == (302, True)
