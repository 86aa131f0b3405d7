"""A central deployment (agent-hosts.md §0): the server runs on a machine of its own and
never sees the agent host's files; the host resolves its values and sends them.

The server is a real ``manage.py runserver`` in a process of its own
(``tests/client/served.py``), set up as a central deployment: ``SERVER_RESOLVES`` empty
and ``ALLOWED_ROOTS`` a directory it cannot read (mode 000). The agent host works in a
temporary directory the server is never told about except as the ``cwd`` string: a
real git repository on its own branch, with a modified file and an ``AGENTS.md``. It
uses ``sysprompt_client.Client(resolve_locally=True)`` and must get the prompt with its
own branch, status and ``AGENTS.md`` — byte for byte what the core renders for that
directory on the host.

How the test knows the server opened none of the host's files — two independent
witnesses, each shown to work:

1. **The kernel (inotify).** Every directory of the host's tree is watched for
   ``IN_OPEN``/``IN_ACCESS``, which the kernel reports for any process, whatever
   opens the file (Python, libgit2, SQLite). Each request the client sends is a
   window: the events queued before it are drained first (the client's own local
   reads, which happen between requests), and whatever is queued when the answer has
   come is what happened while the server worked. No other code of the test runs in a
   window, so those events are the server's. The test asserts they are none, and that
   the witness did see the client's own reads of ``AGENTS.md`` and of ``.git`` (libgit2,
   C code) outside the windows: it is live, and it sees C-level opens.
2. **The server's own audit hook.** The server process runs with
   ``tests.client.audited_settings``, which adds a Python audit hook before anything
   else and logs every ``open``, directory listing, ``chdir`` and started program of
   the process, in every thread. The log must hold no path under the host's directory
   (realpath or as given), while it does hold the server's own opens (its modules and
   templates: the hook was recording).

And a control: the same server restarted as a one-machine deployment (the default
``SERVER_RESOLVES``, the host's directory in its ``ALLOWED_ROOTS``) and asked without
values: both witnesses then see it open the host's ``AGENTS.md`` — they would have
caught it.

Linux only (inotify). The server's database is a SQLite file of its own, whatever
database the rest of the suite uses.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import struct
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from sysprompt_client import Client
from sysprompt_core import template as engine
from sysprompt_core.variables import ResolveContext, ResolverOptions, default_registry
from sysprompt_core.variables import resolve_prompt as core_resolve
from tests.client.served import RealServer

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="inotify is Linux's")

TEMPLATE = (
    "You are the team's coding assistant on [system:os].\n"
    "You work in [prompt:cwd], on the branch [git:branch].\n"
    "[if git:status]\n"
    "Uncommitted changes:\n"
    "[git:status]\n"
    "[endif]\n"
    "[if file:AGENTS.md]\n"
    "[file:AGENTS.md]\n"
    "[endif]\n"
)
BRANCH = "feature/central-host"
RULES = "Host-only rules: never push on Fridays.\n"

IN_ACCESS = 0x00000001
IN_OPEN = 0x00000020
IN_ISDIR = 0x40000000
_EVENT = struct.Struct("iIII")


class Witness:
    """inotify on every directory of a tree: the files and directories of it that any
    process opened or read, as ``(relative path, "open" | "read")``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        self.fd: int = self.libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        assert self.fd >= 0, os.strerror(ctypes.get_errno())
        self.watched: dict[int, Path] = {}
        for folder, _, _ in os.walk(root):
            wd: int = self.libc.inotify_add_watch(self.fd, os.fsencode(folder), IN_OPEN | IN_ACCESS)
            assert wd >= 0, os.strerror(ctypes.get_errno())
            self.watched[wd] = Path(folder)
        self.drain()  # the walk itself

    def drain(self) -> list[tuple[str, str]]:
        """The events queued since the last drain."""
        events: list[tuple[str, str]] = []
        while True:
            try:
                data = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return events
            offset = 0
            while offset < len(data):
                wd, mask, _, length = _EVENT.unpack_from(data, offset)
                name = data[offset + _EVENT.size : offset + _EVENT.size + length].rstrip(b"\0")
                offset += _EVENT.size + length
                folder = self.watched.get(wd)
                if folder is None:
                    continue
                path = (folder / os.fsdecode(name)).relative_to(self.root)
                events.append((str(path), "open" if mask & IN_OPEN else "read"))

    def close(self) -> None:
        os.close(self.fd)


class Windows(httpx.BaseTransport):
    """httpx's real transport; each request is a window of the witness: what the
    witness saw before it is kept apart (``outside``) from what it saw while the request
    was under way (``inside``: the server's doing)."""

    def __init__(self, witness: Witness) -> None:
        self.inner = httpx.HTTPTransport()
        self.witness = witness
        self.outside: list[tuple[str, str]] = []
        self.inside: list[tuple[str, str, str]] = []
        self.requests: list[tuple[str, str, int]] = []
        self.lock = threading.Lock()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        with self.lock:  # one window at a time
            self.outside += self.witness.drain()
            response = self.inner.handle_request(request)
            response.read()
            path = request.url.path
            self.inside += [(path, *event) for event in self.witness.drain()]
            self.requests.append((request.method, path, response.status_code))
        return response

    def close(self) -> None:
        self.inner.close()


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=T", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        timeout=30,
    )


