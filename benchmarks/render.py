"""Render benchmark: sysprompt against Jinja2 and a floor, in the same run.

Three workloads, each built once as abstract pieces and emitted in both syntaxes
(sysprompt ``[if k]`` … and Jinja2 ``{% if … %}`` with trim_blocks/lstrip_blocks, which
implement the same standalone-line rule); the two outputs are checked to be equal
before anything is timed:

* realistic — a ~6 KB system prompt: ~30 variables, a few nested blocks, a 4 KB file;
* dense     — 1 MB with a tag every ~40 bytes and blocks three deep;
* prose     — 1 MB of prose with a tag every ~8 KB.

Per workload it prints µs per render from source, µs per render of a parsed template,
MB/s of source, and ratios to Jinja2's compiled render and to the floor: one
``re.finditer`` pass of the engine's own tag pattern over the template (the lexing
pass any renderer of this grammar needs) plus a ``"".join`` of the output pieces.

Run: ``.venv/bin/python benchmarks/render.py [--quick]``
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import jinja2

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sysprompt_core.template import compile as compile_template  # noqa: E402
from sysprompt_core.template import render  # noqa: E402
from sysprompt_core.template.lexer import PATTERN  # noqa: E402
from sysprompt_core.template.nodes import Block, Node, Variable  # noqa: E402

VALUES: dict[str, str | None] = {
    "system:time": "2026-11-22T09:15:03.123Z",
    "system:date": "2026-11-22",
    "system:os": "linux",
    "system:hostname": "build-07",
    "prompt:cwd": "/home/ada/projects/sysprompt",
    "prompt:model": "claude-sonnet",
    "prompt:conversation_id": "conv-8f14e45f",
    "git:branch": "main",
    "git:status": " M sysprompt/template/parser.py\n?? notes.txt",
    "file:AGENTS.md": ("Use tabs. Prefer small functions. Run the tests before a commit.\n" * 64)[
        :4096
    ],
    "file:CONVENTIONS.md": "Names are nouns; functions are verbs.",
    "file:missing.md": None,
    "prompt:workspace": None,
}
KEYS = list(VALUES)


@dataclass
class Workload:
    """A template written once as pieces, emitted in both syntaxes."""

    name: str
    sysprompt: list[str] = field(default_factory=list)
    jinja: list[str] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)

    def _ident(self, key: str) -> str:
        return self.names.setdefault(key, f"v{len(self.names)}")

    def text(self, text: str) -> None:
        self.sysprompt.append(text)
        self.jinja.append(text.replace("{", "{{ '{' }}"))

    def var(self, key: str) -> None:
        self.sysprompt.append(f"[{key}]")
        self.jinja.append("{{ " + self._ident(key) + " }}")

    def open(self, key: str, negated: bool = False) -> None:
        self.sysprompt.append(f"[if {'!' if negated else ''}{key}]\n")
        self.jinja.append(f"{{% if {'not ' if negated else ''}e_{self._ident(key)} %}}\n")

    def otherwise(self) -> None:
        self.sysprompt.append("[else]\n")
        self.jinja.append("{% else %}\n")

    def close(self) -> None:
        self.sysprompt.append("[endif]\n")
        self.jinja.append("{% endif %}\n")

    def jinja_context(self) -> dict[str, object]:
        context: dict[str, object] = {}
        for key, ident in self.names.items():
            value = VALUES.get(key)
            context[ident] = value or ""
            context[f"e_{ident}"] = value is not None
        return context


SENTENCES = [
    "You are a careful software engineer working with the user in their repository. ",
    "Prefer small, reviewable changes and explain the reason for each one. ",
    "When a test fails, read the failure before changing any code. ",
    "Never invent an API: look it up in the project or its documentation first. ",
    "Keep answers short unless the user asks for detail. ",
]


def realistic() -> Workload:
    w = Workload("realistic 6 KB")
    rng = random.Random(6)
    w.text("You are a coding assistant. The time is ")
    w.var("system:time")
    w.text(" (")
    w.var("system:date")
    w.text(") on ")
    w.var("system:os")
    w.text(" host ")
    w.var("system:hostname")
    w.text(".\n")
    for section in range(6):
        w.text(f"\n## Section {section}\n")
        for _ in range(3):
            w.text("".join(rng.choice(SENTENCES) for _ in range(3)) + "The project lives in ")
            w.var("prompt:cwd")
            w.text(" and you are ")
            w.var("prompt:model")
            w.text(".\n")
        w.open("git:branch")
        w.text("You are on branch ")
        w.var("git:branch")
        w.text(".\n")
        w.open("git:status")
        w.text("Uncommitted changes:\n")
        w.var("git:status")
        w.text("\n")
        w.close()
        w.otherwise()
        w.text("This folder is not a git repository.\n")
        w.close()
    w.open("file:AGENTS.md")
    w.text("Project instructions:\n")
    w.var("file:AGENTS.md")
    w.text("\n")
    w.close()
    w.open("file:missing.md", negated=True)
    w.text("There is no missing.md; conversation ")
    w.var("prompt:conversation_id")
    w.text(".\n")
    w.close()
    return w


def dense(size: int = 1 << 20) -> Workload:
    w = Workload("dense 1 MB")
    rng = random.Random(40)
    length = depth = 0
    while length < size:
        roll = rng.random()
        if roll < 0.12 and depth < 3:
            key, negated = rng.choice(KEYS), rng.random() < 0.3
            w.open(key, negated)
            depth += 1
            length += len(key) + 7
        elif roll < 0.24 and depth:
            if rng.random() < 0.3:
                w.otherwise()
            w.close()
            depth -= 1
            length += 16
        else:
            key = rng.choice(KEYS)
            w.text("lorem ipsum dolor sit ")
            w.var(key)
            w.text(" amet.\n")
            length += 30 + len(key)
    for _ in range(depth):
        w.close()
    return w


def prose(size: int = 1 << 20) -> Workload:
    w = Workload("prose 1 MB")
    rng = random.Random(8)
    length = 0
    while length < size:
        paragraph = "".join(rng.choice(SENTENCES) for _ in range(110)) + "\n\n"
        w.text(paragraph)
        w.var(rng.choice(KEYS))
        w.text("\n")
        length += len(paragraph) + 20
    return w


def pieces(nodes: tuple[Node, ...], values: dict[str, str | None]) -> list[str]:
    """The strings a render joins (the floor joins the same ones)."""
    out: list[str] = []
    stack: list[Iterator[Node]] = [iter(nodes)]
    while stack:
        for node in stack[-1]:
            if isinstance(node, str):
                out.append(node)
            elif isinstance(node, Variable):
                if values.get(node.key):
                    out.append(values[node.key] or "")
            elif isinstance(node, Block):
                exists = values.get(node.key) is not None
                stack.append(iter(node.then if exists is not node.negated else node.otherwise))
                break
        else:
            stack.pop()
    return out


def per_call(function: Callable[[], object], budget: float) -> float:
    """Median seconds per call over runs filling about ``budget`` seconds."""
    start = time.perf_counter()
    function()
    once = max(time.perf_counter() - start, 1e-7)
    number = max(1, int(0.05 / once))
    runs = max(5, min(30, int(budget / (once * number))))
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(number):
            function()
        samples.append((time.perf_counter() - start) / number)
    return statistics.median(samples)


def bench(workload: Workload, budget: float) -> dict[str, float]:
    source = "".join(workload.sysprompt)
    jinja_source = "".join(workload.jinja)
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    jinja_compiled = env.from_string(jinja_source)
    context = workload.jinja_context()
    template = compile_template(source)
    expected = render(source, VALUES)
    if jinja_compiled.render(context) != expected or template.render(VALUES) != expected:
        raise SystemExit(f"{workload.name}: outputs differ between sysprompt and Jinja2")
    joined = pieces(template.nodes, VALUES)

    def floor() -> str:
        for _ in PATTERN.finditer(source):
            pass
        return "".join(joined)

    return {
        "bytes": len(source.encode()),
        "from source": per_call(lambda: render(source, VALUES), budget),
        "parsed": per_call(lambda: template.render(VALUES), budget),
        "jinja2 from source": per_call(
            lambda: env.from_string(jinja_source).render(context), budget
        ),
        "jinja2 compiled": per_call(lambda: jinja_compiled.render(context), budget),
        "floor": per_call(floor, budget),
    }


def report(name: str, r: dict[str, float]) -> list[str]:
    floor, jinja = r["floor"], r["jinja2 compiled"]
    mb = r["bytes"] / 1e6
    lines = [f"\n{name}  ({r['bytes']:,} bytes)"]
    lines.append(f"  {'':22}{'µs/render':>12}{'MB/s':>10}{'× floor':>10}{'× jinja2 compiled':>19}")
    for label in ("from source", "parsed", "jinja2 from source", "jinja2 compiled", "floor"):
        seconds = r[label]
        shown = f"sysprompt {label}" if label in ("from source", "parsed") else label
        lines.append(
            f"  {shown:22}{seconds * 1e6:12.1f}{mb / seconds:10.1f}"
            f"{seconds / floor:10.2f}{seconds / jinja:19.2f}"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter runs (less stable)")
    args = parser.parse_args()
    budget = 0.5 if args.quick else 2.0
    results = {w.name: bench(w, budget) for w in (realistic(), dense(), prose())}
    print(f"Python {sys.version.split()[0]}, Jinja2 {jinja2.__version__}; median of runs")
    for name, r in results.items():
        print("\n".join(report(name, r)))
    print("\ntargets")
    for name, r in results.items():
        target(f"{name}: from source ≤ 3× floor", r["from source"] / r["floor"], 3.0)
    r = results["realistic 6 KB"]
    target("realistic 6 KB: parsed ≤ 1.5× jinja2 compiled", r["parsed"] / r["jinja2 compiled"], 1.5)


def target(label: str, ratio: float, limit: float) -> None:
    print(f"  {label:48}{ratio:6.2f}×  {'met' if ratio <= limit else 'MISSED'}")


if __name__ == "__main__":
    main()
