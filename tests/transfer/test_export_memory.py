"""Eight concurrent exports of a large library, against a real gunicorn worker: the
export is streamed, so the worker's memory does not grow with the library.

gunicorn runs from the checkout with its production configuration (``gunicorn.conf.py``:
one gthread worker with eight threads here, DEBUG off) on a SQLite file holding 64
variants of 256 KB (16 MiB of text) and 32 named prompts whose working copies are 256 KB
each (8 MiB more). Before, each export held the library two or three times over (the
states, the files, the zip): eight at once took the worker about 250 MB past where it
started; while the prompts' texts were still read before the first byte was sent, eight
exports took it 111 MB past. The peak (``VmHWM`` from ``/proc``, reset through
``clear_refs``) must now stay under :data:`MAX_GROWTH_MB` above the worker's memory
after one export. ``benchmarks/export_memory.py`` measures the 62.5 MiB case.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import io
import os
import signal
import socket
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

REPO = Path(__file__).resolve().parents[2]
GUNICORN = str(Path(sys.executable).with_name("gunicorn"))
EXPORTS = 8
VARIANTS = 64
VARIANT_CHARACTERS = 262_000
PROMPTS = 32
MAX_GROWTH_MB = 100.0

FILL = """
import os
from django.contrib.auth import get_user_model
from django.utils import timezone
from rest_framework.authtoken.models import Token
from sysprompt.library.models import Fragment, FragmentVersion
from sysprompt.prompts.models import Prompt, TemplateVersion
now = timezone.now()
count, size = int(os.environ["FILL_COUNT"]), int(os.environ["FILL_CHARACTERS"])
for number in range(count):
    text = (f"Fragment {number}: keep changes small and run the tests. " * (size // 40))[:size]
    fragment = Fragment.objects.create(name=f"big/fragment-{number:03}", created_at=now)
    FragmentVersion.objects.create(fragment=fragment, provider="", model="", number=1,
                                   text=text, source="user", created_at=now)
for number in range(int(os.environ["FILL_PROMPTS"])):
    text = (f"Prompt {number}: answer the ticket, then close it. " * (size // 40))[:size]
    prompt = Prompt.objects.create(name=f"big/prompt-{number:03}", created_at=now,
                                   updated_at=now)
    TemplateVersion.objects.create(prompt=prompt, number=1000 + number, text=text,
                                   created_at=now)
author = get_user_model().objects.create_superuser("exporter", "", None)
print(Token.objects.create(user=author).key)
"""


@dataclass(frozen=True)
class Served:
    url: str
    token: str
    worker: int


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def _manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _worker(master: int) -> int:
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    assert len(children) == 1, children
    return int(children[0])


def _memory_mb(pid: int) -> tuple[float, float]:
    """(VmHWM, VmRSS) of ``pid`` in MB."""
    fields = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    return int(fields["VmHWM"].split()[0]) / 1000, int(fields["VmRSS"].split()[0]) / 1000


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("export-memory")
    port = _free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("SYSPROMPT_", "GUNICORN_"))},
        "DATABASE_URL": f"sqlite:///{folder / 'db.sqlite3'}",
        "SECRET_KEY": "export-memory-test-only",
        "DEBUG": "false",
        "SYSPROMPT_ALLOWED_ROOTS": str(folder),
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "WEB_CONCURRENCY": "1",
        "GUNICORN_THREADS": str(EXPORTS),
        "GUNICORN_ACCESS_LOG": "off",
        "LOG_LEVEL": "WARNING",
    }
    _manage(env, "migrate", "--noinput")
    fill = {
        "FILL_COUNT": str(VARIANTS),
        "FILL_CHARACTERS": str(VARIANT_CHARACTERS),
        "FILL_PROMPTS": str(PROMPTS),
    }
    token = _manage({**env, **fill}, "shell", "--no-imports", "-c", FILL).split()[-1]
    with (folder / "gunicorn.log").open("ab") as log:
        process = subprocess.Popen(
            [GUNICORN], cwd=REPO, env=env, stdout=log, stderr=log, start_new_session=True
        )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, (folder / "gunicorn.log").read_text()
            try:
                if httpx.get(f"{url}/api/health", headers=_auth(token)).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "gunicorn did not start"
            time.sleep(0.1)
        yield Served(url, token, _worker(process.pid))
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Token {token}"}


def _export(served: Served) -> tuple[int, int, str]:
    """(status, bytes, sha256) of one export, read to its end as it streams."""
    digest = hashlib.sha256()
    size = 0
    with httpx.stream(
        "GET", f"{served.url}/api/library/export", headers=_auth(served.token), timeout=300
    ) as response:
        for chunk in response.iter_raw():
            digest.update(chunk)
            size += len(chunk)
        return response.status_code, size, digest.hexdigest()


def test_export_eight_at_once_keeps_the_worker_small(served: Served) -> None:
    status, size, _ = _export(served)  # every module loaded: the worker's own size
    assert status == 200 and size > 0
    _, before = _memory_mb(served.worker)
    Path(f"/proc/{served.worker}/clear_refs").write_text("5")  # reset the peak

    with concurrent.futures.ThreadPoolExecutor(EXPORTS) as pool:
        answers = list(pool.map(lambda _: _export(served), range(EXPORTS)))

    peak, _ = _memory_mb(served.worker)
    assert {answer[0] for answer in answers} == {200}
    assert len({answer[2] for answer in answers}) == 1  # the same bytes, eight times
    assert peak - before < MAX_GROWTH_MB, (before, peak)
    whole = httpx.get(
        f"{served.url}/api/library/export", headers=_auth(served.token), timeout=300
    ).content
    sizes = {
        info.filename: info.file_size for info in zipfile.ZipFile(io.BytesIO(whole)).infolist()
    }
    prompts = [path for path in sizes if path.startswith("prompts/big/")]
    assert len(prompts) == PROMPTS
    assert {sizes[path] for path in prompts} == {VARIANT_CHARACTERS}
