"""Labels on the Releases page: "Set a label" (latest, a release, a split of arms),
its refusals under the field they name with nothing changed, the label's history and
Rollback; production needs ``publish_release``."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from sysprompt.releases import selectors, services
from tests.editor.releases_support import (  # noqa: F401  (fixtures)
    SCRIPT,
    move_count,
    production,
    publisher,
    publisher_web,
    release,
    template,
)


@pytest.fixture
def two() -> tuple[int, int]:
    template("One.")
    first = release("one")
    template("Two.")
    return first, release("two")


def set_label(client: Client, **fields: str) -> Any:
    data = {"name": "staging", "kind": "latest", "release": "", "arms": "", "message": ""}
    return client.post("/releases/labels/", {**data, **fields})


def test_label_set_creates_a_split_from_percent_and_basis_points(
    author_web: Client, two: tuple[int, int]
) -> None:
    response = set_label(
        author_web, kind="split", arms=f"{two[0]} 90%\nlatest 1000", message="canary"
    )

    assert response.status_code == 302
    assert response["Location"] == "/releases/labels/staging/"
    state = selectors.label_get("staging")
    assert state.target.as_json() == {
        "split": [{"release": two[0], "weight": 9000}, {"release": "latest", "weight": 1000}]
    }
    page = author_web.get(response["Location"]).content.decode()
    assert 'width="9000"' in page and "canary" in page


def test_label_set_moves_to_a_release_and_marks_protected(
    author_web: Client, two: tuple[int, int]
) -> None:
    set_label(author_web)
    response = set_label(author_web, kind="release", release=str(two[1]), protected="on")
    assert response.status_code == 302
    state = selectors.label_get("staging")
    assert state.target.as_json() == {"release": two[1]} and state.protected


@pytest.mark.parametrize(
    ("fields", "error_id", "text"),
    [
        ({"kind": "split", "arms": "1 9000\nlatest 999"}, "label-arms-error", "add up to 9,999"),
        ({"kind": "split", "arms": "1 9000\nlatest 0"}, "label-arms-error", "Arm 2, weight"),
        ({"kind": "split", "arms": "1 ninety\nlatest 1000"}, "label-arms-error", "Arm 1, weight"),
        ({"kind": "split", "arms": "just-one-word"}, "label-arms-error", "Line 1"),
        ({"kind": "release", "release": "x"}, "label-release-error", "not a release number"),
        ({"kind": "release", "release": "99"}, "label-release-error", "There is no release 99"),
        ({"name": "Not OK"}, "label-name-error", "is not a label name"),
        ({"kind": "sideways"}, "label-kind-error", "Select a valid choice"),
    ],
)
def test_label_set_bad_input_shows_under_the_field_and_changes_nothing(
    author_web: Client,
    author: User,
    two: tuple[int, int],
    fields: dict[str, str],
    error_id: str,
    text: str,
) -> None:
    services.label_set(name="staging", target={"release": two[0]}, author=author)
    moves = move_count("staging")

    response = set_label(author_web, **fields)

    assert response.status_code == 400
    html = response.content.decode()
    error = html.split(f'id="{error_id}"', 1)[1].split("</p>", 1)[0]
    assert text in error
    assert selectors.label_get("staging").target.as_json() == {"release": two[0]}
    assert move_count("staging") == moves


def test_label_set_production_by_author_is_refused(
    author_web: Client, two: tuple[int, int]
) -> None:
    moves = move_count()
    response = set_label(author_web, name="production", kind="release", release=str(two[0]))
    assert response.status_code == 403
    assert "is protected" in response.content.decode()
    assert selectors.label_get("production").target.as_json() == "latest"
    assert move_count() == moves


def test_label_set_production_by_publisher(
    publisher_web: Client,  # noqa: F811
    two: tuple[int, int],
) -> None:
    response = set_label(publisher_web, name="production", kind="release", release=str(two[0]))
    assert response.status_code == 302
    assert selectors.label_get("production").target.as_json() == {"release": two[0]}


def test_label_page_shows_history_newest_first(
    author_web: Client, author: User, two: tuple[int, int]
) -> None:
    services.label_set(name="staging", target="latest", message="start", author=author)
    services.label_set(
        name="staging", target={"release": two[0]}, message=f"freeze {SCRIPT}", author=author
    )

    html = author_web.get("/releases/labels/staging/").content.decode()

    rows = html.split('<tr class="move">')[1:]
    assert len(rows) == 2
    assert "latest" in rows[0] and "release 1" in rows[0] and "author" in rows[0]
    assert "freeze &lt;script&gt;" in rows[0] and SCRIPT not in html
    assert "—" in rows[1] and "start" in rows[1]
    assert 'id="rollback-form"' in html


def test_label_rollback_moves_back(author_web: Client, author: User, two: tuple[int, int]) -> None:
    services.label_set(name="staging", target={"release": two[0]}, author=author)
    services.label_set(name="staging", target={"release": two[1]}, author=author)

    response = author_web.post("/releases/labels/staging/rollback", {"message": ""})

    assert response.status_code == 302
    assert selectors.label_get("staging").target.as_json() == {"release": two[0]}
    [last, *_] = selectors.label_history("staging")
    assert last.rollback


def test_label_rollback_confirmation_names_where_each_rollback_goes(
    author_web: Client, author: User, two: tuple[int, int]
) -> None:
    services.label_set(name="staging", target="latest", author=author)
    services.label_set(name="staging", target={"release": two[0]}, author=author)
    services.label_set(name="staging", target={"release": two[1]}, author=author)

    before = author_web.get("/releases/labels/staging/").content.decode()
    author_web.post("/releases/labels/staging/rollback", {"message": ""})
    after = author_web.get("/releases/labels/staging/").content.decode()

    assert f'data-confirm="Roll staging back to release {two[0]}?' in before
    assert 'data-confirm="Roll staging back to latest?' in after
    author_web.post("/releases/labels/staging/rollback", {"message": ""})
    assert selectors.label_get("staging").target.as_json() == "latest"


def test_label_rollback_without_history_says_so(author_web: Client, author: User) -> None:
    services.label_set(name="staging", target="latest", author=author)
    page = author_web.get("/releases/labels/staging/").content.decode()
    assert 'id="no-rollback"' in page and 'id="rollback-form"' not in page

    response = author_web.post("/releases/labels/staging/rollback", {"message": ""})

    assert response.status_code == 400
    assert "no earlier target to roll back to" in response.content.decode()
    assert move_count("staging") == 1


def test_label_rollback_production_by_author_is_refused(
    author_web: Client,
    publisher: User,  # noqa: F811
    two: tuple[int, int],
) -> None:
    services.label_set(name="production", target={"release": two[0]}, author=publisher)
    moves = move_count()
    page = author_web.get("/releases/labels/production/").content.decode()
    assert 'id="label-protected-note"' in page and 'id="rollback-form"' not in page

    response = author_web.post("/releases/labels/production/rollback", {"message": ""})

    assert response.status_code == 403
    assert "is protected" in response.content.decode()
    assert selectors.label_get("production").target.as_json() == {"release": two[0]}
    assert move_count() == moves


def test_label_page_unknown_label_is_404(author_web: Client) -> None:
    assert author_web.get("/releases/labels/ghost/").status_code == 404
    assert author_web.post("/releases/labels/ghost/rollback").status_code == 404


def test_label_set_unticked_protected_keeps_protection(
    publisher_web: Client,  # noqa: F811
    publisher: User,  # noqa: F811
) -> None:
    services.label_set(name="staging", target="latest", protected=True, author=publisher)
    template("One.")
    number = release()

    response = set_label(publisher_web, kind="release", release=str(number))

    assert response.status_code == 302
    state = selectors.label_get("staging")
    assert state.protected and state.target.as_json() == {"release": number}
