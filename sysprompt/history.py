"""Rows of a history: written once, then kept as they are.

Template versions, fragment versions and releases are what stored conversations and
labels point at, so none of them changes or goes away once stored. :class:`HistoryRow`
refuses a second ``save`` of a row and its ``delete`` with
:class:`~sysprompt.errors.TemplateVersionImmutable`, in the words each model gives.
(Queryset ``update``/``delete`` bypass model methods; services never call them on
these tables.)
"""

from __future__ import annotations

from typing import Any, ClassVar

from django.db import models

from sysprompt.errors import TemplateVersionImmutable


class HistoryRow(models.Model):
    """An abstract model whose rows are saved once and never deleted;
    ``stored_message`` and ``kept_message`` say so, ``{row}`` standing for the row."""

    stored_message: ClassVar[str]
    kept_message: ClassVar[str]

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise TemplateVersionImmutable(self.stored_message.format(row=self))
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise TemplateVersionImmutable(self.kept_message.format(row=self))
