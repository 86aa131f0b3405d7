"""A real server stopped and started again under a running host."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sysprompt_client import Client
from tests.client.conftest import Counting
from tests.client.served import RealServer


@pytest.fixture
def real(tmp_path: Path) -> Iterator[RealServer]:
    served = RealServer(tmp_path)
    try:
        served.start()
        yield served
    finally:
        served.close()


def test_server_stopped_and_restarted(real: RealServer, tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    counting = Counting()
    client = Client(
        real.url,
        real.token,
        transport=counting,
        cache_dir=cache_dir,
        max_age=0.05,
        retries=0,
        fallback="Fallback prompt.",
        timeout=2.0,
    )
    try:
        first = client.system_prompt("conv-1", cwd=real.cwd)
        assert not first.is_fallback and first.text and "Real server." in first.text

        real.stop()
        # Cached turns keep answering the same bytes; revalidations fail quietly.
        for _ in range(10):
            assert client.system_prompt("conv-1", cwd=real.cwd).text == first.text
            time.sleep(0.02)
        assert not client.system_prompt("conv-1", cwd=real.cwd).is_fallback
        # A new conversation gets the fallback, and keeps it.
        down = client.system_prompt("conv-2", cwd=real.cwd)
        assert (down.text, down.is_fallback) == ("Fallback prompt.", True)

        real.start()
        requests = len(counting.requests)
        deadline = time.monotonic() + 60
        while len(counting.requests) == requests or client.cache.peek("conv-1").revalidating:  # type: ignore[union-attr]
            assert time.monotonic() < deadline
            assert client.system_prompt("conv-1", cwd=real.cwd).text == first.text
            time.sleep(0.02)
        assert client.system_prompt("conv-1", cwd=real.cwd).sha256 == first.sha256
        # The server kept the prompt across its restart.
        with Client(real.url, real.token) as fresh:
            assert fresh.system_prompt("conv-1", cwd=real.cwd).text == first.text
        # The fallback stays until compaction, which brings the server's prompt.
        assert client.system_prompt("conv-2", cwd=real.cwd) is client.system_prompt(
            "conv-2", cwd=real.cwd
        )
        assert client.system_prompt("conv-2", cwd=real.cwd).is_fallback
        compacted = client.compact("conv-2", cwd=real.cwd)
        assert not compacted.prompt.is_fallback and compacted.prompt.text
        assert client.system_prompt("conv-2", cwd=real.cwd).text == compacted.prompt.text
    finally:
        client.close()

    # A restarted host keeps both conversations from its cache directory.
    restarted_counting = Counting()
    with Client(real.url, real.token, transport=restarted_counting, cache_dir=cache_dir) as host:
        assert host.system_prompt("conv-1", cwd=real.cwd).text == first.text
        assert host.system_prompt("conv-2", cwd=real.cwd).text == compacted.prompt.text
    assert restarted_counting.requests == []
