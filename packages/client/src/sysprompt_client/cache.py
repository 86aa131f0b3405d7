"""Where the client keeps the prompts it has been given.

:class:`MemoryCache` is an LRU bounded by entries, thread-safe; a cached turn is one
lookup in it. :class:`DirectoryCache` optionally keeps each conversation's prompt in a
file as well, so a restarted host still has them: one JSON file per conversation
(and label and prompt asked for), named by a hash of the server URL, the conversation
id, the label and the prompt (no part of any reaches the file system), written to a
temporary file and moved into place with ``os.replace`` (a reader sees the old file or
the new one, never half of one). A file that cannot be read, is not such an entry, or
whose text does not match its SHA-256 is ignored as if absent.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

from sysprompt_client.results import PromptResult, prompt_from_stored, prompt_to_json

__all__ = ["DirectoryCache", "Entry", "MemoryCache", "cache_key"]

log = logging.getLogger("sysprompt_client")

FORMAT = 1


def cache_key(conversation_id: str, label: str | None = None, prompt: str | None = None) -> str:
    """The memory cache's key of a conversation asked for under ``label`` and of the
    named ``prompt`` (``None``: none asked for): the id itself, ``"<id>#<label>"``,
    ``"<id>@<prompt>"`` or ``"<id>#<label>@<prompt>"`` (``#`` and ``@`` are in none of
    a conversation id, a label and a prompt name the server accepts). The same
    conversation id under two prompts is two entries."""
    key = conversation_id if label is None else f"{conversation_id}#{label}"
    return key if prompt is None else f"{key}@{prompt}"


class Entry:
    """A cached prompt: the result every cached turn returns (the same object each
    time), the monotonic time after which it is revalidated, whether a revalidation is
    under way, and the label and prompt it was asked for under (part of its key).
    ``mismatched``
    is the result as the last turn whose context differed got it (with its
    ``context_mismatch``): the same object again while the turns differ alike."""

    __slots__ = ("label", "mismatched", "prompt", "result", "revalidating", "stale_at")

    def __init__(
        self,
        result: PromptResult,
        stale_at: float,
        label: str | None = None,
        prompt: str | None = None,
    ) -> None:
        self.result = result
        self.stale_at = stale_at
        self.revalidating = False
        self.label = label
        self.prompt = prompt
        self.mismatched: PromptResult | None = None

    @property
    def key(self) -> str:
        assert self.result.conversation_id is not None
        return cache_key(self.result.conversation_id, self.label, self.prompt)

    def __repr__(self) -> str:
        return f"Entry({self.result.conversation_id!r}, stale_at={self.stale_at})"


class MemoryCache:
    """Conversation id → :class:`Entry`, least recently used dropped beyond
    ``max_entries``. Every method is safe to call from any thread."""

    __slots__ = ("_entries", "_lock", "max_entries")

    def __init__(self, max_entries: int = 1024) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self.max_entries = max_entries
        self._entries: OrderedDict[str, Entry] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def get(self, key: str) -> Entry | None:
        """The entry, marked as just used; ``None`` when there is none."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
            return entry

    def peek(self, key: str) -> Entry | None:
        """The entry without marking it used."""
        return self._entries.get(key)

    def put(self, key: str, entry: Entry) -> None:
        with self._lock:
            self._entries[key] = entry
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)

    def replace(self, key: str, old: Entry, new: Entry | None) -> bool:
        """Put ``new`` (or remove the key, for ``None``) only if ``old`` is still the
        entry; a compaction that happened meanwhile is never undone."""
        with self._lock:
            if self._entries.get(key) is not old:
                return False
            if new is None:
                del self._entries[key]
            else:
                self._entries[key] = new
            return True

    def pop(self, key: str) -> Entry | None:
        with self._lock:
            return self._entries.pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


class DirectoryCache:
    """One JSON file per conversation in ``directory``, for the server at ``server``.

    ``load`` answers the stored result and the wall-clock time it was last confirmed;
    ``save`` and ``delete`` never raise for a file-system error (the prompt is still in
    memory; the failure is logged).
    """

    def __init__(self, directory: str | os.PathLike[str], server: str) -> None:
        self.directory = Path(directory)
        self.server = server

    def path_for(
        self, conversation_id: str, label: str | None = None, prompt: str | None = None
    ) -> Path:
        """The file of a conversation asked for under ``label`` and of ``prompt``: a
        SHA-256 of the server URL, the id, the label and the prompt (those not asked
        for left out: of the URL and the id alone, as before labels and prompts)."""
        text = f"{self.server}\n{conversation_id}"
        if label is not None:
            text += f"\nlabel:{label}"
        if prompt is not None:
            text += f"\nprompt:{prompt}"
        key = text.encode("utf-8", "surrogatepass")
        return self.directory / f"{hashlib.sha256(key).hexdigest()}.json"

    def load(
        self, conversation_id: str, label: str | None = None, prompt: str | None = None
    ) -> tuple[PromptResult, float] | None:
        path = self.path_for(conversation_id, label, prompt)
        try:
            with open(path, "rb") as file:
                data: Any = json.load(file)
            if not isinstance(data, dict) or data.get("format") != FORMAT:
                raise ValueError("not a cache entry of this format")
            if data.get("server") != self.server:
                raise ValueError("an entry of another server")
            result = prompt_from_stored(data.get("prompt"))
            if result.conversation_id != conversation_id:
                raise ValueError("an entry of another conversation")
            if data.get("label") != label:
                raise ValueError("an entry asked for under another label")
            if data.get("asked_prompt") != prompt:
                raise ValueError("an entry asked for of another prompt")
            saved_at = data.get("saved_at")
            if not isinstance(saved_at, int | float) or isinstance(saved_at, bool):
                raise ValueError("no time")
        except FileNotFoundError:
            return None
        except (OSError, ValueError, RecursionError) as error:  # JSONDecodeError is a ValueError
            log.warning("sysprompt cache: ignoring %s: %s", path, error)
            return None
        return result, float(saved_at)

    def save(
        self,
        result: PromptResult,
        saved_at: float | None = None,
        *,
        label: str | None = None,
        prompt: str | None = None,
    ) -> None:
        if result.conversation_id is None:
            return
        data = {
            "format": FORMAT,
            "server": self.server,
            "saved_at": time.time() if saved_at is None else saved_at,
            "label": label,
            "prompt": prompt_to_json(result),
        }
        if prompt is not None:
            data["asked_prompt"] = prompt
        path = self.path_for(result.conversation_id, label, prompt)
        try:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd, temporary = tempfile.mkstemp(dir=self.directory, prefix=".tmp-", suffix=".json")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as file:
                    json.dump(data, file, ensure_ascii=False)
                os.replace(temporary, path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
                raise
        except (OSError, UnicodeEncodeError) as error:
            log.warning("sysprompt cache: could not write %s: %s", path, error)

    def delete(
        self, conversation_id: str, label: str | None = None, prompt: str | None = None
    ) -> None:
        path = self.path_for(conversation_id, label, prompt)
        try:
            path.unlink(missing_ok=True)
        except OSError as error:
            log.warning("sysprompt cache: could not remove %s: %s", path, error)
