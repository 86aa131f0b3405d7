"""The History endpoints: the root template's and a variant's are the same set."""

from __future__ import annotations

from django.urls import URLPattern

from sysprompt.editor import urls


def _history(prefix: str, name_prefix: str) -> dict[str, str]:
    """Route suffix under ``prefix`` → name without ``name_prefix``, History routes only."""
    found = {}
    for pattern in urls.urlpatterns:
        assert isinstance(pattern, URLPattern)
        route, name = str(pattern.pattern), pattern.name or ""
        if route.startswith(f"{prefix}history") and name.startswith(name_prefix):
            found[route.removeprefix(prefix)] = name.removeprefix(name_prefix)
    return found


def test_history_routes_of_the_template_and_a_variant_are_the_same_set() -> None:
    template = _history("editor/", "")
    variant = _history("library/<path:name>/-/", "library-")

    assert template == variant
    assert set(template.values()) == {
        "history",
        "version",
        "version-diff",
        "versions-diff",
        "versions-compare",
    }
