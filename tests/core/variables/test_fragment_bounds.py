"""fragment: bounds — each fragment rendered once, attacks finish fast in bounded memory."""

from __future__ import annotations

import time
import tracemalloc
from pathlib import Path

import pytest

from sysprompt_core import template as engine
from sysprompt_core.limits import (
    FRAGMENT_MAX_BYTES_FACTOR,
    FRAGMENT_MAX_RENDERS,
)
from sysprompt_core.variables import Missing, ResolverOptions
from sysprompt_core.variables.fragment import Fragments
from tests.core.variables.fragment_support import CountingSource, library, render
from tests.core.variables.support import real, recording


def utf8(text: str | None) -> int:
    return len((text or "").encode("utf-8"))


def test_fragment_included_10000_times_is_read_parsed_and_rendered_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    source = CountingSource({"x": "X [prompt:model]", "y": "[fragment:x]"})
    compiled: list[str] = []
    original = engine.compile

    def counting_compile(text: str) -> engine.Template:
        compiled.append(text)
        return original(text)

    monkeypatch.setattr(engine, "compile", counting_compile)
    resolution = render("[fragment:x]\n" * 10_000 + "[fragment:y]", source, model="m")
    assert resolution.prompt == "X m\n" * 10_000 + "X m"
    assert source.lookups == {"x": 1, "y": 1}
    assert compiled.count("X [prompt:model]") == 1
    # x is rendered once at the top and once inside y (another include chain)
    assert resolution.values.state.local(Fragments).renders == 3


def test_fragment_exponential_includes_finish_fast_in_bounded_memory() -> None:
    source = library(
        {
            "a": "[fragment:b]\n" * 10_000,
            "b": "[fragment:c]\n" * 10_000,
            "c": "c" * 1024,
        }
    )
    limit = ResolverOptions().max_prompt_bytes
    tracemalloc.start()
    started = time.perf_counter()
    try:
        resolution = render("[fragment:a]", source)
        elapsed = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert elapsed < 10
    assert utf8(resolution.prompt) <= limit
    assert peak < 64 * 1_048_576
    assert resolution.values.state.local(Fragments).renders == 3


def test_fragment_diamonds_stop_at_the_render_limit() -> None:
    # ten layers of ten fragments, each including every fragment of the next layer:
    # 10**9 include chains, each with its own set of ancestors
    texts = {
        f"l{layer}/f{i}": "".join(f"[fragment:l{layer + 1}/f{j}]" for j in range(10)) + "."
        for layer in range(10)
        for i in range(10)
    }
    started = time.perf_counter()
    resolution = render("[fragment:l0/f0]", library(texts))
    assert time.perf_counter() - started < 10
    fragments = resolution.values.state.local(Fragments)
    assert fragments.renders == FRAGMENT_MAX_RENDERS
    assert fragments.spent <= FRAGMENT_MAX_BYTES_FACTOR * ResolverOptions().max_prompt_bytes
    assert resolution.prompt is not None
    assert resolution.prompt.endswith(".")


def test_fragment_past_the_byte_budget_is_missing() -> None:
    options = ResolverOptions(allowed_roots=(), max_prompt_bytes=1_000)
    texts = {f"f{i}": "x" * 900 for i in range(20)}
    template = "".join(f"[if fragment:f{i}]{i} [endif]" for i in range(20))
    resolution = render(template, library(texts), options=options)
    # each costs 1,800 bytes (source and output) of the 16,000 the resolution may spend
    assert resolution.prompt == "0 1 2 3 4 5 6 7 "
    reason = resolution.values.reason("fragment:f8")
    assert reason is not None
    assert "at most 16,000 bytes of source and output" in reason


def test_fragment_over_the_prompt_limit_is_missing() -> None:
    options = ResolverOptions(allowed_roots=(), max_prompt_bytes=100)
    source = library({"big": "y" * 101, "ok": "[if fragment:big]big[else]small[endif]"})
    resolution = render("[fragment:ok] [fragment:big]", source, options=options)
    assert resolution.prompt == "small "
    assert resolution.values.value("fragment:big") == Missing(
        "its text alone renders to 101 bytes, more than the prompt limit of 100 bytes"
    )


def test_fragment_value_over_the_room_left_is_dropped_not_cut() -> None:
    options = ResolverOptions(allowed_roots=(), max_prompt_bytes=100)
    source = library({"x": "[var:v]"})
    resolution = render("[fragment:x]", source, options=options, variables={"v": "v" * 200})
    assert resolution.prompt is None


@pytest.mark.usefixtures("audit_hook_installed")
def test_file_read_by_root_and_fragment_is_read_once(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "AGENTS.md").write_text("Use tabs.\n")
    source = library({"agents": "[file:AGENTS.md] / [file:./AGENTS.md]"})
    options = ResolverOptions(allowed_roots=())
    with recording() as log:
        resolution = render(
            "[file:AGENTS.md]\n[fragment:agents]", source, cwd=str(project), options=options
        )
    assert resolution.prompt == "Use tabs.\nUse tabs. / Use tabs."
    assert resolution.values.bytes_read == len("Use tabs.\n")
    opened = [event for event in log.events if event[0] == "open"]
    # AGENTS.md is opened once by that name, once as ./AGENTS.md, read once
    assert len(opened) == 2
    assert real(project / "AGENTS.md") in log.opened()
