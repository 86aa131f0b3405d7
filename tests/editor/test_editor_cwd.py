"""The preview's working directory, remembered per user on the server (``editor.cwds``):
``POST /editor/cwd`` puts a checked directory first in the user's list, and the editor
pages (the root template's, a variant's) open on the newest one still valid."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client

from sysprompt.editor.cwds import RECENT_CWDS_MAX
from sysprompt.editor.models import EditorPreference


@pytest.fixture
def dirs(allowed_root: Path) -> list[Path]:
    made = [allowed_root / f"project-{n}" for n in range(RECENT_CWDS_MAX + 2)]
    for path in made:
        path.mkdir()
    return made


def remember(client: Client, cwd: str) -> tuple[int, dict[str, object]]:
    response = client.post("/editor/cwd", {"cwd": cwd})
    return response.status_code, response.json()


def test_remembered_cwd_opens_the_editor_for_that_user_only(
    author_web: Client, viewer_web: Client, dirs: list[Path], allowed_root: Path
) -> None:
    assert remember(author_web, str(dirs[0])) == (200, {"recent": [str(dirs[0])]})
    assert remember(author_web, str(dirs[1]) + "/")[1] == {"recent": [str(dirs[1]), str(dirs[0])]}

    for url in ("/editor/", "/library/core"):
        page = author_web.get(url)
        assert page.context["cwd"] == str(dirs[1]), url
        content = page.content.decode()
        assert f'id="preview-cwd" name="cwd" class="preview-field mono" value="{dirs[1]}"' in (
            content
        )
        options = f'<option value="{dirs[1]}"></option><option value="{dirs[0]}"></option>'
        assert options in content
    assert viewer_web.get("/editor/").context["cwd"] == str(allowed_root)  # the first root


def test_remembered_cwds_keep_the_newest_once_each(author_web: Client, dirs: list[Path]) -> None:
    for path in dirs:
        remember(author_web, str(path))
    remember(author_web, str(dirs[-3]))

    recent = EditorPreference.objects.get().recent_cwds
    expected = [dirs[-3], dirs[-1], dirs[-2], *reversed(dirs[-RECENT_CWDS_MAX:-3])]
    assert recent == [str(path) for path in expected]


def test_remembered_cwd_gone_falls_back_to_the_next_valid(
    author_web: Client, dirs: list[Path]
) -> None:
    remember(author_web, str(dirs[0]))
    remember(author_web, str(dirs[1]))
    shutil.rmtree(dirs[1])

    assert author_web.get("/editor/").context["cwd"] == str(dirs[0])


@pytest.mark.parametrize(
    ("cwd", "reason"),
    [
        ("relative/dir", "is not an absolute path"),
        ("/", "outside the allowed roots"),
        ("{root}/missing", "is not an existing directory"),
        ("/" + "x" * 5000, "Ensure this value has at most"),
        ("", "This field is required."),
    ],
)
def test_remember_refuses_what_a_preview_refuses(
    author_web: Client, allowed_root: Path, cwd: str, reason: str
) -> None:
    status, body = remember(author_web, cwd.format(root=allowed_root))

    assert status == 400
    assert reason in str(body["error"])
    assert EditorPreference.objects.count() == 0


def test_deleting_the_user_deletes_the_preference(
    author: User, author_web: Client, dirs: list[Path]
) -> None:
    remember(author_web, str(dirs[0]))
    author.delete()

    assert EditorPreference.objects.count() == 0
