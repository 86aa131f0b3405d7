"""https receivers: the worker connects to the address it checked and still speaks TLS
to the *name* — SNI, the certificate checked against it, ``Host:`` — and refuses a
certificate that does not name the host or that no trusted authority signed. The
receiver is a real TLS server with a certificate made for ``localhost`` by the openssl
command line; ``SYSPROMPT_WEBHOOK_CA_FILE`` makes the worker trust it."""

from __future__ import annotations

import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from pytest_django import Settings

from sysprompt.events import services
from sysprompt.events.models import Attempt
from sysprompt.events.sending import UNREACHED
from tests.events.support import Receiver, receiving, run_queued


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("tls")
    key, cert = folder / "key.pem", folder / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]
        + ["-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"]
        + ["-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return key, cert


@pytest.fixture
def tls_receiver(certificate: tuple[Path, Path]) -> Iterator[Receiver]:
    key, cert = certificate
    with receiving() as receiver:
        assert receiver.server is not None
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(cert, key)
        names: list[str | None] = []
        context.sni_callback = lambda sock, name, ctx: names.append(name)
        server = receiver.server
        server.socket = context.wrap_socket(server.socket, server_side=True)
        receiver.sni = names  # type: ignore[attr-defined]
        yield receiver


def _attempt(author: User, url: str) -> Attempt:
    created = services.webhook_create(url=url, events=["template.saved"], author=author)
    services.webhook_test(webhook_id=created.webhook.id, author=author)
    run_queued()
    return Attempt.objects.get()


def test_https_to_a_name_connects_to_its_checked_address_with_sni(
    author: User, settings: Settings, tls_receiver: Receiver, certificate: tuple[Path, Path]
) -> None:
    settings.SYSPROMPT = {
        "WEBHOOK_ALLOW_PRIVATE": ["localhost"],
        "WEBHOOK_CA_FILE": str(certificate[1]),
    }

    attempt = _attempt(author, f"https://localhost:{tls_receiver.port}/hooks")

    assert (attempt.status_code, attempt.error) == (200, "")
    [item] = tls_receiver.wait_for(1)
    assert item.headers["host"] == f"localhost:{tls_receiver.port}"
    assert tls_receiver.sni == ["localhost"]  # type: ignore[attr-defined]


def test_https_refuses_a_certificate_for_another_name(
    author: User,
    settings: Settings,
    tls_receiver: Receiver,
    certificate: tuple[Path, Path],
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings.SYSPROMPT = {
        "WEBHOOK_ALLOW_PRIVATE": ["127.0.0.1"],
        "WEBHOOK_CA_FILE": str(certificate[1]),
    }

    attempt = _attempt(author, f"https://127.0.0.1:{tls_receiver.port}/hooks")

    assert (attempt.status_code, attempt.error) == (None, UNREACHED)
    assert "certificate" in caplog.text.lower()
    assert tls_receiver.received == []


def test_https_refuses_a_certificate_no_trusted_authority_signed(
    author: User, settings: Settings, tls_receiver: Receiver, caplog: pytest.LogCaptureFixture
) -> None:
    settings.SYSPROMPT = {"WEBHOOK_ALLOW_PRIVATE": ["localhost"]}  # certifi's bundle only

    attempt = _attempt(author, f"https://localhost:{tls_receiver.port}/hooks")

    assert (attempt.status_code, attempt.error) == (None, UNREACHED)
    assert "certificate verify failed" in caplog.text
    assert tls_receiver.received == []
