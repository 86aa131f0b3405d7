"""The Django admin: the library's tables, read-only.

Every write to the library goes through its services (the editor's Library pages and
the API), which keep histories append-only and check names, settings and overrides; the
admin only shows what is stored, for support. Nobody, superusers included, may add,
change or delete a row here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib import admin
from django.db.models import Model
from django.http import HttpRequest

from sysprompt.library.models import FragmentVersion, HostOverride, ShippedDefault

if TYPE_CHECKING:
    _Admin = admin.ModelAdmin[Model]
else:  # the admin classes take no type parameters at run time
    _Admin = admin.ModelAdmin


class ReadOnlyAdmin(_Admin):
    """Lists and shows rows; never adds, changes or deletes them."""

    list_per_page = 50
    show_full_result_count = False

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(FragmentVersion)
class FragmentVersionAdmin(ReadOnlyAdmin):
    list_display = ("fragment", "provider", "model", "number", "source", "deleted", "created_at")
    list_filter = ("source", "deleted")
    list_select_related = ("fragment",)
    search_fields = ("=fragment__name",)
    ordering = ("fragment__name", "provider", "model", "-number")


@admin.register(ShippedDefault)
class ShippedDefaultAdmin(ReadOnlyAdmin):
    list_display = ("fragment", "provider", "model", "pinned", "updated_at")
    list_filter = ("pinned",)
    list_select_related = ("fragment",)


@admin.register(HostOverride)
class HostOverrideAdmin(ReadOnlyAdmin):
    list_display = ("user", "updated_by", "updated_at")
    list_select_related = ("user", "updated_by")
