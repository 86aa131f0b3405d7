"""The in-memory LRU and the directory cache."""

from __future__ import annotations

import json
import os
from pathlib import Path

from sysprompt_client import DirectoryCache, MemoryCache, PromptResult
from sysprompt_client.cache import Entry
from sysprompt_client.results import text_sha256
from tests.client.conftest import REFERENCES, MakeClient, Server

RESOLVE_3 = ("POST", "/api/conversations/conv-3/system-prompt/resolve")


def test_directory_cache_survives_a_new_client(
    server: Server, make_client: MakeClient, tmp_path: Path
) -> None:
    cache_dir = tmp_path / "cache"
    first, _ = make_client(cache_dir=cache_dir)
    original = first.system_prompt("conv-1", cwd=server.cwd)
    first.close()
    files = os.listdir(cache_dir)
    assert len(files) == 1 and "conv-1" not in files[0]
    assert os.stat(cache_dir / files[0]).st_mode & 0o077 == 0  # the host's user only

    restarted, counting = make_client(cache_dir=cache_dir)
    again = restarted.system_prompt("conv-1", cwd=server.cwd)
    assert counting.requests == []
    assert again.text == original.text and again.sha256 == original.sha256
    assert again.from_cache and again.constructed_at == original.constructed_at
    assert restarted.system_prompt("conv-1", cwd=server.cwd) is again


def test_old_entry_from_disk_is_answered_then_revalidated(
    server: Server, make_client: MakeClient, tmp_path: Path
) -> None:
    first, _ = make_client(cache_dir=tmp_path)
    first.system_prompt("conv-2", cwd=server.cwd)
    restarted, counting = make_client(cache_dir=tmp_path, max_age=0)
    assert restarted.system_prompt("conv-2", cwd=server.cwd).from_cache
    restarted.close()  # waits for the revalidation it started
    assert counting.requests == [("GET", "/api/conversations/conv-2/system-prompt")]


def test_corrupt_cache_files_are_ignored(
    server: Server, make_client: MakeClient, tmp_path: Path
) -> None:
    cache_dir = tmp_path / "cache"
    first, _ = make_client(cache_dir=cache_dir)
    original = first.system_prompt("conv-3", cwd=server.cwd)
    (path,) = cache_dir.iterdir()
    for damage in (b"{not json", b"", json.dumps({"format": 1}).encode()):
        path.write_bytes(damage)
        client, counting = make_client(cache_dir=cache_dir)
        assert client.system_prompt("conv-3", cwd=server.cwd).text == original.text
        assert counting.requests == [REFERENCES, RESOLVE_3]  # asked the server again
    # A text that does not match its sha256 is ignored too.
    data = json.loads(path.read_text())
    data["prompt"]["text"] = "tampered"
    path.write_text(json.dumps(data))
    client, counting = make_client(cache_dir=cache_dir)
    assert client.system_prompt("conv-3", cwd=server.cwd).text == original.text
    assert counting.requests == [REFERENCES, RESOLVE_3]


def result(cid: str, text: str = "x") -> PromptResult:
    return PromptResult(text=text, conversation_id=cid)


def test_directory_cache_names_and_servers(tmp_path: Path) -> None:
    a = DirectoryCache(tmp_path, "http://a")
    b = DirectoryCache(tmp_path, "http://b")
    assert a.path_for("../../etc/passwd").parent == tmp_path
    assert a.path_for("c") != b.path_for("c")
    a.save(PromptResult(text="A", sha256=None, conversation_id="c"))
    assert a.load("c") is None  # a sha256 that does not match the text
    a.save(PromptResult(text="A", sha256=text_sha256("A"), conversation_id="c"))
    loaded = a.load("c")
    assert loaded is not None and loaded[0].text == "A" and loaded[0].from_cache
    assert b.load("c") is None
    a.delete("c")
    assert a.load("c") is None
    assert [p.name for p in tmp_path.iterdir()] == []  # no temporary file left behind


def test_memory_cache_is_a_bounded_lru() -> None:
    cache = MemoryCache(2)
    entries = {cid: Entry(result(cid), 0.0) for cid in "abc"}
    cache.put("a", entries["a"])
    cache.put("b", entries["b"])
    assert cache.get("a") is entries["a"]  # a is now the most recent
    cache.put("c", entries["c"])
    assert "b" not in cache and "a" in cache and "c" in cache and len(cache) == 2
    assert not cache.replace("a", entries["b"], None)  # not the current entry
    assert cache.replace("a", entries["a"], None) and "a" not in cache
