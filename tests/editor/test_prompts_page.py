"""The Prompts page (folder tree with counts, search, labels at a glance, New / Rename /
Duplicate / Archive), the header's switcher, and one prompt's scoped editor pages
(``/editor/p/<name>/-/…``)."""

from __future__ import annotations

from django.contrib.auth.models import Group, User
from django.test import Client
from django.utils import timezone

from sysprompt.prompts import catalog_services, services
from sysprompt.prompts.catalog import prompt_get
from sysprompt.prompts.models import Prompt, PromptAlias, TemplateVersion
from sysprompt.releases.models import Label


def make(name: str, author: User | None = None, **fields: object) -> Prompt:
    return catalog_services.prompt_create(name=name, author=author, **fields)


def test_prompts_page_shows_folders_with_counts_and_labels(author_web: Client) -> None:
    make("support/triage", template="T.")
    make("support/refunds")
    make("support/eu/billing")
    make("coding/reviewer", description="Reviews PRs.", tags=["code"])
    now = timezone.now()
    Label.objects.create(
        prompt=prompt_get("coding/reviewer"),
        name="staging",
        target={"release": 3},
        created_at=now,
        updated_at=now,
    )

    page = author_web.get("/prompts/")
    html = page.content.decode()

    assert page.status_code == 200
    assert 'data-folder="support/"' in html and 'data-folder="support/eu/"' in html
    assert '>support/</a> <span class="muted count">3</span>' in html
    assert '>eu/</a> <span class="muted count">1</span>' in html
    assert "staging → release 3" in html
    assert "Reviews PRs." in html
    assert 'href="/editor/p/coding/reviewer/-/"' in html
    assert 'href="/"' in html  # default's page is today's


def test_prompts_page_filters_by_folder_and_search(author_web: Client) -> None:
    make("support/triage")
    make("coding/reviewer", description="Reviews PRs.")

    folder = author_web.get("/prompts/", {"folder": "support"}).content.decode()
    search = author_web.get("/prompts/", {"search": "prs"}, HTTP_HX_REQUEST="true")

    assert 'data-prompt="support/triage"' in folder
    assert 'data-prompt="coding/reviewer"' not in folder
    assert 'data-prompt="coding/reviewer"' in search.content.decode()
    assert "<html" not in search.content.decode()  # the rows alone
    assert "HX-Request" in search["Vary"]


def test_prompts_page_pages_on_by_name(author_web: Client) -> None:
    for index in range(105):
        Prompt.objects.create(
            name=f"bulk/p{index:03}", created_at=timezone.now(), updated_at=timezone.now()
        )

    first = author_web.get("/prompts/", {"folder": "bulk"}).content.decode()
    rest = author_web.get(
        "/prompts/", {"folder": "bulk/", "after": "bulk/p099"}, HTTP_HX_REQUEST="true"
    ).content.decode()

    assert first.count('data-prompt="bulk/') == 100
    assert "More prompts" in first and "after=bulk%2Fp099" in first
    assert rest.count('data-prompt="bulk/') == 5 and "More prompts" not in rest


def test_prompts_page_is_for_authors(viewer_web: Client) -> None:
    assert viewer_web.get("/prompts/").status_code == 403
    assert viewer_web.post("/prompts/-/new", {"name": "x"}).status_code == 403
    assert not Prompt.objects.filter(name="x").exists()


def test_prompts_new_creates_and_opens_it(author_web: Client) -> None:
    answer = author_web.post(
        "/prompts/-/new", {"name": "support/triage", "description": "D", "tags": "a, b"}
    )

    assert answer.status_code == 302
    assert answer["Location"] == "/editor/p/support/triage/-/"
    prompt = Prompt.objects.get(name="support/triage")
    assert prompt.tags == ["a", "b"]


def test_prompts_new_bad_or_taken_name_says_why(author_web: Client) -> None:
    make("a")

    bad = author_web.post("/prompts/-/new", {"name": "Bad Name"}, follow=True)
    taken = author_web.post("/prompts/-/new", {"name": "a"}, follow=True)

    assert "is not a prompt name" in bad.content.decode()
    assert "exists" in taken.content.decode()
    assert Prompt.objects.count() == 2  # default and a


