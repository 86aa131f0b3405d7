"""Browser tests: a gated label's Publish dialog — the gate and what the move misses,
"Start a run" (back with the run shown), then a publisher's forced publish with a
message; the 409's words naming the checkbox; the gate set, changed and removed on the
label's page; a Rollback the gate would refuse, said in its dialog before anything is
sent, forced there by a publisher; no CSP violation or console error."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Permission, User
from playwright.sync_api import expect

from sysprompt.evaluations.models import Run
from sysprompt.releases import selectors, services
from tests.browser.conftest import make_user
from tests.browser.test_csp import Watch, Watched, watched  # noqa: F401  (the fixture)
from tests.releases.gate_support import executed, gated


@pytest.fixture
def publisher(author: User) -> User:
    author.user_permissions.add(Permission.objects.get(codename="publish_release"))
    return User.objects.get(pk=author.pk)


def test_publish_gated_label_starts_a_run_then_forces(
    watched: Watched,  # noqa: F811
    publisher: User,
) -> None:
    services.production_ensure()
    made = gated(publisher)
    page, watch = watched(publisher)

    page.goto(f"/releases/publish?label=production&candidate={made.good}")
    gate = page.locator("#gate")
    expect(gate).to_contain_text("Gate: suite style")
    expect(page.locator("#gate-reasons")).to_contain_text(
        f"no finished run of suite style on model echo with release {made.good} as candidate"
    )
    gate.get_by_role("button", name=f"Start a run of style on release {made.good}").click()

    run = Run.objects.get()
    expect(page.locator(".messages")).to_contain_text(f"Suite style: run {run.pk} on echo started")
    expect(page.locator("#gate-run-echo")).to_contain_text(f"run {run.pk} · queued")
    expect(page.locator(f'#gate-run-echo a[href="/evaluations/runs/{run.pk}/"]')).to_be_visible()

    page.locator("#publish-force").check()
    page.get_by_label("Message", exact=True).fill("the run is slow; incident 7")
    page.get_by_role("button", name="Publish to production").click()

    expect(page.locator("#label-target")).to_have_text(f"release {made.good}")
    assert selectors.label_get("production").target.as_json() == {"release": made.good}
    watch.assert_clean(page)


def refused_as_expected(watch: Watch, status: str, count: int) -> None:
    """The browser logs each refused form's answer (``status``, e.g. "409 (Conflict)")
    as a console error: exactly the ``count`` the test caused are taken out."""
    refused = [error for error in watch.errors if f"status of {status}" in error]
    assert len(refused) == count, watch.errors
    watch.errors = [error for error in watch.errors if error not in refused]


def test_gate_set_changed_and_removed_on_the_label_page(
    watched: Watched,  # noqa: F811
    publisher: User,
) -> None:
    """Issue 32, point 6: the gate on the Releases page, the label's target kept."""
    services.production_ensure()
    made = gated(publisher)
    services.label_set(name="staging", target={"release": made.old}, author=publisher)
    page, watch = watched(publisher)

    page.goto("/releases/")
    page.locator('tr[data-label="staging"]').get_by_role("link", name="staging").click()
    expect(page.locator("#gate-none")).to_be_visible()
    gate = page.locator("#gate-form")
    gate.get_by_label("Suite").select_option("style")
    gate.get_by_label("Candidate pass rate at least, in percent").fill("80")
    gate.get_by_label("echo").check()
    gate.get_by_role("button", name="Set the gate").click()
    expect(page.locator(".messages")).to_contain_text("Label staging is gated by suite style")
    expect(page.locator("#gate-now")).to_contain_text("at least 80%")

    page.locator("#gate-form").get_by_label("Regressions allowed").fill("2")
    page.locator("#gate-form").get_by_role("button", name="Save the gate").click()
    expect(page.locator("#gate-now")).to_contain_text("at most 2 regressions")
    state = selectors.label_get("staging")
    assert state.gate is not None and (state.gate.max_regressions, state.gate.min_pass_rate) == (
        2,
        0.8,
    )

    page.get_by_role("button", name="Remove the gate").click()
    expect(page.locator("#confirm-message")).to_contain_text("Remove the gate of staging?")
    page.locator("#confirm-accept").click()
    expect(page.locator("#gate-none")).to_be_visible()
    assert selectors.label_get("staging").gate is None
    assert selectors.label_get("staging").target.as_json() == {"release": made.old}
    watch.assert_clean(page)


def test_gate_refused_publish_names_the_checkbox_then_forced_with_it(
    watched: Watched,  # noqa: F811
    publisher: User,
) -> None:
    services.production_ensure()
    made = gated(publisher)
    page, watch = watched(publisher)

    page.goto(f"/releases/publish?label=production&candidate={made.bad}")
    page.get_by_label("Message", exact=True).fill("ship it")
    page.get_by_role("button", name="Publish to production").click()

    error = page.locator("#publish-error")
    expect(error).to_contain_text("with the “Force past the gate” box ticked and a message")
    expect(error).not_to_contain_text('"force"')
    page.get_by_role("checkbox", name=re.compile("Force past the gate")).check()
    page.get_by_role("button", name="Publish to production").click()
    expect(page.locator("#label-target")).to_have_text(f"release {made.bad}")
    refused_as_expected(watch, "409 (Conflict)", 1)
    watch.assert_clean(page)


def test_gate_rollback_dialog_says_the_gate_refuses_and_a_publisher_forces_it(
    watched: Watched,  # noqa: F811
    publisher: User,
) -> None:
    services.production_ensure()
    made = gated(publisher)
    executed({"release": made.good})
    services.label_set(name="production", target={"release": made.good}, author=publisher)
    page, watch = watched(publisher)

    page.goto("/releases/labels/production/")
    page.get_by_role("button", name="Rollback").click()

    dialog = page.locator("#rollback-dialog")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("The gate (suite style) will refuse this rollback")
    expect(dialog.locator("#rollback-gate-reasons")).to_contain_text(
        f"no finished run of suite style on model echo with release {made.old} as candidate"
    )
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()
    assert selectors.label_get("production").target.as_json() == {"release": made.good}

    page.get_by_role("button", name="Rollback").click()
    dialog.get_by_label(re.compile("^Why roll back past the gate")).fill("incident 11")
    dialog.get_by_label("Force past the gate").check()
    dialog.get_by_role("button", name="Roll back past the gate").click()

    expect(page.locator(".messages")).to_contain_text(
        f"Rolled back: production → release {made.old}"
    )
    assert selectors.label_get("production").target.as_json() == {"release": made.old}
    watch.assert_clean(page)


def test_gate_rollback_dialog_tells_an_author_to_ask_a_publisher(
    watched: Watched,  # noqa: F811
    publisher: User,
) -> None:
    services.production_ensure()
    made = gated(publisher)
    services.label_set(
        name="staging",
        target={"release": made.old},
        gate={"suite": "style", "models": ["echo"]},
        author=publisher,
    )
    services.label_set(
        name="staging", target={"release": made.bad}, force=True, message="x", author=publisher
    )
    writer = make_user("writer")
    page, watch = watched(writer)

    page.goto("/releases/labels/staging/")
    page.get_by_role("button", name="Rollback").click()

    dialog = page.locator("#rollback-dialog")
    expect(dialog).to_contain_text("will refuse this rollback")
    expect(dialog.locator("#rollback-force-refused")).to_contain_text("Only a publisher")
    expect(dialog.locator("#rollback-force-form")).to_have_count(0)
    dialog.get_by_role("button", name="Close").click()
    expect(dialog).to_be_hidden()
    watch.assert_clean(page)
