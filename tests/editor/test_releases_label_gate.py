"""Issue 32, point 6 on the label page: a gate set, changed and removed there (the
label's target kept), its refusals under the field they name, 403 before anything is
read for who may not change the label; and a Rollback the gate would refuse says so in
its dialog, offering a publisher the forced rollback."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.http import HttpResponse
from django.http.response import HttpResponseBase
from django.test import Client

from sysprompt.events.models import AuditRecord
from sysprompt.releases import selectors, services
from sysprompt.releases.models import Label
from tests.editor.library_support import web
from tests.editor.releases_support import production, publisher, publisher_web  # noqa: F401
from tests.releases.gate_support import Gated, executed, gated
from tests.releases.support import AUTHOR, user

pytestmark = pytest.mark.django_db(transaction=True)

GATE_URL = "/releases/labels/{}/gate"


@pytest.fixture
def made(publisher: User, allowed_root: Path) -> Gated:  # noqa: F811
    return gated(publisher, max_regressions=1)


@pytest.fixture
def author_web(db: None) -> Client:
    return web(user("writer", AUTHOR))


def page_of(response: HttpResponseBase) -> str:
    assert isinstance(response, HttpResponse)
    return html.unescape(response.content.decode())


def words(page: str) -> str:
    """The page's text without its tags, spaces folded."""
    return " ".join(re.sub(r"<[^>]+>", "", page).split())


def post_gate(client: Client, name: str, **fields: object) -> tuple[int, str]:
    response = client.post(GATE_URL.format(name), fields)
    return response.status_code, "" if response.status_code == 302 else page_of(response)


def test_label_gate_form_changes_the_gate_and_keeps_the_target(
    publisher_web: Client,  # noqa: F811
    made: Gated,
) -> None:
    moves = selectors.label_history("production").count()

    status, _ = post_gate(
        publisher_web,
        "production",
        suite="style",
        max_regressions="2",
        min_pass_rate="75",
        models=["echo"],
    )

    assert status == 302
    label = selectors.label_get("production")
    assert label.target.as_json() == {"release": made.old}
    assert label.gate is not None
    assert label.gate.as_json() == {
        "suite": "style",
        "max_regressions": 2,
        "min_pass_rate": 0.75,
        "models": ["echo"],
    }
    assert selectors.label_history("production").count() == moves
    page = page_of(publisher_web.get("/releases/labels/production/"))
    assert "Gated by suite style: moving production" in words(page)
    assert "at least 75%" in words(page)


def test_label_gate_form_sets_a_gate_on_an_ungated_label_then_removes_it(
    publisher_web: Client,  # noqa: F811
    made: Gated,
    publisher: User,  # noqa: F811
) -> None:
    services.label_set(name="staging", target={"release": made.old}, author=publisher)
    page = page_of(publisher_web.get("/releases/labels/staging/"))
    assert 'id="gate-none"' in page and "Set the gate" in page

    set_status, _ = post_gate(publisher_web, "staging", suite="style", models=["echo"])
    shown = page_of(publisher_web.get("/releases/"))
    removed_status, _ = post_gate(publisher_web, "staging", remove="on")

    assert (set_status, removed_status) == (302, 302)
    assert "gated: style" in shown
    assert selectors.label_get("staging").gate is None
    assert selectors.label_get("staging").target.as_json() == {"release": made.old}
    summaries = AuditRecord.objects.filter(action="label.gate", object="label staging")
    assert list(summaries.order_by("id").values_list("summary", flat=True)) == [
        "gated label staging on suite style (max regressions 0, min pass rate 0, models echo)",
        "removed the gate of label staging",
    ]