def host_project(folder: Path) -> Path:
    """The agent host's working directory: a repository on BRANCH with a modified file."""
    project = folder / "project"
    project.mkdir(parents=True)
    (project / "AGENTS.md").write_text(RULES)
    (project / "app.py").write_text("print('hello')\n")
    git(project, "init", "--quiet", f"--initial-branch={BRANCH}")
    git(project, "add", "-A")
    git(project, "commit", "--quiet", "-m", "first")
    (project / "app.py").write_text("print('hello, world')\n")
    return project


def on_the_host(project: Path) -> str | None:
    """What the core renders for TEMPLATE in ``project``, on this machine: what the
    host must get."""
    context = ResolveContext(
        cwd=str(project), options=ResolverOptions(allowed_roots=(str(project),))
    )
    return core_resolve(engine.compile(TEMPLATE), context, default_registry()).prompt


class Audited:
    """A RealServer whose process runs tests.client.audited_settings."""

    def __init__(self, folder: Path) -> None:
        self.real = RealServer(folder / "server")
        self.log = folder / "server-audit.log"
        self.real.manage(
            "shell",
            "-c",
            "from sysprompt.prompts.services import template_save; "
            f"template_save(text={TEMPLATE!r})",
        )
        self.real.env.update(
            {
                "DJANGO_SETTINGS_MODULE": "tests.client.audited_settings",
                "SYSPROMPT_TEST_AUDIT_LOG": str(self.log),
            }
        )

    def start(self, *, server_resolves: str | None, allowed_roots: str) -> None:
        self.real.stop()
        self.log.write_text("")
        self.real.env["SYSPROMPT_ALLOWED_ROOTS"] = allowed_roots
        if server_resolves is None:
            self.real.env.pop("SYSPROMPT_SERVER_RESOLVES", None)
        else:
            self.real.env["SYSPROMPT_SERVER_RESOLVES"] = server_resolves
        self.real.start()

    def logged(self) -> list[str]:
        return self.log.read_text(encoding="utf-8", errors="surrogateescape").splitlines()


@pytest.fixture
def audited(tmp_path: Path) -> Iterator[Audited]:
    served = Audited(tmp_path)
    try:
        yield served
    finally:
        served.real.close()


@pytest.fixture
def host(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The host's directory: a temporary folder of its own, apart from the server's."""
    return host_project(tmp_path_factory.mktemp("agent-host"))


def mentions(lines: list[str], folder: Path) -> list[str]:
    names = {str(folder), os.path.realpath(folder)}
    return [line for line in lines if any(name in line for name in names)]


def test_central_server_opens_none_of_the_hosts_files(
    audited: Audited, host: Path, tmp_path: Path
) -> None:
    unreadable = tmp_path / "server-roots"
    unreadable.mkdir(mode=0)
    audited.start(server_resolves="", allowed_roots=str(unreadable))
    witness = Witness(host)
    windows = Windows(witness)

    try:
        with Client(
            audited.real.url, audited.real.token, resolve_locally=True, transport=windows
        ) as client:
            result = client.system_prompt("central-1", cwd=str(host), model="m")
            stored = client.get("central-1")
    finally:
        windows.outside += witness.drain()
        witness.close()

    # The host got its own prompt: its branch, its status, its AGENTS.md.
    assert result.text == on_the_host(host)
    assert result.text is not None
    assert f"on the branch {BRANCH}." in result.text
    assert "Uncommitted changes:\n M app.py\n" in result.text
    assert RULES in result.text
    assert stored.text == result.text and not result.is_fallback
    assert [r[:2] for r in windows.requests] == [
        ("GET", "/api/system-prompt/references"),
        ("POST", "/api/conversations/central-1/system-prompt/resolve"),
        ("GET", "/api/conversations/central-1/system-prompt"),
    ]
    # Witness 1, the kernel: nothing of the host's was opened while the server worked,
    assert windows.inside == []
    # while the witness saw the client read AGENTS.md, and libgit2 read .git, outside.
    opened = {path for path, _ in windows.outside}
    assert "AGENTS.md" in opened
    assert any(path == ".git" or path.startswith(".git/") for path in opened)
    # Witness 2, the server's audit hook: no path of the host's in its log, which holds
    # the server's own opens.
    logged = audited.logged()
    assert mentions(logged, host) == []
    assert any("/sysprompt/" in line for line in logged), "the audit hook recorded nothing"


def test_control_a_one_machine_server_is_seen_opening_the_hosts_files(
    audited: Audited, host: Path
) -> None:
    audited.start(server_resolves=None, allowed_roots=str(host.parent))
    witness = Witness(host)
    windows = Windows(witness)

    try:
        with Client(audited.real.url, audited.real.token, transport=windows) as client:
            result = client.system_prompt("one-machine", cwd=str(host), model="m")
    finally:
        witness.close()

    assert result.text == on_the_host(host)  # the server read them itself
    resolve = [event for event in windows.inside if event[0].endswith("/resolve")]
    assert "AGENTS.md" in {path for _, path, _ in resolve}, windows.inside
    assert any(line.startswith("open\t") for line in mentions(audited.logged(), host))
