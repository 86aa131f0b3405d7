"""Services and selectors against the real database: templates, conversations, checks."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from django.apps import apps
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext
from pytest_django import Settings

from sysprompt import errors
from sysprompt.conf import DEFAULT_COMPACTION_INSTRUCTIONS, DEFAULT_TEMPLATE
from sysprompt.errors import InvalidInput, TemplateTooLarge, TemplateVersionImmutable
from sysprompt.prompts import rendering, selectors, services, validation
from sysprompt.prompts.models import ConversationPrompt, TemplateVersion
from sysprompt_core.template.cache import ParsedTemplates

pytestmark = pytest.mark.django_db


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.fixture(autouse=True)
def host(db: None) -> User:
    """The agent host whose calls store this module's conversations."""
    return User.objects.create_user("host")


def owner() -> User:
    return User.objects.get(username="host")


def resolve(workdir: Path, conversation_id: str = "c1", model: str = "") -> services.Stored:
    return services.conversation_prompt_resolve(
        conversation_id=conversation_id, cwd=str(workdir), model=model, user=owner()
    )


# --- the template --------------------------------------------------------------------


def test_template_current_is_default_before_any_save() -> None:
    current = selectors.template_current()

    assert (current.text, current.version, current.is_default) == (DEFAULT_TEMPLATE, 0, True)
    assert current.updated_at is None


def test_template_current_default_follows_setting(settings: Settings) -> None:
    settings.SYSPROMPT = {"DEFAULT_TEMPLATE": "Hi [prompt:model]"}

    assert selectors.template_current().text == "Hi [prompt:model]"


@pytest.mark.parametrize(
    "text",
    ["", "  padded  \n", "windows\r\nline\r\nendings\r\n", "no newline", "é ✓ 🙂\n", "\n\n\n"],
)
def test_template_save_stores_byte_for_byte(author: User, text: str) -> None:
    services.template_save(text=text, author=author)

    current = selectors.template_current()
    assert current.text == text
    assert current.version == 1
    assert current.is_default is False
    assert current.author == "author"
    assert TemplateVersion.objects.get().text.encode() == text.encode()


def test_template_save_keeps_every_version() -> None:
    for text in ("one", "two", "three"):
        services.template_save(text=text)

    assert [(v.number, v.text) for v in selectors.template_versions()] == [
        (3, "three"),
        (2, "two"),
        (1, "one"),
    ]


def test_template_save_with_current_etag_wins() -> None:
    services.template_save(text="one")
    etag = selectors.template_current().etag

    services.template_save(text="two", if_match=[etag])

    assert selectors.template_current().text == "two"


@pytest.mark.parametrize("tags", [["*"], ['"stale"', "*"]])
def test_template_save_with_star_matches_any_version(tags: list[str]) -> None:
    services.template_save(text="two", if_match=tags)

    assert selectors.template_current().version == 1


def test_template_save_with_stale_etag_changes_nothing() -> None:
    stale = selectors.template_current().etag
    services.template_save(text="one")

    with pytest.raises(errors.PreconditionFailed, match="version 1") as caught:
        services.template_save(text="two", if_match=[stale])

    assert caught.value.current.version == 1
    assert list(TemplateVersion.objects.values_list("text", flat=True)) == ["one"]


def test_template_etag_differs_between_versions_and_texts(settings: Settings) -> None:
    default = selectors.template_current().etag
    settings.SYSPROMPT = {"DEFAULT_TEMPLATE": "other default"}
    other_default = selectors.template_current().etag
    services.template_save(text="one")

    assert len({default, other_default, selectors.template_current().etag}) == 3


def test_template_save_over_limit_changes_nothing(settings: Settings) -> None:
    settings.SYSPROMPT = {"MAX_TEMPLATE_BYTES": 8}
    services.template_save(text="12345678")

    with pytest.raises(TemplateTooLarge, match="9 bytes in UTF-8; the limit is 8 bytes"):
        services.template_save(text="123456789")

    assert TemplateVersion.objects.count() == 1


def test_template_size_counts_utf8_bytes_not_characters(settings: Settings) -> None:
    settings.SYSPROMPT = {"MAX_TEMPLATE_BYTES": 8}

    with pytest.raises(TemplateTooLarge, match="9 bytes"):
        services.template_save(text="ééé✓")  # 4 characters, 9 bytes


def test_template_version_refuses_change_and_delete() -> None:
    version = services.template_save(text="one")
    version.text = "changed"

    with pytest.raises(TemplateVersionImmutable):
        version.save()
    with pytest.raises(TemplateVersionImmutable):
        version.delete()

    assert TemplateVersion.objects.get().text == "one"