@pytest.mark.parametrize(
    ("fields", "error_id", "said"),
    [
        ({"suite": "", "models": ["echo"]}, "gate-suite-error", "label name"),
        ({"suite": "nowhere", "models": ["echo"]}, "gate-suite-error", "no suite 'nowhere'"),
        ({"suite": "style"}, "gate-models-error", "Tick at least one model"),
        (
            {"suite": "style", "models": ["echo"], "min_pass_rate": "150"},
            "gate-min-pass-rate-error",
            "no percentage from 0 to 100",
        ),
        (
            {"suite": "style", "models": ["echo"], "max_regressions": "-1"},
            "gate-max-regressions-error",
            "a whole number",
        ),
        ({"suite": "style", "models": ["gpt-9"]}, "gate-models-error", "gpt-9"),
    ],
)
def test_label_gate_form_refusal_shows_under_its_field_and_changes_nothing(
    publisher_web: Client,  # noqa: F811
    made: Gated,
    fields: dict[str, object],
    error_id: str,
    said: str,
) -> None:
    before = Label.objects.get(name="production").gate

    status, page = post_gate(publisher_web, "production", **fields)

    assert status == 400
    assert f'id="{error_id}"' in page and said in page
    assert Label.objects.get(name="production").gate == before


def test_label_gate_form_on_a_label_following_latest_is_refused(
    publisher_web: Client,  # noqa: F811
    made: Gated,
    publisher: User,  # noqa: F811
) -> None:
    services.label_set(name="staging", target="latest", author=publisher)
    assert 'id="gate-latest-note"' in page_of(publisher_web.get("/releases/labels/staging/"))

    status, page = post_gate(publisher_web, "staging", suite="style", models=["echo"])

    assert status == 400 and "cannot follow latest" in page
    assert selectors.label_get("staging").gate is None


@pytest.mark.parametrize(
    "fields",
    [{"remove": "on"}, {"suite": "style", "models": ["echo"]}, {"max_regressions": "x" * 99}],
)
def test_label_gate_form_on_a_protected_label_by_an_author_is_403_whatever_it_sends(
    author_web: Client, made: Gated, fields: dict[str, object]
) -> None:
    before = Label.objects.get(name="production").gate
    page = page_of(author_web.get("/releases/labels/production/"))
    assert 'id="gate-form"' not in page and 'id="gate-now"' in page

    status, page = post_gate(author_web, "production", **fields)

    assert status == 403 and "is protected" in page
    assert Label.objects.get(name="production").gate == before


def test_label_rollback_the_gate_would_refuse_says_so_and_offers_a_publisher_force(
    publisher_web: Client,  # noqa: F811
    made: Gated,
    publisher: User,  # noqa: F811
) -> None:
    executed({"release": made.good})
    services.label_set(name="production", target={"release": made.good}, author=publisher)

    page = page_of(publisher_web.get("/releases/labels/production/"))

    assert 'id="rollback-form"' not in page  # not the plain confirm
    assert 'data-dialog="rollback-dialog"' in page
    assert "The gate (suite style) will refuse this rollback" in words(page)
    assert (
        f"no finished run of suite style on model echo with release {made.old} as candidate" in page
    )
    assert 'id="rollback-force-form"' in page and 'id="rollback-force"' in page
    assert "data-show-on-load" not in page  # opened by the button, not on load


def test_label_rollback_the_gate_would_refuse_tells_an_author_to_ask_a_publisher(
    author_web: Client,
    made: Gated,
    publisher: User,  # noqa: F811
) -> None:
    services.label_set(
        name="staging",
        target={"release": made.old},
        gate={"suite": "style", "models": ["echo"]},
        author=publisher,
    )
    services.label_set(
        name="staging", target={"release": made.bad}, force=True, message="x", author=publisher
    )

    page = page_of(author_web.get("/releases/labels/staging/"))

    assert "The gate (suite style) will refuse this rollback" in words(page)
    assert 'id="rollback-force-form"' not in page
    assert "Only a publisher may roll it back past the gate" in page


def test_label_rollback_the_gate_lets_keeps_the_plain_confirm(
    publisher_web: Client,  # noqa: F811
    made: Gated,
    publisher: User,  # noqa: F811
) -> None:
    services.label_set(
        name="production", target={"release": made.bad}, force=True, message="x", author=publisher
    )
    executed({"release": made.old})  # old as candidate, production (bad) as baseline: passes

    page = page_of(publisher_web.get("/releases/labels/production/"))

    assert 'id="rollback-form"' in page and 'id="rollback-dialog"' not in page
