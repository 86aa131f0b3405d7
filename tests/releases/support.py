"""What the releases tests share: users with and without the publish permission, and
one-line edits of the working copy."""

from __future__ import annotations

from django.contrib.auth.models import Permission, User

from sysprompt.library import services as library
from sysprompt.library.selectors import VariantState
from sysprompt.prompts import services as prompts
from sysprompt.prompts.models import TemplateVersion


def user(username: str, *codenames: str) -> User:
    """A user holding the permissions ``codenames`` (``app_label.codename``)."""
    made = User.objects.create_user(username=username, password=None)
    for name in codenames:
        app_label, codename = name.split(".")
        made.user_permissions.add(
            Permission.objects.get(content_type__app_label=app_label, codename=codename)
        )
    return User.objects.get(pk=made.pk)  # a fresh instance: no stale permission cache


AUTHOR = "sysprompt.change_templateversion"
PUBLISH = "releases.publish_release"


def save(name: str, text: str, provider: str | None = None, **settings: object) -> VariantState:
    return library.variant_save(
        name=name,
        provider=provider,
        text=text,
        author=None,
        **settings,  # type: ignore[arg-type]
    )


def template(text: str) -> TemplateVersion:
    return prompts.template_save(text=text)
