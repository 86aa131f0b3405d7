"""The library export and import carry every prompt (named-prompts §6, §7): each prompt
but ``default`` as ``prompts/<name>.md`` (its working copy) with ``prompts.json``
(description, tags, compress, archived), ``default`` in today's layout; an import
restores them (a new prompt, or a new version of its working copy), checks each name
with the rule before it is used, and refuses ``..``, absolute and backslash names with a
400 that writes nothing."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from rest_framework.test import APIClient

from sysprompt.events.models import AuditRecord
from sysprompt.prompts.models import Prompt, TemplateVersion
from sysprompt.prompts.selectors import template_current
from sysprompt.prompts.services import template_save
from sysprompt.transfer.services import export_files
from tests.api.library_support import EXPORT, put_fragment
from tests.api.test_library_transfer import actions, body, files_of, send, zip_of

pytestmark = pytest.mark.django_db


def named(name: str, **fields: object) -> Prompt:
    now = timezone.now()
    return Prompt.objects.create(name=name, created_at=now, updated_at=now, **fields)


@pytest.fixture
def two_prompts(author: User, author_client: APIClient) -> None:
    """default, support/triage (described, tagged, compressed) and coding/reviewer."""
    template_save(text="Default root [fragment:core]", author=author)
    put_fragment(author_client, "core", "core default\n")
    triage = named("support/triage", description="First answers", tags=["support", "tier-1"])
    template_save(text="Triage v1", author=author, prompt=triage)
    template_save(text="Triage v2 [fragment:core]", compress=True, author=author, prompt=triage)
    reviewer = named("coding/reviewer", archived=True)
    template_save(text="Review the diff.", author=author, prompt=reviewer)


def _written() -> tuple[object, ...]:
    return (
        list(TemplateVersion.objects.order_by("number").values("prompt__name", "text")),
        list(Prompt.objects.order_by("name").values("name", "description", "tags", "archived")),
    )


def test_export_carries_every_prompt_beside_the_default_layout(
    author_client: APIClient, two_prompts: None
) -> None:
    files = files_of(body(author_client.get(EXPORT)))

    assert files["system-prompt.md"] == b"Default root [fragment:core]"
    assert files["core.md"] == b"core default\n"
    assert files["prompts/support/triage.md"] == b"Triage v2 [fragment:core]"
    assert files["prompts/coding/reviewer.md"] == b"Review the diff."
    assert json.loads(files["prompts.json"]) == {
        "prompts": {
            "coding/reviewer": {
                "description": "",
                "tags": [],
                "compress": False,
                "archived": True,
            },
            "support/triage": {
                "description": "First answers",
                "tags": ["support", "tier-1"],
                "compress": True,
                "archived": False,
            },
        }
    }


def test_export_of_default_alone_is_todays_layout(author: User) -> None:
    template_save(text="Only default", author=author)

    assert sorted(export_files()) == ["sysprompt.json", "system-prompt.md"]


def test_export_and_import_round_trip_two_prompts(
    author_client: APIClient, two_prompts: None
) -> None:
    exported = body(author_client.get(EXPORT))
    same = send(author_client, exported)
    TemplateVersion.objects.all().delete()
    Prompt.objects.exclude(name="default").delete()

    restored = send(author_client, exported)

    assert same.status_code == 200
    assert set(actions(same).values()) == {"unchanged"}
    assert restored.status_code == 200, restored.json()
    by_path = {item["path"]: item for item in restored.json()["items"]}
    assert by_path["prompts/support/triage.md"]["action"] == "created"
    assert by_path["prompts/support/triage.md"]["prompt"] == "support/triage"
    assert by_path["prompts/support/triage.md"]["variant"] is None
    assert by_path["system-prompt.md"]["prompt"] is None
    triage = Prompt.objects.get(name="support/triage")
    assert (triage.description, triage.tags, triage.archived) == (
        "First answers",
        ["support", "tier-1"],
        False,
    )
    assert Prompt.objects.get(name="coding/reviewer").archived
    current = template_current(prompt=triage)
    assert (current.text, current.compress) == ("Triage v2 [fragment:core]", True)
    assert template_current().text == "Default root [fragment:core]"
    again = files_of(body(author_client.get(EXPORT)))
    assert again == files_of(exported)


def test_import_changes_a_prompt_with_a_new_version_of_its_working_copy(
    author: User, author_client: APIClient, two_prompts: None
) -> None:
    files = files_of(body(author_client.get(EXPORT)))
    files["prompts/support/triage.md"] = b"Triage v3"
    settings = json.loads(files["prompts.json"])
    settings["prompts"]["support/triage"]["tags"] = ["support"]
    files["prompts.json"] = json.dumps(settings).encode()
    versions = TemplateVersion.objects.count()

    answer = send(author_client, zip_of(dict(files)))

    assert answer.status_code == 200, answer.json()
    assert actions(answer)["prompts/support/triage.md"] == "changed"
    assert actions(answer)["prompts/coding/reviewer.md"] == "unchanged"
    triage = Prompt.objects.get(name="support/triage")
    assert template_current(prompt=triage).text == "Triage v3"
    assert triage.tags == ["support"]
    assert TemplateVersion.objects.count() == versions + 1
    saved = AuditRecord.objects.filter(action="template.saved").order_by("-id").first()
    assert saved is not None and saved.prompt == "support/triage"


def test_import_records_prompts_created_archived_and_changed_in_the_audit_log(
    author: User, author_client: APIClient, two_prompts: None
) -> None:
    files = files_of(body(author_client.get(EXPORT)))
    files["prompts/billing/refunds.md"] = b"Refunds v1"
    settings = json.loads(files["prompts.json"])
    settings["prompts"]["billing/refunds"] = {"description": "Money back"}
    settings["prompts"]["support/triage"]["archived"] = True
    settings["prompts"]["coding/reviewer"]["description"] = "Reads diffs"
    files["prompts.json"] = json.dumps(settings).encode()
    before = AuditRecord.objects.order_by("-id").values_list("id", flat=True).first() or 0

    answer = send(author_client, zip_of(dict(files)))

    assert answer.status_code == 200, answer.json()
    records = {
        (record.action, record.prompt): record
        for record in AuditRecord.objects.filter(id__gt=before, action__startswith="prompt.")
    }
    assert set(records) == {
        ("prompt.created", "billing/refunds"),
        ("prompt.archived", "support/triage"),
        ("prompt.changed", "coding/reviewer"),
    }
    version = TemplateVersion.objects.get(prompt__name="billing/refunds").number
    created = records[("prompt.created", "billing/refunds")]
    assert created.summary == f"created prompt billing/refunds with template version {version}"
    assert created.actor == author.get_username()
    changed = records[("prompt.changed", "coding/reviewer")]
    assert changed.summary == "changed the description of prompt coding/reviewer"


@pytest.mark.parametrize(
    "path",
    [
        "prompts/../x.md",
        "prompts/../../etc/passwd.md",
        "/prompts/x.md",
        "/etc/x.md",
        "prompts\\x.md",
        "prompts/a\\b.md",
        "prompts/Bad Name.md",
        "prompts/./x.md",
        "prompts/a//b.md",
        "prompts/default.md",
    ],
)
def test_import_refuses_a_prompt_path_that_is_no_name_and_writes_nothing(
    author_client: APIClient, two_prompts: None, path: str
) -> None:
    files = files_of(body(author_client.get(EXPORT)))
    files["prompts/support/triage.md"] = b"Triage changed"
    before = _written()

    answer = send(author_client, _zip_with(files, path, b"Sneaky"))

    assert answer.status_code == 400
    assert answer.json()["applied"] is False
    refused = [item for item in answer.json()["items"] if item["action"] == "refused"]
    assert [item["path"] for item in refused] == [path]
    assert _written() == before


def test_import_refuses_prompt_settings_that_break_the_rule_and_writes_nothing(
    author_client: APIClient, two_prompts: None
) -> None:
    files = files_of(body(author_client.get(EXPORT)))
    files["prompts/support/triage.md"] = b"Triage changed"
    files["prompts.json"] = json.dumps(
        {"prompts": {"../x": {}, "support/triage": {"tags": "one"}}}
    ).encode()
    before = _written()

    answer = send(author_client, zip_of(dict(files)))

    assert answer.status_code == 400
    reasons = [item["reason"] for item in answer.json()["items"] if item["action"] == "refused"]
    assert len(reasons) == 2
    assert _written() == before


def test_import_without_prompts_json_reads_prompts_folder_as_fragments(
    author_client: APIClient,
) -> None:
    answer = send(author_client, zip_of({"system-prompt.md": "Root", "prompts/x.md": "X"}))

    assert answer.status_code == 200, answer.json()
    assert {item["path"]: item["variant"] for item in answer.json()["items"]}["prompts/x.md"] == {
        "fragment": "prompts/x",
        "provider": None,
        "model": None,
    }
    assert not Prompt.objects.filter(name="x").exists()


def _zip_with(files: dict[str, bytes], path: str, content: bytes) -> bytes:
    """A zip of ``files`` and one more member named exactly ``path`` (no normalising)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        archive.writestr(zipfile.ZipInfo(path), content)
    return buffer.getvalue()
