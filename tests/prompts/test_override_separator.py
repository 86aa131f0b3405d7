"""The separator between the base and an override, byte for byte, as docs/library.md
shows it: ``"\\n\\n"`` between the two texts as they are (library spec §4), so after the
default template's last line ending an appended text follows two blank lines."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.contrib.auth.models import User

from sysprompt.conf import DEFAULT_TEMPLATE
from sysprompt.prompts import services, validation
from sysprompt_core.library.overrides import Strategy, merge

pytestmark = pytest.mark.django_db

DOC = Path(__file__).resolve().parents[2] / "docs" / "library.md"
DOC_CWD = "/home/ada/proj"


def documented() -> dict[str, str]:
    """The ``base``, ``text``, ``append`` and ``prepend`` lines of the doc's example."""
    block = re.search(r"```text\n(base: .*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert block is not None, "docs/library.md lost the separator example"
    lines = (line.split(":", 1) for line in block.group(1).splitlines())
    return {name: json.loads(value) for name, value in lines}


@pytest.mark.parametrize("strategy", ["append", "prepend"])
def test_separator_merge_gives_the_documented_bytes(strategy: Strategy) -> None:
    example = documented()

    assert merge(example["base"], example["text"], strategy) == example[strategy]


def test_separator_after_the_default_template_is_two_blank_lines(
    allowed_root: Path, db: None
) -> None:
    project = allowed_root / "proj"
    project.mkdir()
    owner = User.objects.create_user("owner")
    example = {name: text.replace(DOC_CWD, str(project)) for name, text in documented().items()}
    services.template_save(text=DEFAULT_TEMPLATE)

    stored = services.conversation_prompt_construct(
        conversation_id="c1",
        cwd=str(project),
        user=owner,
        host=validation.host_context_check(override=example["text"]),
    ).prompt

    assert stored.system_prompt == example["append"]
    assert stored.system_prompt.endswith(".\n\n\nBe brief.")
