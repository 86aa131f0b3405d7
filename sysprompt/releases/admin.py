"""The Django admin: releases, labels and their moves, test contexts and agent hosts'
labels, read-only.

Every write goes through the releases services (the API and the editor), which check
targets, keep every move in a label's history and ask for the permission to publish
before a protected label moves; the admin only shows what is stored, for support.
"""

from __future__ import annotations

from django.contrib import admin

from sysprompt.library.admin import ReadOnlyAdmin
from sysprompt.releases.models import HostLabel, Label, LabelMove, Release, TestContext


@admin.register(Release)
class ReleaseAdmin(ReadOnlyAdmin):
    list_display = ("number", "message", "author", "created_at", "template_version")
    list_select_related = ("author",)
    search_fields = ("message",)


@admin.register(Label)
class LabelAdmin(ReadOnlyAdmin):
    list_display = ("name", "target", "protected", "updated_at", "updated_by")
    list_filter = ("protected",)
    list_select_related = ("updated_by",)


@admin.register(LabelMove)
class LabelMoveAdmin(ReadOnlyAdmin):
    list_display = ("label", "from_target", "to_target", "author", "at", "rollback", "message")
    list_filter = ("rollback",)
    list_select_related = ("label", "author")


@admin.register(TestContext)
class TestContextAdmin(ReadOnlyAdmin):
    list_display = ("name", "cwd", "provider", "model", "updated_at")


@admin.register(HostLabel)
class HostLabelAdmin(ReadOnlyAdmin):
    list_display = ("user", "label", "updated_at", "updated_by")
    list_select_related = ("user", "label", "updated_by")
