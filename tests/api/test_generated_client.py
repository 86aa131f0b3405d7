"""A client generated from the live OpenAPI schema works: openapi-python-client (a common
way to consume an OpenAPI document; a pinned dev dependency) generates a package from
the schema a real server serves, **without a warning**, and the package, imported,
runs turns against that server.

The server is a real ``manage.py runserver`` process on a SQLite file of its own
(``tests/client/served.py``), shared by the module. Through the generated code: a first
turn (201) and a later turn (200, the same bytes) of ``resolve`` with an override object,
a 400 parsed as field errors, ``construct`` with a preset and with a string override
(the union the generator once could not process), and the zip endpoints (export, and
import of what was exported) as binary bodies.
"""

from __future__ import annotations

import importlib
import io
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.client.served import RealServer

PACKAGE = "sysprompt_generated_api_client"
CREATE_AUTHOR = (
    "from django.contrib.auth.models import User\n"
    "from rest_framework.authtoken.models import Token\n"
    "user = User.objects.create_superuser('generated-author', '', None)\n"
    "print(Token.objects.create(user=user).key)\n"
)


@dataclass(frozen=True)
class Served:
    server: RealServer
    author_token: str


@dataclass(frozen=True)
class Generated:
    """The generated package, imported: ``module("api.conversations.resolve")``."""

    output: str  # what the generator printed
    returncode: int
    folder: Path

    def module(self, name: str) -> Any:
        return importlib.import_module(f"{PACKAGE}.{name}")

    def client(self, served: Served, *, author: bool = False) -> Any:
        token = served.author_token if author else served.server.token
        return self.module("client").AuthenticatedClient(
            base_url=served.server.url, token=token, prefix="Token", raise_on_unexpected_status=True
        )


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    server = RealServer(tmp_path_factory.mktemp("generated-client-server"))
    try:
        author = server.manage("shell", "-c", CREATE_AUTHOR).strip().splitlines()[-1]
        server.start()
        yield Served(server, author)
    finally:
        server.close()


