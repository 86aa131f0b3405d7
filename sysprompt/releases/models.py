"""What the releases app stores: releases, labels with their histories, test contexts
and the agent hosts' labels.

* :class:`Release` is an immutable, numbered snapshot of the whole working copy: the
  template version (none for the built-in default template) and, one
  :class:`ReleaseFragment` row each, the version of every live fragment variant
  (presets and their settings are variants; compression is a version's setting). It
  references those version rows and copies no text; ``fingerprint`` names exactly
  that set of rows, so the same working copy is never released twice.
* :class:`Label` points at a target (``"latest"``, ``{"release": N}`` or a split),
  stored in the canonical JSON form of :mod:`sysprompt_core.releases.targets`; every
  change of target is a :class:`LabelMove` (from, to, who, when, message).
* :class:`TestContext` is a host context authors save to see in every impact report.
* :class:`HostLabel` is the label an agent host's conversations of one prompt use when
  a call names none.

Everything here belongs to one prompt (``sysprompt.Prompt``): release numbers count per
prompt, and a label name is per prompt while whether it is protected is the same for
every prompt.

Writes go through :mod:`sysprompt.releases.services`; reads through
:mod:`sysprompt.releases.selectors`.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from sysprompt.history import HistoryRow
from sysprompt.releases.permissions import PUBLISH_CODENAME
from sysprompt_core.limits import CWD_MAX_LENGTH, MODEL_MAX_LENGTH
from sysprompt_core.releases import LABEL_NAME_MAX_LENGTH


class Release(HistoryRow):
    """One snapshot of the working copy; see the module docstring."""

    stored_message = "{row} is stored; create a new release."
    kept_message = "{row} is part of the history; it stays."

    prompt = models.ForeignKey(
        "sysprompt.Prompt", on_delete=models.PROTECT, related_name="releases", editable=False
    )
    number = models.PositiveIntegerField(editable=False, help_text="Counted per prompt.")
    message = models.TextField(blank=True, editable=False)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        editable=False,
    )
    created_at = models.DateTimeField(editable=False)
    template_version = models.ForeignKey(
        "sysprompt.TemplateVersion",
        to_field="number",
        db_column="template_version",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        editable=False,
        help_text="Empty: the built-in default template (no version was saved yet).",
    )
    fingerprint = models.CharField(
        max_length=64,
        editable=False,
        help_text="SHA-256 of the template version and the variant versions it holds.",
    )

    class Meta:
        ordering = ["-number"]
        get_latest_by = "number"
        permissions = [(PUBLISH_CODENAME, "Can move protected labels (publish releases)")]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(number__gte=1), name="releases_release_number_gte_1"
            ),
            models.UniqueConstraint(fields=["prompt", "number"], name="releases_release_number"),
            models.UniqueConstraint(
                fields=["prompt", "fingerprint"], name="releases_release_fingerprint"
            ),
        ]

    def __str__(self) -> str:
        return f"release {self.number}"


class ReleaseFragment(models.Model):
    """The version of one fragment variant in a release."""

    release = models.ForeignKey(
        Release,
        on_delete=models.PROTECT,
        related_name="fragments",
        db_index=False,  # the unique (release, fragment, version) index serves it
    )
    fragment = models.ForeignKey(
        "library.Fragment", on_delete=models.PROTECT, related_name="+", db_index=False
    )
    version = models.ForeignKey(
        "library.FragmentVersion",
        on_delete=models.PROTECT,
        related_name="+",
        db_index=False,  # versions are never deleted: nothing looks rows up by version
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["release", "fragment", "version"], name="releases_fragment_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.release_id}: version row {self.version_id}"


class Label(models.Model):
    """A name that says what conversations are built from; see the module docstring."""

    prompt = models.ForeignKey(
        "sysprompt.Prompt", on_delete=models.PROTECT, related_name="labels", editable=False
    )
    name = models.CharField(max_length=LABEL_NAME_MAX_LENGTH)
    target = models.JSONField(
        help_text='"latest", {"release": N} or {"split": [{"release", "weight"}, …]}.'
    )
    protected = models.BooleanField(
        default=False,
        help_text="Moving it needs the permission to publish releases. Whether a name is "
        "protected is deployment-wide: every prompt's label of that name says the same.",
    )
    gate = models.JSONField(
        null=True,
        blank=True,
        help_text='{"suite", "max_regressions", "min_pass_rate"}: a move needs a passing '
        "evaluation run (sysprompt.releases.gates); empty: no gate.",
    )
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )

    class Meta:
        ordering = ["prompt", "name"]
        constraints = [
            models.UniqueConstraint(fields=["prompt", "name"], name="releases_label_name"),
        ]

    def __str__(self) -> str:
        return self.name


class LabelMove(models.Model):
    """One change of a label's target (its creation included: ``from_target`` empty)."""

    label = models.ForeignKey(
        Label,
        on_delete=models.PROTECT,
        related_name="moves",
        db_index=False,  # the (label, id) index serves it
    )
    from_target = models.JSONField(null=True, blank=True, help_text="Empty: the label was created.")
    to_target = models.JSONField()
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    at = models.DateTimeField()
    message = models.TextField(blank=True)
    rollback = models.BooleanField(default=False, help_text="Made by a rollback.")

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["label", "id"], name="releases_move_label_id_idx")]

    def __str__(self) -> str:
        return f"{self.label_id} moved at {self.at:%Y-%m-%d %H:%M}"


class TestContext(models.Model):
    """A host context authors keep as a fixture of every impact report."""

    __test__ = False  # not a pytest test class, whatever its name says

    prompt = models.ForeignKey(
        "sysprompt.Prompt", on_delete=models.PROTECT, related_name="test_contexts", editable=False
    )
    name = models.CharField(max_length=LABEL_NAME_MAX_LENGTH)
    cwd = models.CharField(max_length=CWD_MAX_LENGTH)
    values = models.JSONField(
        default=dict, blank=True, help_text="Host-local values, as an agent host supplies them."
    )
    provider = models.CharField(max_length=MODEL_MAX_LENGTH, blank=True)
    model = models.CharField(max_length=MODEL_MAX_LENGTH, blank=True)
    tools = models.JSONField(default=list, blank=True)
    variables = models.JSONField(default=dict, blank=True)
    override = models.JSONField(null=True, blank=True, help_text="The thread override.")
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )

    class Meta:
        ordering = ["prompt", "name"]
        constraints = [
            models.UniqueConstraint(fields=["prompt", "name"], name="releases_testcontext_name"),
        ]

    def __str__(self) -> str:
        return self.name


class HostLabel(models.Model):
    """The label an agent host's conversations of one prompt use when a call names none."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    prompt = models.ForeignKey("sysprompt.Prompt", on_delete=models.PROTECT, related_name="+")
    label = models.ForeignKey(Label, on_delete=models.PROTECT, related_name="hosts")
    updated_at = models.DateTimeField()
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "prompt"], name="releases_hostlabel_unique"),
        ]

    def __str__(self) -> str:
        return f"label of user {self.user_id} for prompt {self.prompt_id}"