# --- conversations ------------------------------------------------------------------


def test_resolve_first_turn_constructs_and_stores(workdir: Path) -> None:
    stored = resolve(workdir, model="m-1")

    expected = (
        "You are a helpful coding assistant.\nRun the tests before you commit.\n"
        f"The current working directory is {workdir}.\n"
    )
    assert stored.created is True
    row = ConversationPrompt.objects.get(conversation_id="c1")
    assert (row.system_prompt, row.sha256) == (expected, sha256(expected))
    assert (row.cwd, row.model, row.template_version_number) == (str(workdir), "m-1", 0)
    assert row.created_at == row.constructed_at


def test_resolve_later_turn_returns_stored_row(workdir: Path) -> None:
    first = resolve(workdir)

    later = resolve(workdir)

    assert later.created is False
    assert later.prompt.pk == first.prompt.pk
    assert later.prompt.system_prompt == first.prompt.system_prompt


def test_resolve_later_turn_only_reads(workdir: Path, host: User) -> None:
    resolve(workdir)

    with CaptureQueriesContext(connection) as queries:
        services.conversation_prompt_resolve(conversation_id="c1", cwd=str(workdir), user=host)

    assert [q["sql"].split()[0].upper() for q in queries.captured_queries] == ["SELECT"]


def test_resolve_later_turn_ignores_every_change(
    workdir: Path, allowed_root: Path, settings: Settings
) -> None:
    services.template_save(text="[file:AGENTS.md] [prompt:model] [prompt:cwd] [system:time]")
    first = resolve(workdir, model="m-1").prompt.system_prompt
    other = allowed_root / "other"
    other.mkdir()

    services.template_save(text="edited")
    (workdir / "AGENTS.md").write_text("changed\n")
    later = resolve(other, model="m-2").prompt.system_prompt

    assert later == first


def test_construct_replaces_stored_prompt(workdir: Path) -> None:
    resolve(workdir)
    services.template_save(text="v1 [prompt:model]")

    stored = services.conversation_prompt_construct(
        user=owner(), conversation_id="c1", cwd=str(workdir), model="m-2"
    )

    assert stored.created is False
    row = ConversationPrompt.objects.get()
    assert (row.system_prompt, row.sha256, row.template_version_number) == (
        "v1 m-2",
        sha256("v1 m-2"),
        1,
    )
    assert row.constructed_at > row.created_at


def test_construct_first_time_creates(workdir: Path) -> None:
    stored = services.conversation_prompt_construct(
        user=owner(), conversation_id="new", cwd=str(workdir)
    )

    assert stored.created is True


def test_compact_appends_instructions_but_stores_fresh_prompt(workdir: Path) -> None:
    resolve(workdir)
    services.template_save(text="fresh [prompt:model]")

    compacted = services.conversation_prompt_compact(
        user=owner(), conversation_id="c1", cwd=str(workdir), model="m"
    )

    assert compacted.compaction_prompt == "fresh m\n\n" + DEFAULT_COMPACTION_INSTRUCTIONS
    assert ConversationPrompt.objects.get().system_prompt == "fresh m"


def test_compact_empty_template_answers_instructions_alone(workdir: Path) -> None:
    services.template_save(text="")

    compacted = services.conversation_prompt_compact(
        user=owner(), conversation_id="c1", cwd=str(workdir)
    )

    assert compacted.compaction_prompt == DEFAULT_COMPACTION_INSTRUCTIONS
    row = ConversationPrompt.objects.get()
    assert (row.system_prompt, row.sha256) == (None, None)


def test_compact_instructions_follow_setting(workdir: Path, settings: Settings) -> None:
    settings.SYSPROMPT = {**settings.SYSPROMPT, "COMPACTION_INSTRUCTIONS": "Summarise."}
    services.template_save(text="p")

    compacted = services.conversation_prompt_compact(
        user=owner(), conversation_id="c1", cwd=str(workdir)
    )

    assert compacted.compaction_prompt == "p\n\nSummarise."


@pytest.mark.parametrize("text", ["", "   \n\t\n", "[if file:missing.md]x[endif]"])
def test_resolve_null_prompt_is_stored_as_constructed(workdir: Path, text: str) -> None:
    services.template_save(text=text)
    resolve(workdir)
    services.template_save(text="now there is a prompt")

    later = resolve(workdir)

    assert later.created is False
    assert (later.prompt.system_prompt, later.prompt.sha256) == (None, None)


