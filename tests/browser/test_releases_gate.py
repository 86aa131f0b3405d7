"""Browser test: a gated label's Publish dialog — the gate and what the move misses,
"Start a run" (back with the run shown), then a publisher's forced publish with a
message; no CSP violation or console error."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission, User
from playwright.sync_api import expect

from sysprompt.evaluations.models import Run
from sysprompt.releases import selectors, services
from tests.browser.test_csp import Watched, watched  # noqa: F401  (the fixture)
from tests.releases.gate_support import gated


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
        f"no finished run of suite style with release {made.good} as candidate"
    )
    gate.get_by_role("button", name=f"Start a run of style on release {made.good}").click()

    expect(page.locator(".messages")).to_contain_text("of suite style started")
    run = Run.objects.get()
    expect(page.locator("#gate-run")).to_contain_text(f"run {run.pk} · queued")
    expect(page.locator(f'#gate-run a[href="/evaluations/runs/{run.pk}/"]')).to_be_visible()

    page.locator("#publish-force").check()
    page.get_by_label("Message", exact=True).fill("the run is slow; incident 7")
    page.get_by_role("button", name="Publish to production").click()

    expect(page.locator("#label-target")).to_have_text(f"release {made.good}")
    assert selectors.label_get("production").target.as_json() == {"release": made.good}
    watch.assert_clean(page)
