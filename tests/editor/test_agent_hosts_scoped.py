"""The Agent hosts page of a prompt other than ``default``, under
``/editor/p/support/triage/-/agent-hosts/``: it shows and sets each host's label and
instance override for that prompt (``default``'s untouched, and ``default``'s page not
its), its forms and redirects stay under the prompt (creating a host and rotating a
token stay today's URLs), an unknown prompt is 404, a protected label or a folder
restriction refuses with the words on the page; and each host's prompts (its default
prompt and the ones it may use) are shown and set there, refusals under that host's
form with nothing written."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

import pytest
from django.contrib.auth.models import Group, Permission, User
from django.http import HttpResponse
from django.http.response import HttpResponseBase
from django.test import Client
from rest_framework.test import APIClient

from sysprompt.accounts import services as accounts
from sysprompt.accounts.selectors import agent_hosts
from sysprompt.events.models import AuditRecord
from sysprompt.library.models import HostOverride
from sysprompt.library.selectors import host_override_state
from sysprompt.prompts import hosts as prompt_hosts
from sysprompt.prompts.catalog_services import folder_restrict, prompt_create
from sysprompt.prompts.models import HostPrompts, Prompt
from sysprompt.releases import selectors, services
from sysprompt.releases.models import HostLabel
from tests.editor.library_support import web

TRIAGE = "/editor/p/support/triage/-/"
"""Where support/triage's pages are."""
HOST = "build-01"


@dataclass(frozen=True)
class Two:
    """``default`` and support/triage, each with a ``staging`` label (and triage a
    ``triage-only`` one), and an agent host ``build-01`` with nothing set."""

    triage: Prompt
    default: Prompt
    host: str


def manager(user: User, *codenames: str) -> Client:
    """``user`` (an author) who may also manage agent hosts, with ``codenames``."""
    for codename in ("add_token", *codenames):
        user.user_permissions.add(Permission.objects.get(codename=codename))
    return web(User.objects.get(pk=user.pk))


@pytest.fixture
def two(author: User) -> Two:
    triage = prompt_create(name="support/triage", template="Triage v1.", author=author)
    services.release_create(message="triage one", author=author, prompt=triage)
    services.label_set(name="staging", target="latest", author=author, prompt=triage)
    services.label_set(name="triage-only", target="latest", author=author, prompt=triage)
    services.release_create(message="default one", author=author)
    services.label_set(name="staging", target="latest", author=author)
    host = accounts.agent_host_ensure(name=HOST).username
    return Two(triage=triage, default=Prompt.objects.get(name="default"), host=host)


@pytest.fixture
def publisher_web(author: User, two: Two) -> Client:
    """An author who manages hosts and may publish (a host on production is theirs)."""
    return manager(author, "publish_release")


def page_of(response: HttpResponseBase) -> str:
    assert isinstance(response, HttpResponse)
    return html.unescape(response.content.decode())


def without_header(page: str) -> str:
    """The page without its header (whose switcher names every prompt)."""
    return re.sub(r"<header.*?</header>", "", page, flags=re.S)


def labels() -> dict[str, str | None]:
    return {
        "default": selectors.host_label_state(HOST).label,
        "triage": selectors.host_label_state(
            HOST, prompt=Prompt.objects.get(name="support/triage")
        ).label,
    }


def overrides() -> dict[str, object]:
    triage = Prompt.objects.get(name="support/triage")
    return {
        "default": host_override_state(HOST).override,
        "triage": host_override_state(HOST, triage.pk).override,
    }


def rows() -> tuple[object, ...]:
    """Every row the page writes, to show that a refusal changed none."""
    return (
        list(HostLabel.objects.order_by("id").values_list("id", "prompt_id", "label_id")),
        list(HostOverride.objects.order_by("id").values_list("id", "prompt_id", "override")),
        list(
            HostPrompts.objects.order_by("user_id").values_list("user_id", "default_id", "allowed")
        ),
        AuditRecord.objects.exclude(action="prompt.refused").count(),
    )


# --- what each page shows -------------------------------------------------------------