def test_delete_forgets_then_reports_absence(workdir: Path) -> None:
    resolve(workdir)

    assert services.conversation_prompt_delete(user=owner(), conversation_id="c1") is True
    assert services.conversation_prompt_delete(user=owner(), conversation_id="c1") is False
    assert not ConversationPrompt.objects.exists()


def test_construct_goes_through_the_app_parse_cache(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = ParsedTemplates()
    monkeypatch.setattr(apps.get_app_config("library"), "_parsed", cache)
    services.template_save(text="cached [prompt:conversation_id]")

    for number in range(3):
        resolve(workdir, conversation_id=f"c{number}")
    services.conversation_prompt_compact(user=owner(), conversation_id="c0", cwd=str(workdir))

    assert len(cache) == 1


def test_parsed_template_is_parsed_once_per_text(workdir: Path) -> None:
    services.template_save(text="shared [prompt:conversation_id]")
    for number in range(3):
        resolve(workdir, conversation_id=f"c{number}")

    text = selectors.template_current().text
    assert rendering.parsed_template(text) is rendering.parsed_template(text)
    assert rendering.parsed_template(text) is not rendering.parsed_template(text + " ")


@pytest.mark.parametrize(
    "conversation_id",
    ["", "a b", "a/b", "x" * 201, "é", "line\n", "tab\t", "semi;colon", "q?"],
)
def test_conversation_id_invalid_is_refused(workdir: Path, conversation_id: str) -> None:
    with pytest.raises(InvalidInput, match="is not a valid conversation id") as caught:
        resolve(workdir, conversation_id=conversation_id)

    assert caught.value.field == "conversation_id"
    assert not ConversationPrompt.objects.exists()


@pytest.mark.parametrize("conversation_id", ["a", "x" * 200, "A-z_0.9:thread", "..", "-"])
def test_conversation_id_valid_is_accepted(workdir: Path, conversation_id: str) -> None:
    assert resolve(workdir, conversation_id=conversation_id).created is True


@pytest.mark.parametrize(
    ("make_cwd", "message"),
    [
        (lambda root, tmp: "relative/path", "is not an absolute path"),
        (lambda root, tmp: str(root / "missing"), "is not an existing directory"),
        (lambda root, tmp: str(root / "project" / "AGENTS.md"), "is not an existing directory"),
        (lambda root, tmp: str(tmp), "is outside the allowed roots"),
        (lambda root, tmp: "/", "is outside the allowed roots"),
        (lambda root, tmp: str(root) + "-sibling", "is outside the allowed roots"),
        (lambda root, tmp: str(root / "escape"), "is outside the allowed roots"),
        (lambda root, tmp: str(root / ".." / "outside"), "is outside the allowed roots"),
        (lambda root, tmp: str(root) + "\0", "is not an absolute path"),
    ],
)
def test_cwd_invalid_is_refused(
    workdir: Path, allowed_root: Path, tmp_path: Path, make_cwd: object, message: str
) -> None:
    (tmp_path / "outside").mkdir()
    Path(str(allowed_root) + "-sibling").mkdir()
    (allowed_root / "escape").symlink_to(tmp_path / "outside")
    cwd = make_cwd(allowed_root, tmp_path)  # type: ignore[operator]

    with pytest.raises(InvalidInput, match=message) as caught:
        services.conversation_prompt_resolve(conversation_id="c1", cwd=cwd, user=owner())

    assert caught.value.field == "cwd"
    assert not ConversationPrompt.objects.exists()


def test_cwd_symlink_inside_roots_is_accepted(workdir: Path, allowed_root: Path) -> None:
    (allowed_root / "link").symlink_to(workdir)

    stored = services.conversation_prompt_resolve(
        conversation_id="c1", cwd=str(allowed_root / "link") + "/", user=owner()
    )

    assert stored.prompt.cwd == str(allowed_root / "link")


def test_cwd_with_tilde_root_is_expanded(settings: Settings) -> None:
    settings.SYSPROMPT = {"ALLOWED_ROOTS": ["/"]}
    home = os.path.expanduser("~")

    assert validation.cwd_check(home + "/") == home


def test_preview_renders_draft_and_stores_nothing(workdir: Path) -> None:
    preview = rendering.template_preview(
        cwd=str(workdir),
        model="m",
        conversation_id="c9",
        template="[prompt:model] [prompt:conversation_id] [git:branch] [nope:x] [if x",
    )

    assert preview.rendered.prompt == "m c9   [if x"
    assert preview.rendered.values["prompt:model"] == "m"
    assert "git:branch" in preview.rendered.values
    assert preview.diagnostics[0].message.startswith("unknown variable type 'nope'")
    assert not ConversationPrompt.objects.exists()
    assert not TemplateVersion.objects.exists()
