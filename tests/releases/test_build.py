"""Releases §2: which label a conversation uses, and what its target builds from."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext

from sysprompt.accounts.services import agent_host_ensure
from sysprompt.errors import InvalidInput, ReleaseNotFound
from sysprompt.prompts.selectors import template_current
from sysprompt.releases import selectors, services
from sysprompt.releases.models import Label
from sysprompt_core.releases import choose_arm, parse_target
from tests.releases.support import save, template

pytestmark = pytest.mark.django_db


@pytest.fixture
def releases(writer: User, publisher: User) -> tuple[int, int]:
    template("Root v1 [fragment:core]")
    save("core", "core v1")
    first = services.release_create(author=writer).release.number
    template("Root v2 [fragment:core]")
    save("core", "core v2")
    second = services.release_create(author=writer).release.number
    template("Root v3 [fragment:core]")
    save("core", "core v3")  # the working copy, not released
    return first, second


def built(label: str | None, owner: int | None = None, cid: str = "c1") -> tuple[str, ...]:
    build = selectors.conversation_build(label)(conversation_id=cid, owner_id=owner)
    fragment = build.library.variants("core")
    [variant] = fragment.values()
    return (build.label, str(build.release), str(build.arm), build.template.text, variant.text)


def test_conversation_build_production_latest_is_the_working_copy(
    releases: tuple[int, int],
) -> None:
    assert built(None) == ("production", "None", "None", "Root v3 [fragment:core]", "core v3")


def test_conversation_build_production_on_a_release_builds_from_its_versions(
    releases: tuple[int, int], publisher: User
) -> None:
    services.label_set(name="production", target={"release": 1}, author=publisher)

    assert built(None) == ("production", "1", "None", "Root v1 [fragment:core]", "core v1")


def test_conversation_build_call_label_wins_over_the_host_label(
    releases: tuple[int, int], writer: User, publisher: User
) -> None:
    host = agent_host_ensure(name="host-1")
    owner = User.objects.get(username="host-1").pk
    services.label_set(name="staging", target={"release": 2}, author=writer)
    services.label_set(name="canary", target={"release": 1}, author=writer)
    services.host_label_set(username=host.username, label="staging", author=publisher)

    assert built(None, owner)[:2] == ("staging", "2")
    assert built("canary", owner)[:2] == ("canary", "1")
    assert built("production", owner)[:2] == ("production", "None")
    assert built(None, None)[:2] == ("production", "None")
    services.host_label_set(username=host.username, label=None, author=publisher)
    assert built(None, owner)[:2] == ("production", "None")


def test_conversation_build_host_label_production_is_production(
    releases: tuple[int, int], publisher: User
) -> None:
    host = agent_host_ensure(name="host-1")
    owner = User.objects.get(username="host-1").pk
    services.host_label_set(username=host.username, label="production", author=publisher)

    assert built(None, owner)[:2] == ("production", "None")


def test_conversation_build_split_arm_is_sticky_per_conversation(
    releases: tuple[int, int], writer: User
) -> None:
    split = {"split": [{"release": 1, "weight": 5000}, {"release": 2, "weight": 5000}]}
    services.label_set(name="ab", target=split, author=writer)
    ids = [f"conversation-{n}" for n in range(40)]

    first = {cid: built("ab", cid=cid) for cid in ids}
    again = {cid: built("ab", cid=cid) for cid in ids}

    assert first == again
    target = parse_target(split)
    for cid, (_, release, arm, *_texts) in first.items():
        expected = choose_arm(target, "ab", cid)  # type: ignore[arg-type]
        assert (arm, release) == (str(expected), str(expected + 1))
    assert {row[1] for row in first.values()} == {"1", "2"}


def test_conversation_build_refuses_an_unknown_call_label_naming_the_field() -> None:
    with pytest.raises(InvalidInput) as caught:
        selectors.conversation_build("nope")(conversation_id="c1", owner_id=None)

    assert caught.value.field == "label"


def test_conversation_build_reads_nothing_until_it_is_called() -> None:
    with CaptureQueriesContext(connection) as queries:
        chooser = selectors.conversation_build("nope")

    assert queries.captured_queries == []
    assert callable(chooser)


def test_conversation_build_reads_the_label_and_the_host_label_in_one_query(
    releases: tuple[int, int], writer: User, publisher: User
) -> None:
    agent_host_ensure(name="host-1")
    owner = User.objects.get(username="host-1").pk
    services.label_set(name="staging", target="latest", author=writer)
    services.host_label_set(username="host-1", label="staging", author=publisher)

    with CaptureQueriesContext(connection) as queries:
        selectors._label_for(None, owner)

    assert len(queries.captured_queries) == 1


@pytest.mark.parametrize(("target", "queries"), [("latest", 1), ({"release": 1}, 2)])
def test_conversation_build_reads_the_label_with_the_template_it_needs(
    releases: tuple[int, int], publisher: User, target: object, queries: int
) -> None:
    services.label_set(name="production", target=target, author=publisher)
    chooser = selectors.conversation_build(None)

    with CaptureQueriesContext(connection) as captured:
        build = chooser(conversation_id="c1", owner_id=None)

    # latest: the label and the current template in one query; a release: and its row
    assert len(captured.captured_queries) == queries
    assert build.template.text == (
        "Root v3 [fragment:core]" if target == "latest" else "Root v1 [fragment:core]"
    )
    assert build.template.version == (3 if target == "latest" else 1)
    if target == "latest":
        assert build.template == template_current()  # read by hand, the same value


def test_conversation_build_release_gone_from_a_hand_edited_label_is_not_found(
    releases: tuple[int, int], writer: User
) -> None:
    services.label_set(name="staging", target="latest", author=writer)
    Label.objects.filter(name="staging").update(target={"release": 77})

    with pytest.raises(ReleaseNotFound):
        built("staging")


def test_release_source_lists_names_and_reads_only_its_own_versions(
    releases: tuple[int, int],
) -> None:
    save("only-latest", "new")
    _, library, _ = selectors.pointer_build(1)

    assert library.names() == frozenset({"core"})
    assert library.variants("only-latest") == {}
    assert [v.version for v in library.variants("core").values()] == [1]
