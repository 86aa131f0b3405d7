"""The transfer app: the library and the root template as a file tree (export, import)."""

from __future__ import annotations

from django.apps import AppConfig


class TransferConfig(AppConfig):
    name = "sysprompt.transfer"
    label = "transfer"
    verbose_name = "Library export and import"