def test_agent_hosts_scoped_page_shows_its_prompt_label_and_override_not_defaults(
    publisher_web: Client, two: Two, author: User
) -> None:
    services.host_label_set(username=HOST, label="triage-only", author=author, prompt=two.triage)
    services.host_override_set(
        username=HOST, override="Triage note.", author=author, prompt=two.triage
    )
    services.host_override_set(username=HOST, override="Default note.", author=author)

    response = publisher_web.get(f"{TRIAGE}agent-hosts/")

    assert response.status_code == 200
    page = page_of(response)
    assert (
        '<h1>Agent hosts — <span class="mono" id="agent-hosts-prompt">support/triage</span></h1>'
        in page
    )
    [(_, label)] = response.context["host_rows"]
    assert label.label == "triage-only"
    [override] = response.context["overrides"]
    assert override.content == "Triage note."
    assert "Default note." not in page
    assert '<option value="triage-only">' in page

    default_page = publisher_web.get("/agent-hosts/")
    [(_, label)] = default_page.context["host_rows"]
    assert label.label is None
    [override] = default_page.context["overrides"]
    assert override.content == "Default note."
    assert "<h1>Agent hosts</h1>" in page_of(default_page)
    assert '<option value="triage-only">' not in page_of(default_page)


def test_agent_hosts_scoped_forms_and_links_stay_under_the_prompt(
    publisher_web: Client, two: Two
) -> None:
    page = without_header(page_of(publisher_web.get(f"{TRIAGE}agent-hosts/")))

    actions = set(re.findall(r'action="([^"]+)"', page))
    assert actions == {
        "/agent-hosts/",  # a new host is deployment-wide
        f"/agent-hosts/{HOST}/rotate",  # so is its token
        f"{TRIAGE}agent-hosts/{HOST}/label",
        f"{TRIAGE}agent-hosts/{HOST}/override",
        f"{TRIAGE}agent-hosts/{HOST}/prompts",
    }


def test_agent_hosts_scoped_header_link_and_switcher_keep_the_prompt(
    publisher_web: Client, two: Two
) -> None:
    page = page_of(publisher_web.get(f"{TRIAGE}agent-hosts/"))

    assert f'<a href="{TRIAGE}agent-hosts/" aria-current="page">Agent hosts</a>' in page
    for prompt, page_name, where in [
        ("default", "agent-hosts", "/agent-hosts/"),
        ("support/triage", "agent-hosts", f"{TRIAGE}agent-hosts/"),
        ("support/triage", "agent-host-rotate", f"{TRIAGE}agent-hosts/"),
    ]:
        switched = publisher_web.get("/prompts/-/switch", {"prompt": prompt, "page": page_name})
        assert (switched.status_code, switched["Location"]) == (302, where)


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "agent-hosts/"),
        ("post", f"agent-hosts/{HOST}/label"),
        ("post", f"agent-hosts/{HOST}/override"),
        ("post", f"agent-hosts/{HOST}/prompts"),
    ],
)
def test_agent_hosts_scoped_unknown_prompt_is_404(
    publisher_web: Client, two: Two, method: str, path: str
) -> None:
    before = rows()

    unknown = getattr(publisher_web, method)(f"/editor/p/support/nobody/-/{path}", {})

    assert unknown.status_code == 404
    assert rows() == before
    known = getattr(publisher_web, method)(f"{TRIAGE}{path}", {})
    assert known.status_code in (200, 302, 400)  # the page, the form saved or refused


def test_agent_hosts_scoped_page_creates_no_host_nor_token(publisher_web: Client, two: Two) -> None:
    records = AuditRecord.objects.count()

    create = publisher_web.post(f"{TRIAGE}agent-hosts/", {"name": "build-02"})
    rotate = publisher_web.post(f"{TRIAGE}agent-hosts/{HOST}/rotate")

    assert (create.status_code, rotate.status_code) == (405, 404)
    assert [host.username for host in agent_hosts()] == [HOST]
    assert AuditRecord.objects.count() == records


# --- writes land on the page's prompt ---------------------------------------------------


def test_agent_hosts_scoped_label_set_lands_on_the_prompt_only(
    publisher_web: Client, two: Two
) -> None:
    response = publisher_web.post(f"{TRIAGE}agent-hosts/{HOST}/label", {"label": "staging"})

    assert response.status_code == 302
    assert response["Location"] == f"{TRIAGE}agent-hosts/#agent-hosts"
    assert labels() == {"default": None, "triage": "staging"}
    record = AuditRecord.objects.filter(action="host.label_set").get()
    assert record.prompt == "support/triage"

    publisher_web.post(f"/agent-hosts/{HOST}/label", {"label": "staging"})
    publisher_web.post(f"{TRIAGE}agent-hosts/{HOST}/label", {"label": "", "clear": "1"})

    assert labels() == {"default": "staging", "triage": None}


