"""The preview panel of both editors: the root template's and a fragment variant's.

Pipeline: the form's fields (the editor's text, cwd, model, conversation id, and the
host context an agent host would send: provider, tools as a comma list, variables as
``name=value`` lines; ``compress``; ``fragment``, the name when the text is a fragment's
draft) → :func:`host_context_check` → ``rendering.template_preview`` → the context
``editor/_preview.html`` shows: diagnostics (lint with the library: unknown fragments,
include cycles), the prompt and its size, how much of it every conversation shares (the
shared prefix, and the tag where it ends) — in characters and in tokens for the
provider and model given (``rendering.Preview.counted``: exact, or a marked estimate) —
every variable, which variant of each fragment was used, and what compression did.
Lint runs even when the render cannot (a bad cwd).
Nothing is stored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict
from typing import Any

from sysprompt import errors
from sysprompt.editor.library_links import variant_label, variant_url
from sysprompt.library.validation import fragment_name_valid
from sysprompt.prompts import rendering, validation
from sysprompt_core.library import FragmentUse
from sysprompt_core.template import PromptTooLarge


def tools_parse(text: str) -> list[str]:
    """``"shell, grep"`` (commas or line breaks between names) → ``["shell", "grep"]``."""
    return [name.strip() for name in text.replace("\n", ",").split(",") if name.strip()]


def assignments_parse(text: str, field: str) -> dict[str, str]:
    """``name=value`` lines → a dict (blank lines skipped; the value is everything after
    the first ``=``, kept as written). :class:`InvalidInput` names ``field`` and the line."""
    values: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        name, equals, value = line.partition("=")
        if not equals or not name.strip():
            raise errors.InvalidInput(
                field, f"Line {number}: write one name=value per line (e.g. project=demo)."
            )
        values[name.strip()] = value
    return values


def assignments_text(values: Mapping[str, str]) -> str:
    """The inverse of :func:`assignments_parse`, for a form's initial text."""
    return "\n".join(f"{name}={value}" for name, value in values.items())


def preview_context(
    *,
    text: str,
    cwd: str,
    model: str = "",
    conversation_id: str = "",
    provider: str = "",
    tools: str = "",
    variables: str = "",
    compress: bool = False,
    fragment: str = "",
) -> dict[str, Any]:
    """Everything ``_preview.html`` shows: lint always, the render when the input allows."""
    context: dict[str, Any] = {
        "cwd": cwd,
        "model": model,
        "conversation_id": conversation_id,
        "provider": provider,
        "tools": tools,
        "variables_text": variables,
    }
    try:
        validation.template_size_check(text)
    except errors.TemplateTooLarge as exc:
        return {**context, "template_error": str(exc), "diagnostics": [], "diagnostics_data": []}
    problems: dict[str, str] = {}
    name = _fragment_name(fragment, problems)
    host = _host(provider=provider, tools=tools, variables=variables, problems=problems)
    if not cwd.strip():
        problems["cwd"] = "Give the absolute path of a working directory to preview against."
    if conversation_id:
        try:
            validation.conversation_id_check(conversation_id)
        except errors.InvalidInput as exc:
            problems["conversation_id"] = exc.message
    preview = None
    if not problems and host is not None:
        try:
            preview = rendering.template_preview(
                cwd=cwd,
                model=model,
                conversation_id=conversation_id or None,
                template=text,
                compress_template=compress,
                host=host,
            )
        except errors.InvalidInput as exc:
            problems[exc.field] = exc.message
        except PromptTooLarge as exc:
            context["template_error"] = str(exc)
    if preview is not None and name is None:
        diagnostics = preview.diagnostics
    else:
        diagnostics = rendering.template_lint(
            text, name=name, provider=provider or None, model=model or None
        )
    context.update(errors=problems, diagnostics=diagnostics, preview=preview)
    if preview is not None:
        context.update(_rendered(preview))
    context["diagnostics_data"] = [
        {"line": d.line, "column": d.column, "severity": d.severity, "message": d.message}
        for d in diagnostics
    ]
    return context


def _fragment_name(fragment: str, problems: dict[str, str]) -> str | None:
    if not fragment:
        return None
    try:
        return fragment_name_valid(fragment, "fragment")
    except errors.InvalidInput as exc:
        problems[exc.field] = exc.message
        return None


def _host(
    *, provider: str, tools: str, variables: str, problems: dict[str, str]
) -> validation.HostContext | None:
    try:
        return validation.host_context_check(
            provider=provider.strip() or None,
            tools=tools_parse(tools),
            variables=assignments_parse(variables, "variables"),
        )
    except errors.InvalidInput as exc:
        problems[exc.field] = exc.message
        return None


def _rendered(preview: rendering.Preview) -> dict[str, Any]:
    prompt = preview.rendered.prompt
    compression = preview.compression
    shared, end = preview.rendered.shared_prefix_chars, preview.rendered.prefix_end
    counted = preview.counted
    return {
        "prompt": prompt,
        "characters": len(prompt or ""),
        "tokens": counted.prompt,
        "lines": len((prompt or "").splitlines()),
        "shared_prefix": {
            "characters": shared,
            "tokens": counted.shared_prefix,
            "whole": end is None and shared == len(prompt or ""),
            "end": end,
        },
        # Each distinct value once, capped: 1,000 names of one large file must not
        # make a page of a gigabyte.
        "variables": [asdict(v) for v in rendering.preview_variables(preview.rendered.values)],
        "fragments_used": fragment_rows(preview.rendered.fragments_used),
        "compression": compression,
    }


def fragment_rows(used: Iterable[FragmentUse]) -> list[dict[str, Any]]:
    """The "Fragments used" rows: name, variant, version, and a link to the variant."""
    return [
        {
            "name": use.name,
            "variant": variant_label(use.provider, use.model),
            "version": use.version,
            "url": variant_url("library-variant", use.name, use.provider, use.model),
        }
        for use in used
    ]
