"""The catalog of prompts: GET/POST /api/prompts (filters, cursor pages), one prompt
(GET, PATCH, DELETE), rename with aliases, archive, duplicate, folder restrictions —
with their 400, 403, 404 and 409, each write audited and nothing written by a refusal."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.utils import timezone
from rest_framework.test import APIClient

from sysprompt.events.models import AuditRecord
from sysprompt.prompts import services as prompts
from sysprompt.prompts.catalog import prompt_get
from sysprompt.prompts.models import ConversationPrompt, Prompt, PromptAlias, TemplateVersion
from sysprompt.releases.models import Label, TestContext
from tests.conftest import token_client
from tests.releases.support import user


def create(client: APIClient, name: str, **fields: Any) -> Any:
    return client.post("/api/prompts", {"name": name, **fields}, format="json")


def names(page: Any) -> list[str]:
    return [row["name"] for row in page.json()["results"]]


def audit(action: str) -> list[AuditRecord]:
    return list(AuditRecord.objects.filter(action=action).order_by("id"))


def test_prompts_create_answers_201_with_its_first_version(author_client: APIClient) -> None:
    made = create(
        author_client,
        "support/triage",
        description="Sorts tickets.",
        tags=["support", "tier-1"],
        template="You triage tickets.",
    )

    assert made.status_code == 201, made.content
    body = made.json()
    assert body["name"] == "support/triage"
    assert body["description"] == "Sorts tickets."
    assert body["tags"] == ["support", "tier-1"]
    assert body["aliases"] == [] and body["editor_groups"] == [] and body["labels"] == {}
    prompt = Prompt.objects.get(name="support/triage")
    assert body["id"] == prompt.pk
    version = TemplateVersion.objects.get(prompt=prompt)
    assert version.text == "You triage tickets." and body["version"] == version.number
    (record,) = audit("prompt.created")
    assert record.prompt == "support/triage" and record.actor == "author"


def test_prompts_create_without_template_starts_at_version_0(author_client: APIClient) -> None:
    made = create(author_client, "coding/reviewer")

    assert made.status_code == 201
    assert made.json()["version"] == 0


@pytest.mark.parametrize(
    "name", ["Support", "a//b", "/a", "a/", "-a", "a/-b", "x" * 65, "a b", "", 3]
)
def test_prompts_create_bad_name_is_400_naming_it(author_client: APIClient, name: object) -> None:
    refused = create(author_client, name)  # type: ignore[arg-type]

    assert refused.status_code == 400
    assert "name" in refused.json()
    assert not Prompt.objects.exclude(name="default").exists()


def test_prompts_create_taken_name_or_alias_is_409(author_client: APIClient) -> None:
    create(author_client, "a/one")
    author_client.post("/api/prompts/a/one/-/rename", {"name": "a/two"}, format="json")

    taken = create(author_client, "a/two")
    alias = create(author_client, "a/one")

    assert taken.status_code == 409 and "exists" in taken.json()["detail"]
    assert alias.status_code == 409 and "a/two" in alias.json()["detail"]
    assert Prompt.objects.filter(name__startswith="a/").count() == 1


def test_prompts_need_the_authors_permission(agent_client: APIClient) -> None:
    assert agent_client.get("/api/prompts").status_code == 403
    assert create(agent_client, "x").status_code == 403
    assert not Prompt.objects.filter(name="x").exists()


def test_prompts_list_filters_by_folder_search_tag_and_label(author_client: APIClient) -> None:
    create(author_client, "support/triage", tags=["tickets"])
    create(author_client, "support/refunds", description="Money back.")
    create(author_client, "supportive/coach")
    create(author_client, "coding/reviewer", tags=["Code"])
    reviewer = Prompt.objects.get(name="coding/reviewer")
    now = timezone.now()
    Label.objects.create(
        prompt=reviewer, name="staging", target="latest", created_at=now, updated_at=now
    )

    everything = author_client.get("/api/prompts")
    support = author_client.get("/api/prompts", {"folder": "support"})
    support_slash = author_client.get("/api/prompts", {"folder": "support/"})
    money = author_client.get("/api/prompts", {"search": "MONEY"})
    by_tag_text = author_client.get("/api/prompts", {"search": "ticket"})
    tagged = author_client.get("/api/prompts", {"tag": "tickets"})
    not_a_tag = author_client.get("/api/prompts", {"tag": "ticket"})
    labelled = author_client.get("/api/prompts", {"label": "staging"})

    assert names(everything) == [
        "coding/reviewer",
        "default",
        "support/refunds",
        "support/triage",
        "supportive/coach",
    ]
    assert names(support) == names(support_slash) == ["support/refunds", "support/triage"]
    assert names(money) == ["support/refunds"]
    assert names(by_tag_text) == ["support/triage"]
    assert names(tagged) == ["support/triage"]
    assert names(not_a_tag) == []
    assert names(labelled) == ["coding/reviewer"]
    assert labelled.json()["results"][0]["labels"] == {"staging": "latest"}


def test_prompts_list_bad_folder_is_400(author_client: APIClient) -> None:
    refused = author_client.get("/api/prompts", {"folder": "Bad Folder"})

    assert refused.status_code == 400
    assert "folder" in refused.json()


def test_prompts_list_pages_with_a_cursor(author_client: APIClient) -> None:
    for index in range(7):
        create(author_client, f"p/{index}")

    first = author_client.get("/api/prompts", {"folder": "p", "page_size": "3"}).json()
    second = author_client.get(first["next"]).json()
    third = author_client.get(second["next"]).json()
    back = author_client.get(third["previous"]).json()

    pages = [first, second, third]
    assert [r["name"] for page in pages for r in page["results"]] == [f"p/{i}" for i in range(7)]
    assert third["next"] is None
    assert [r["name"] for r in back["results"]] == ["p/3", "p/4", "p/5"]


def test_prompts_list_hides_archived_unless_asked(author_client: APIClient) -> None:
    create(author_client, "old")
    author_client.post("/api/prompts/old/-/archive")

    assert names(author_client.get("/api/prompts")) == ["default"]
    assert names(author_client.get("/api/prompts", {"archived": "true"})) == ["default", "old"]


def test_prompt_get_by_name_and_by_alias(author_client: APIClient) -> None:
    create(author_client, "support/triage")
    author_client.post(
        "/api/prompts/support/triage/-/rename", {"name": "support/sorter"}, format="json"
    )

    by_name = author_client.get("/api/prompts/support/sorter")
    by_alias = author_client.get("/api/prompts/support/triage")
    unknown = author_client.get("/api/prompts/support/nothing")
    bad = author_client.get("/api/prompts/Support")

    assert by_name.status_code == by_alias.status_code == 200
    assert by_alias.json() == by_name.json()
    assert by_name.json()["aliases"] == ["support/triage"]
    assert unknown.status_code == 404 and "support/nothing" in unknown.json()["detail"]
    assert bad.status_code == 400


def test_prompt_get_percent_encoded_slash(author_client: APIClient) -> None:
    create(author_client, "support/triage")

    answer = author_client.get("/api/prompts/support%2Ftriage")

    assert answer.status_code == 200
    assert answer.json()["name"] == "support/triage"


def test_prompt_patch_changes_what_is_given(author_client: APIClient) -> None:
    create(author_client, "a", description="Before.", tags=["x"])

    changed = author_client.patch("/api/prompts/a", {"tags": ["y", "y", "z"]}, format="json")

    assert changed.status_code == 200
    assert changed.json()["description"] == "Before."
    assert changed.json()["tags"] == ["y", "z"]
    (record,) = audit("prompt.changed")
    assert record.prompt == "a" and "tags" in record.summary


def test_prompt_patch_editor_groups_needs_the_restrict_permission(
    author: User, author_client: APIClient
) -> None:
    create(author_client, "a")
    Group.objects.create(name="support-team")

    refused = author_client.patch(
        "/api/prompts/a", {"editor_groups": ["support-team"]}, format="json"
    )

    assert refused.status_code == 403
    assert "change_folderrestriction" in refused.json()["detail"]
    assert not Prompt.objects.get(name="a").editor_groups.exists()


def test_prompt_patch_unknown_group_is_400(db: None) -> None:
    boss = User.objects.create_superuser("boss", "", None)
    client = token_client(boss)
    create(client, "a")

    refused = client.patch("/api/prompts/a", {"editor_groups": ["nobody"]}, format="json")

    assert refused.status_code == 400
    assert "editor_groups" in refused.json()


def test_prompt_restriction_refuses_non_members_and_audits(author: User) -> None:
    boss = User.objects.create_superuser("boss", "", None)
    boss_client = token_client(boss)
    team = Group.objects.create(name="support-team")
    create(boss_client, "support/triage")
    restricted = boss_client.put(
        "/api/folders/support", {"editor_groups": ["support-team"]}, format="json"
    )
    author_client = token_client(author)

    refused = author_client.post("/api/prompts/support/triage/-/archive")
    refused_new = create(author_client, "support/new")
    reads = author_client.get("/api/prompts/support/triage")
    author.groups.add(team)
    allowed = author_client.post("/api/prompts/support/triage/-/archive")

    assert restricted.status_code == 200
    assert restricted.json() == {"folder": "support/", "editor_groups": ["support-team"]}
    assert refused.status_code == 403 and "support-team" in refused.json()["detail"]
    assert refused_new.status_code == 403
    assert reads.status_code == 200 and reads.json()["restricted_by"] == ["support/"]
    assert allowed.status_code == 200 and allowed.json()["archived"] is True
    refusals = audit("prompt.refused")
    assert [(r.actor, r.prompt) for r in refusals] == [
        ("author", "support/triage"),
        ("author", "support/new"),
    ]
    assert not Prompt.objects.filter(name="support/new").exists()
    (folder,) = audit("folder.restricted")
    assert folder.actor == "boss"


def test_folder_get_answers_its_groups(author_client: APIClient) -> None:
    answer = author_client.get("/api/folders/support/team")

    assert answer.status_code == 200
    assert answer.json() == {"folder": "support/team/", "editor_groups": []}


def test_folder_put_needs_the_restrict_permission(author: User) -> None:
    Group.objects.create(name="g")
    client = token_client(author)

    refused = client.put("/api/folders/support", {"editor_groups": ["g"]}, format="json")
    author.user_permissions.add(
        *user("x", "sysprompt.change_folderrestriction").user_permissions.all()
    )
    allowed = token_client(User.objects.get(pk=author.pk)).put(
        "/api/folders/support", {"editor_groups": ["g"]}, format="json"
    )

    assert refused.status_code == 403
    assert allowed.status_code == 200


def test_prompt_rename_keeps_id_and_leaves_an_alias(author_client: APIClient) -> None:
    made = create(author_client, "support/triage").json()

    renamed = author_client.post(
        "/api/prompts/support/triage/-/rename", {"name": "support/sorter"}, format="json"
    )

    assert renamed.status_code == 200
    assert renamed.json()["id"] == made["id"]
    assert renamed.json()["aliases"] == ["support/triage"]
    assert prompt_get("support/triage").pk == made["id"]
    (record,) = audit("prompt.renamed")
    assert record.prompt == "support/sorter" and "support/triage" in record.summary


def test_prompt_rename_onto_taken_name_or_alias_is_409(author_client: APIClient) -> None:
    create(author_client, "a")
    create(author_client, "b")
    create(author_client, "c")
    author_client.post("/api/prompts/c/-/rename", {"name": "c2"}, format="json")

    onto_name = author_client.post("/api/prompts/a/-/rename", {"name": "b"}, format="json")
    onto_alias = author_client.post("/api/prompts/a/-/rename", {"name": "c"}, format="json")
    onto_default = author_client.post("/api/prompts/a/-/rename", {"name": "default"}, format="json")
    of_default = author_client.post("/api/prompts/default/-/rename", {"name": "z"}, format="json")

    assert [r.status_code for r in (onto_name, onto_alias, onto_default, of_default)] == [409] * 4
    assert Prompt.objects.filter(name="a").exists()


def test_prompt_rename_back_to_own_alias_removes_it(author_client: APIClient) -> None:
    create(author_client, "a")
    author_client.post("/api/prompts/a/-/rename", {"name": "b"}, format="json")

    back = author_client.post("/api/prompts/b/-/rename", {"name": "a"}, format="json")

    assert back.status_code == 200
    assert back.json()["aliases"] == ["b"]
    assert list(PromptAlias.objects.values_list("name", flat=True)) == ["b"]


def test_prompt_new_prompt_may_take_no_alias_but_rename_frees_nothing(
    author_client: APIClient,
) -> None:
    create(author_client, "a")
    author_client.post("/api/prompts/a/-/rename", {"name": "b"}, format="json")

    assert create(author_client, "a").status_code == 409


def test_prompt_archive_and_unarchive(author_client: APIClient) -> None:
    create(author_client, "a")

    archived = author_client.post("/api/prompts/a/-/archive")
    again = author_client.post("/api/prompts/a/-/archive")
    unarchived = author_client.post("/api/prompts/a/-/unarchive")
    default = author_client.post("/api/prompts/default/-/archive")

    assert archived.json()["archived"] is True and again.status_code == 200
    assert unarchived.json()["archived"] is False
    assert default.status_code == 409
    assert [r.action for r in AuditRecord.objects.filter(action__startswith="prompt.")] == [
        "prompt.unarchived",
        "prompt.archived",
        "prompt.created",
    ]


def test_prompt_duplicate_copies_working_copy_and_on_request_contexts(
    author: User, author_client: APIClient
) -> None:
    create(author_client, "a", description="D.", tags=["t"], template="Version one.")
    source = Prompt.objects.get(name="a")
    now = timezone.now()
    TestContext.objects.create(
        prompt=source, name="ctx", cwd="/tmp", created_at=now, updated_at=now
    )

    plain = author_client.post("/api/prompts/a/-/duplicate", {"name": "b"}, format="json")
    full = author_client.post(
        "/api/prompts/a/-/duplicate", {"name": "c", "test_contexts": True}, format="json"
    )
    taken = author_client.post("/api/prompts/a/-/duplicate", {"name": "b"}, format="json")

    assert plain.status_code == full.status_code == 201
    assert plain.json()["description"] == "D." and plain.json()["tags"] == ["t"]
    assert TemplateVersion.objects.get(prompt__name="b").text == "Version one."
    assert not TestContext.objects.filter(prompt__name="b").exists()
    assert TestContext.objects.filter(prompt__name="c", name="ctx").exists()
    assert taken.status_code == 409
    assert "1 test context" in audit("prompt.duplicated")[1].summary


def test_prompt_delete_only_without_conversations(author_client: APIClient) -> None:
    create(author_client, "a", template="Hi.")
    create(author_client, "b")
    b = Prompt.objects.get(name="b")
    prompts.template_save(text="x")  # default's; not b's
    now = timezone.now()
    ConversationPrompt.objects.create(
        conversation_id="c1", prompt=b, cwd="/tmp", constructed_at=now, created_at=now
    )

    deleted = author_client.delete("/api/prompts/a")
    kept = author_client.delete("/api/prompts/b")
    default = author_client.delete("/api/prompts/default")

    assert deleted.status_code == 204
    assert not Prompt.objects.filter(name="a").exists()
    assert kept.status_code == 409 and "1 conversation" in kept.json()["detail"]
    assert default.status_code == 409
    (record,) = audit("prompt.deleted")
    assert record.prompt == "a"


def test_prompts_catalog_need_author_for_writes_before_validation(
    agent_client: APIClient,
) -> None:
    refused = agent_client.post("/api/prompts/default/-/rename", {"name": 3}, format="json")

    assert refused.status_code == 403


def test_prompt_routes_refuse_bad_names(author_client: APIClient) -> None:
    assert author_client.get("/api/prompts/UPPER/-/rename").status_code in (400, 405)
    assert author_client.post("/api/prompts/UPPER/-/archive").status_code == 400
    assert author_client.post("/api/prompts/nothing/-/archive").status_code == 404