@pytest.fixture(scope="module")
def generated(served: Served, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Generated]:
    """Fetch the schema the server serves, generate a client from it, import it."""
    folder = tmp_path_factory.mktemp("generated-client")
    answer = httpx.get(
        f"{served.server.url}/api/schema/",
        params={"format": "json"},
        headers={"Authorization": f"Token {served.server.token}"},
        timeout=60,
    )
    assert answer.status_code == 200, answer.text
    document = folder / "openapi.json"
    document.write_bytes(answer.content)
    bin_dir = str(Path(sys.executable).parent)  # ruff, for the generator's own formatting
    done = subprocess.run(
        [sys.executable, "-m", "openapi_python_client", "generate", "--meta", "none"]
        + ["--path", str(document), "--output-path", str(folder / PACKAGE)],
        cwd=folder,
        env={**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    sys.path.insert(0, str(folder))
    try:
        yield Generated(done.stdout + done.stderr, done.returncode, folder / PACKAGE)
    finally:
        sys.path.remove(str(folder))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
            del sys.modules[name]


def test_generated_client_is_made_without_a_warning(generated: Generated) -> None:
    assert generated.returncode == 0, generated.output
    assert generated.output.strip() == f"Generating {generated.folder}"
    for operation in (
        "conversations/resolve",
        "conversations/construct",
        "library/export_library",
        "library/import_library",
        "agent_hosts/set_agent_host_override",
    ):
        assert (generated.folder / "api" / f"{operation}.py").is_file(), operation


def test_generated_client_first_turn_then_later_turn(generated: Generated, served: Served) -> None:
    models = generated.module("models")
    resolve = generated.module("api.conversations.resolve")
    override = models.OverrideText(content="Answer briefly.", strategy=models.StrategyEnum.APPEND)
    body = models.ResolveInput(cwd=served.server.cwd, model="gen-model", override=override)

    with generated.client(served) as client:
        first = resolve.sync_detailed("gen-turns", client=client, body=body)
        later = resolve.sync_detailed("gen-turns", client=client, body=body)

    assert first.status_code == 201
    assert isinstance(first.parsed, models.ResolvedConversationPrompt)
    prompt = first.parsed.system_prompt
    assert prompt.startswith("You are a helpful coding assistant.\nReal server.\n")
    assert prompt.endswith("\n\nAnswer briefly.")
    assert isinstance(first.parsed.override, models.OverrideText)
    assert first.parsed.override.content == "Answer briefly."
    assert later.status_code == 200
    assert (later.parsed.system_prompt, later.parsed.sha256) == (prompt, first.parsed.sha256)


def test_generated_client_parses_a_400(generated: Generated, served: Served) -> None:
    models = generated.module("models")
    resolve = generated.module("api.conversations.resolve")
    body = models.ResolveInput(cwd="not/absolute")

    with generated.client(served) as client:
        refused = resolve.sync_detailed("gen-refused", client=client, body=body)

    assert refused.status_code == 400
    assert isinstance(refused.parsed, models.FieldErrors)
    assert "cwd" in refused.parsed.additional_properties


def test_generated_client_construct_with_a_preset_and_a_string_override(
    generated: Generated, served: Served
) -> None:
    models = generated.module("models")
    save = generated.module("api.library.save_fragment_variant")
    construct = generated.module("api.conversations.construct")
    persona = models.FragmentVariantInput.from_dict(
        {"text": "You are [var:who].", "defaults": {"who": "a careful reviewer"}}
    )
    preset = models.OverridePreset.from_dict(
        {"preset": "persona", "variables": {"who": "a terse reviewer"}, "strategy": "prepend"}
    )
    cwd = served.server.cwd

    with generated.client(served, author=True) as author:
        saved = save.sync_detailed("persona", client=author, body=persona)
    with generated.client(served) as client:
        with_preset = construct.sync_detailed(
            "gen-construct", client=client, body=models.ConversationInput(cwd=cwd, override=preset)
        )
        with_text = construct.sync_detailed(
            "gen-construct", client=client, body=models.ConversationInput(cwd=cwd, override="Hi.")
        )

    assert saved.status_code == 201, saved.content
    assert with_preset.status_code == 201
    assert with_preset.parsed.system_prompt.startswith("You are a terse reviewer.\n\n")
    assert isinstance(with_preset.parsed.override, models.OverridePreset)
    assert with_text.status_code == 200
    assert with_text.parsed.override == "Hi."
    assert with_text.parsed.system_prompt.endswith("\n\nHi.")


def test_generated_client_exports_and_imports_the_zip(generated: Generated, served: Served) -> None:
    types = generated.module("types")
    models = generated.module("models")
    export = generated.module("api.library.export_library")
    import_ = generated.module("api.library.import_library")

    with generated.client(served, author=True) as author:
        exported = export.sync_detailed(client=author)
        archive = exported.parsed.payload.read()
        dry = import_.sync_detailed(
            client=author,
            body=types.File(payload=io.BytesIO(archive), file_name="library.zip"),
            dry_run=models.ImportLibraryDryRun.VALUE_1,
        )

    assert exported.status_code == 200
    assert archive.startswith(b"PK")
    assert dry.status_code == 200, dry.content
    assert isinstance(dry.parsed, models.ImportReport)
    assert dry.parsed.applied is False
    assert "system-prompt.md" in {item.path for item in dry.parsed.items}


def test_generated_client_addresses_a_prompt_whose_name_has_a_slash(
    generated: Generated, served: Served
) -> None:
    models = generated.module("models")
    create = generated.module("api.prompts.create_prompt")
    get = generated.module("api.prompts.get_prompt")
    rename = generated.module("api.prompts.rename_prompt")

    with generated.client(served, author=True) as author:
        made = create.sync_detailed(
            client=author,
            body=models.PromptCreateInput(name="support/triage", template="You triage."),
        )
        got = get.sync_detailed("support/triage", client=author)
        renamed = rename.sync_detailed(
            "support/triage", client=author, body=models.PromptRenameInput(name="support/sorter")
        )
        by_alias = get.sync_detailed("support/triage", client=author)

    assert made.status_code == 201, made.content
    assert isinstance(got.parsed, models.Prompt)
    assert got.parsed.name == "support/triage"
    assert got.parsed.version >= 1
    assert renamed.status_code == 200, renamed.content
    assert by_alias.parsed.name == "support/sorter"
    assert by_alias.parsed.aliases == ["support/triage"]