def test_prompts_rename_duplicate_archive(author_web: Client) -> None:
    make("a", template="Text of a.")

    renamed = author_web.post("/prompts/-/rename", {"prompt": "a", "name": "b"}, follow=True)
    duplicated = author_web.post("/prompts/-/duplicate", {"prompt": "b", "name": "c"})
    archived = author_web.post("/prompts/-/archive", {"prompt": "b", "archived": "1"})
    listed = author_web.get("/prompts/").content.decode()

    assert "renamed to b" in renamed.content.decode()
    assert PromptAlias.objects.filter(name="a", prompt__name="b").exists()
    assert duplicated.status_code == 302
    assert TemplateVersion.objects.get(prompt__name="c").text == "Text of a."
    assert archived.status_code == 302 and Prompt.objects.get(name="b").archived
    assert 'data-prompt="b"' not in listed and 'data-prompt="c"' in listed


def test_prompts_switcher_only_when_another_prompt_exists(author_web: Client) -> None:
    alone = author_web.get("/").content.decode()
    make("support/triage")
    several = author_web.get("/").content.decode()
    switched = author_web.get("/prompts/-/switch", {"prompt": "support/triage"})

    assert 'id="prompt-switcher"' not in alone
    assert 'id="prompt-switcher"' in several
    assert '<option value="support/triage">' in several
    assert switched["Location"] == "/editor/p/support/triage/-/"


def test_scoped_editor_page_shows_that_prompts_template(author_web: Client) -> None:
    make("support/triage", template="You triage tickets.")
    services.template_save(text="Default's text.")

    scoped = author_web.get("/editor/p/support/triage/-/").content.decode()
    default = author_web.get("/").content.decode()
    unknown = author_web.get("/editor/p/nothing/-/")

    assert "You triage tickets." in scoped and "Default&#x27;s text." not in scoped
    assert '"save_url"' not in scoped  # the modal's URLs are in its attributes
    assert 'hx-post="/editor/p/support/triage/-/save"' in scoped
    assert "Default&#x27;s text." in default
    assert unknown.status_code == 404


def test_scoped_save_and_history_are_that_prompts(author_web: Client) -> None:
    make("support/triage", template="One.")
    before = TemplateVersion.objects.get(prompt__name="support/triage")

    saved = author_web.post(
        "/editor/p/support/triage/-/save", {"template": "Two.", "base_etag": ""}
    )
    history = author_web.get("/editor/p/support/triage/-/history").content.decode()
    text = author_web.get(f"/editor/p/support/triage/-/history/{before.number}.json")
    not_its = author_web.get("/editor/p/support/triage/-/history/999.json")

    assert saved.status_code == 200
    versions = TemplateVersion.objects.filter(prompt__name="support/triage")
    assert sorted(v.text for v in versions) == ["One.", "Two."]
    assert not TemplateVersion.objects.filter(prompt__name="default").exists()
    assert f"/editor/p/support/triage/-/history/{before.number}/diff" in history
    assert text.json()["template"] == "One."
    assert not_its.status_code == 404


def test_scoped_save_refused_by_a_restriction(author: User, author_web: Client) -> None:
    prompt = make("support/triage", template="One.")
    prompt.editor_groups.add(Group.objects.create(name="team"))

    refused = author_web.post(
        "/editor/p/support/triage/-/save", {"template": "Two.", "base_etag": ""}
    )

    assert refused.status_code == 403
    assert TemplateVersion.objects.filter(prompt__name="support/triage").count() == 1


def test_prompts_actions_partial_holds_the_rows_forms(author_web: Client) -> None:
    make("support/triage")

    actions = author_web.get(
        "/prompts/-/actions",
        {"prompt": "support/triage"},
        HTTP_HX_REQUEST="true",
        HTTP_HX_CURRENT_URL="http://testserver/prompts/?folder=support%2F",
    ).content.decode()
    of_default = author_web.get("/prompts/-/actions", {"prompt": "default"}).content.decode()
    unknown = author_web.get("/prompts/-/actions", {"prompt": "nothing"})

    assert 'data-action="rename"' in actions and 'data-action="archive"' in actions
    assert 'name="back" value="/prompts/?folder=support%2F"' in actions
    assert 'name="csrfmiddlewaretoken"' in actions
    assert 'data-action="duplicate"' in of_default and 'data-action="rename"' not in of_default
    assert unknown.status_code == 404


def test_prompts_back_never_leaves_the_prompts_page(author_web: Client) -> None:
    make("a")

    answer = author_web.post(
        "/prompts/-/archive", {"prompt": "a", "archived": "1", "back": "https://evil.example/"}
    )

    assert answer["Location"] == "/prompts/"