def test_agent_hosts_scoped_label_of_another_prompt_is_refused_under_the_form(
    publisher_web: Client, two: Two
) -> None:
    before = rows()

    refused = publisher_web.post(f"/agent-hosts/{HOST}/label", {"label": "triage-only"})
    allowed = publisher_web.post(f"{TRIAGE}agent-hosts/{HOST}/label", {"label": "triage-only"})

    assert refused.status_code == 400
    assert "There is no label 'triage-only'" in page_of(refused)
    assert allowed.status_code == 302
    assert labels() == {"default": None, "triage": "triage-only"}
    assert before[0] == []


def test_agent_hosts_scoped_override_set_lands_on_the_prompt_only(
    publisher_web: Client, two: Two
) -> None:
    data = {"kind": "text", "content": "Triage note.", "text_strategy": "append"}

    response = publisher_web.post(f"{TRIAGE}agent-hosts/{HOST}/override", data)

    assert response.status_code == 302
    assert response["Location"] == f"{TRIAGE}agent-hosts/#overrides"
    assert overrides() == {"default": None, "triage": {"content": "Triage note."}}

    publisher_web.post(f"/agent-hosts/{HOST}/override", {**data, "content": "Default note."})
    publisher_web.post(f"{TRIAGE}agent-hosts/{HOST}/override", {"kind": "none"})

    assert overrides() == {"default": {"content": "Default note."}, "triage": None}


def test_agent_hosts_scoped_refused_override_stays_on_the_prompt_page(
    publisher_web: Client, two: Two
) -> None:
    before = rows()

    response = publisher_web.post(
        f"{TRIAGE}agent-hosts/{HOST}/override", {"kind": "preset", "preset": ""}
    )

    assert response.status_code == 400
    page = page_of(response)
    assert "Name the fragment to apply as a preset." in page
    assert "Agent hosts — " in page
    assert rows() == before


# --- protected labels and folder restrictions ---------------------------------------------


@pytest.mark.parametrize(
    ("what", "data", "on_default"),
    [
        ("label", {"label": "staging"}, {"label": "canary"}),
        ("override", {"kind": "text", "content": "Note."}, {"kind": "text", "content": "Note."}),
    ],
    ids=["label", "override"],
)
def test_agent_hosts_scoped_protected_label_refuses_an_author_who_may_not_publish(
    author: User, two: Two, what: str, data: dict[str, str], on_default: dict[str, str]
) -> None:
    # On default the host is on staging (not protected): the author may change it there;
    # on support/triage it has no label: production, protected.
    admin = User.objects.create_superuser("admin")
    services.label_set(name="canary", target="latest", author=admin)
    services.host_label_set(username=HOST, label="staging", author=admin)
    client = manager(author)
    before = rows()

    refused = client.post(f"{TRIAGE}agent-hosts/{HOST}/{what}", data)

    assert refused.status_code == 403
    page = page_of(refused)
    assert "releases.publish_release" in page and "Agent hosts — " in page
    assert rows() == before

    allowed = client.post(f"/agent-hosts/{HOST}/{what}", on_default)

    assert allowed.status_code == 302
    assert rows() != before
    assert labels()["triage"] is None and overrides()["triage"] is None


@pytest.mark.parametrize(
    ("what", "data"),
    [("label", {"label": "staging"}), ("override", {"kind": "text", "content": "Note."})],
)
def test_agent_hosts_scoped_folder_restriction_refuses_a_non_member(
    publisher_web: Client, two: Two, what: str, data: dict[str, str]
) -> None:
    Group.objects.create(name="support-team")
    admin = User.objects.create_superuser("admin")
    folder_restrict(folder="support/", editor_groups=["support-team"], author=admin)
    before = rows()

    response = publisher_web.post(f"{TRIAGE}agent-hosts/{HOST}/{what}", data)

    assert response.status_code == 403
    page = page_of(response)
    assert "The prompt 'support/triage' is restricted" in page and "support-team" in page
    assert rows() == before
    assert AuditRecord.objects.filter(action="prompt.refused").count() == 1


# --- a host's prompts -------------------------------------------------------------------


