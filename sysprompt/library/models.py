"""What the library stores: fragments, their variants' histories, what the installer
shipped, and the agent hosts' instance overrides.

* :class:`Fragment` is a name (library spec §2.1), created with its first version.
* :class:`FragmentVersion` is append-only, like the root template's versions: each
  variant of a fragment (``provider``/``model`` normalised, ``""`` for "any") numbers its
  versions from 1; the highest number is the variant's current state, a deleted one
  included (deleting adds a version marked ``deleted``). A stored version is never
  changed or deleted. The unique constraint on (fragment, provider, model, number) is
  also the index that finds a variant's newest version. ``based_on`` names (by its
  SHA-256) the shipped default text the version's text started from: the installer's own
  versions are their text; a person's or an import's carry on from the version before
  (a restore from the version restored), so "newer default available" means the
  installer has since shipped another text, not merely that the text was edited.
* :class:`ShippedDefault` is what the installer last shipped for a variant (text and
  settings) and whether a person pinned their own text ("Keep mine").
* :class:`HostOverride` is an agent host's instance override, as the JSON it was given.

Writes go through :mod:`sysprompt.library.services`; reads through
:mod:`sysprompt.library.selectors`.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from sysprompt.history import HistoryRow
from sysprompt_core.library import FRAGMENT_NAME_MAX_LENGTH
from sysprompt_core.limits import MODEL_MAX_LENGTH

STRATEGY_CHOICES = [("append", "append"), ("prepend", "prepend")]
SOURCE_CHOICES = [("user", "user"), ("default", "default"), ("import", "import")]


def _variant_constraints(prefix: str) -> list[models.BaseConstraint]:
    return [
        models.CheckConstraint(
            condition=models.Q(model="") | ~models.Q(provider=""),
            name=f"{prefix}_model_needs_provider",
        ),
    ]


class Fragment(models.Model):
    """A fragment's name; its variants and their versions hang off it."""

    name = models.CharField(max_length=FRAGMENT_NAME_MAX_LENGTH, unique=True)
    created_at = models.DateTimeField(editable=False)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class FragmentVersion(HistoryRow):
    """One saved state of one variant of a fragment; the highest ``number`` is current."""

    stored_message = "Fragment {row} is stored; add a new version."
    kept_message = (
        "Fragment {row} is part of the history; delete the variant instead (which adds a version)."
    )

    fragment = models.ForeignKey(
        Fragment,
        on_delete=models.PROTECT,
        related_name="versions",
        editable=False,
        db_index=False,  # the unique (fragment, provider, model, number) index serves it
    )
    provider = models.CharField(
        max_length=MODEL_MAX_LENGTH, blank=True, editable=False, help_text='Normalised; "": any.'
    )
    model = models.CharField(
        max_length=MODEL_MAX_LENGTH, blank=True, editable=False, help_text='Normalised; "": any.'
    )
    number = models.PositiveIntegerField(editable=False)
    text = models.TextField(blank=True, editable=False)
    compress = models.BooleanField(default=False, editable=False)
    defaults = models.JSONField(
        default=dict, blank=True, editable=False, help_text="Values for var: as a preset."
    )
    strategy = models.CharField(
        max_length=16, choices=STRATEGY_CHOICES, default="append", editable=False
    )
    source = models.CharField(max_length=16, choices=SOURCE_CHOICES, editable=False)
    deleted = models.BooleanField(
        default=False, editable=False, help_text="This version deletes the variant."
    )
    based_on = models.CharField(
        max_length=64,
        blank=True,
        editable=False,
        help_text='SHA-256 of the shipped text this version\'s text started from; "": none.',
    )
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        editable=False,
    )
    created_at = models.DateTimeField(editable=False)

    class Meta:
        ordering = ["fragment", "provider", "model", "-number"]
        constraints = [
            models.UniqueConstraint(
                fields=["fragment", "provider", "model", "number"],
                name="library_version_number_unique",
            ),
            models.CheckConstraint(
                condition=models.Q(number__gte=1), name="library_version_number_gte_1"
            ),
            models.CheckConstraint(
                condition=models.Q(strategy__in=["append", "prepend"]),
                name="library_version_strategy_valid",
            ),
            models.CheckConstraint(
                condition=models.Q(source__in=["user", "default", "import"]),
                name="library_version_source_valid",
            ),
            *_variant_constraints("library_version"),
        ]

    def __str__(self) -> str:
        variant = "/".join(part or "—" for part in (self.provider, self.model))
        return f"{self.fragment_id} {variant} version {self.number}"


class ShippedDefault(models.Model):
    """What the installer last shipped for one variant, and whether it is pinned."""

    fragment = models.ForeignKey(
        Fragment,
        on_delete=models.PROTECT,
        related_name="shipped",
        db_index=False,  # the unique (fragment, provider, model) index serves it
    )
    provider = models.CharField(max_length=MODEL_MAX_LENGTH, blank=True)
    model = models.CharField(max_length=MODEL_MAX_LENGTH, blank=True)
    text = models.TextField(blank=True)
    compress = models.BooleanField(default=False)
    defaults = models.JSONField(default=dict, blank=True)
    strategy = models.CharField(max_length=16, choices=STRATEGY_CHOICES, default="append")
    pinned = models.BooleanField(
        default=False, help_text='"Keep mine": the installer leaves this variant alone.'
    )
    updated_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["fragment", "provider", "model"], name="library_shipped_variant_unique"
            ),
            models.CheckConstraint(
                condition=models.Q(strategy__in=["append", "prepend"]),
                name="library_shipped_strategy_valid",
            ),
            *_variant_constraints("library_shipped"),
        ]

    def __str__(self) -> str:
        variant = "/".join(part or "—" for part in (self.provider, self.model))
        return f"shipped {self.fragment_id} {variant}"


class HostOverride(models.Model):
    """An agent host's instance override for one prompt (library spec §4, level 1)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    prompt = models.ForeignKey("sysprompt.Prompt", on_delete=models.PROTECT, related_name="+")
    override = models.JSONField(null=True, blank=True, help_text="As given; null: none.")
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    updated_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "prompt"], name="library_hostoverride_unique"),
        ]

    def __str__(self) -> str:
        return f"override of user {self.user_id} for prompt {self.prompt_id}"