def test_agent_hosts_prompts_form_sets_default_and_allowed(publisher_web: Client, two: Two) -> None:
    response = publisher_web.post(
        f"{TRIAGE}agent-hosts/{HOST}/prompts",
        {"default": "support/triage", "allowed": " support/triage , default,, "},
        follow=True,
    )

    assert response.redirect_chain == [(f"{TRIAGE}agent-hosts/#host-prompts", 302)]
    state = prompt_hosts.host_prompts_state(HOST)
    assert (state.default, state.allowed) == ("support/triage", ["support/triage", "default"])
    page = page_of(response)
    assert (
        "Prompts of build-01 saved: default support/triage, allowed support/triage, default."
        in page
    )
    [row] = response.context["host_prompts"]
    assert (row.typed_default, row.typed_allowed) == ("support/triage", "support/triage, default")
    record = AuditRecord.objects.filter(action="host.prompts_set").get()
    assert record.actor == "author" and record.object == f"agent host {HOST}"
    publisher_web.post(  # the same again: nothing written, nothing recorded
        f"{TRIAGE}agent-hosts/{HOST}/prompts",
        {"default": "support/triage", "allowed": "support/triage, default"},
    )
    assert AuditRecord.objects.filter(action="host.prompts_set").count() == 1

    publisher_web.post(f"/agent-hosts/{HOST}/prompts", {"default": "", "allowed": ""})

    state = prompt_hosts.host_prompts_state(HOST)
    assert (state.default, state.allowed) == (None, None)
    assert AuditRecord.objects.filter(action="host.prompts_set").count() == 2


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"default": "support/nobody"}, "There is no prompt named 'support/nobody'."),
        ({"default": "Bad Name"}, "'Bad Name' is not a prompt name"),
        ({"allowed": "support/nobody"}, "there is no prompt named 'support/nobody'"),
        ({"allowed": "support/x//"}, "allowed"),
        (
            {"default": "support/triage", "allowed": "default"},
            "The default prompt 'support/triage' is not in allowed: add it there.",
        ),
        ({"default": "", "allowed": "support/"}, "The default prompt 'default' is not in allowed"),
    ],
    ids=["unknown-default", "bad-name", "unknown-allowed", "bad-folder", "outside", "default-out"],
)
def test_agent_hosts_prompts_form_refuses_bad_input_and_writes_nothing(
    publisher_web: Client, two: Two, data: dict[str, str], message: str
) -> None:
    before = rows()

    response = publisher_web.post(f"{TRIAGE}agent-hosts/{HOST}/prompts", data)

    assert response.status_code == 400
    page = page_of(response)
    error = re.search(r'<p class="error host-prompts-error"[^>]*>([^<]*)</p>', page)
    assert error is not None and message in error.group(1)
    assert "Agent hosts — " in page  # still the prompt's page
    [row] = response.context["host_prompts"]
    assert row.typed_default == data.get("default", "")
    assert rows() == before


def test_agent_hosts_prompts_need_the_publish_permission_for_a_production_host(
    author: User, two: Two
) -> None:
    client = manager(author)
    before = rows()

    response = client.post(f"{TRIAGE}agent-hosts/{HOST}/prompts", {"default": "support/triage"})

    assert response.status_code == 403
    assert "releases.publish_release" in page_of(response)
    assert rows() == before


def test_agent_hosts_prompts_need_the_author_permission(db: None, two: Two) -> None:
    hosts_only = manager(User.objects.create_user("keeper"))
    before = rows()

    page = page_of(hosts_only.get(f"{TRIAGE}agent-hosts/"))
    response = hosts_only.post(
        f"{TRIAGE}agent-hosts/{HOST}/prompts", {"default": "support/triage"}, follow=True
    )

    assert "host-prompts-form" not in page and 'id="host-prompts"' in page
    assert "Changing a host's prompts needs the prompt author permission." in page_of(response)
    assert rows() == before


def test_agent_hosts_show_prompts_only_once_a_named_prompt_exists(author: User) -> None:
    accounts.agent_host_ensure(name=HOST)
    client = manager(author, "publish_release")

    page = page_of(client.get("/agent-hosts/"))

    assert "<h1>Agent hosts</h1>" in page
    assert 'id="host-prompts"' not in page and "/prompts" not in without_header(page)
    assert '<a href="/agent-hosts/" aria-current="page">Agent hosts</a>' in page

    prompt_create(name="support/triage", template="Triage.", author=author)
    page = page_of(client.get("/agent-hosts/"))

    assert "<h1>Agent hosts</h1>" in page  # default's page keeps its heading
    assert 'id="host-prompts"' in page
    assert f'action="/agent-hosts/{HOST}/prompts"' in page


def test_agent_hosts_prompts_api_write_is_audited_alike(author: User, two: Two) -> None:
    client = APIClient()
    client.force_authenticate(User.objects.create_superuser("admin"))

    answer = client.put(
        f"/api/agent-hosts/{HOST}/prompts", {"default": "support/triage"}, format="json"
    )

    assert answer.status_code == 200
    record = AuditRecord.objects.filter(action="host.prompts_set").get()
    assert record.actor == "admin"
    assert record.summary == (
        f"set the prompts of agent host {HOST}: default support/triage, allowed every prompt"
    )
