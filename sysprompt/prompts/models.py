"""What sysprompt stores: named prompts, each template's history and one system prompt
per conversation.

* :class:`Prompt` is a named prompt (``support/triage``; the rule is
  :mod:`sysprompt_core.prompt_names`). Its id never changes; a rename leaves a
  :class:`PromptAlias` under the old name. Everything per prompt (template versions,
  conversations, releases, labels, test contexts, suites, runs, a host's label and
  override) points at it; the fragment library is shared. ``default`` is the prompt
  every deployment has, and what today's routes mean. A prompt may be restricted to
  groups, and so may a folder (:class:`FolderRestriction`); :class:`HostPrompts` is an
  agent host's default prompt and the prompts it may use.
* :class:`TemplateVersion` is append-only. Saving the template adds a version with the
  next number; the one with the highest number is current. A version is never changed
  or deleted, so a stored prompt can always name the version it came from.
* :class:`ConversationPrompt` is the system prompt a conversation's first turn froze
  (or its last ``construct``/``compact`` replaced), byte for byte, with its SHA-256, and
  its owner: the user whose call created it (see :mod:`sysprompt.prompts.selectors` for who may
  see and change it). Beside it, the host context it was built for (provider, tools,
  variables, thread override) and the fragment versions it used, and how much of it
  every conversation of its agent host, provider and model shares
  (``shared_prefix_chars``, agent-hosts §1); and what it was built from (releases §2):
  the ``label``, the ``release`` that label served (none for ``latest``, the working
  copy) and, under a split, the ``arm``. Those three are a record: nothing reads them
  to answer a turn.

Writes go through :mod:`sysprompt.prompts.services`; reads through
:mod:`sysprompt.prompts.selectors`.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import Group
from django.db import models

from sysprompt.history import HistoryRow
from sysprompt_core.limits import CONVERSATION_ID_MAX_LENGTH, MODEL_MAX_LENGTH
from sysprompt_core.prompt_names import PROMPT_NAME_MAX_LENGTH
from sysprompt_core.releases import LABEL_NAME_MAX_LENGTH, PRODUCTION


class Prompt(models.Model):
    """A named prompt; see the module docstring."""

    name = models.CharField(max_length=PROMPT_NAME_MAX_LENGTH, unique=True)
    description = models.TextField(blank=True)
    tags = models.JSONField(default=list, blank=True, help_text="Short strings.")
    archived = models.BooleanField(
        default=False, help_text="Hidden from lists; new conversations are refused (410)."
    )
    editor_groups = models.ManyToManyField(
        Group,
        blank=True,
        related_name="+",
        help_text="Only members (and superusers) may change it; empty: its folders decide.",
    )
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class PromptAlias(models.Model):
    """A name a prompt had: it keeps answering until a prompt takes it."""

    name = models.CharField(max_length=PROMPT_NAME_MAX_LENGTH, unique=True)
    prompt = models.ForeignKey(Prompt, on_delete=models.CASCADE, related_name="aliases")
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} → {self.prompt_id}"


class FolderRestriction(models.Model):
    """A folder (``support/``) whose prompts only the groups' members may change."""

    folder = models.CharField(max_length=PROMPT_NAME_MAX_LENGTH, unique=True)
    editor_groups = models.ManyToManyField(Group, blank=True, related_name="+")
    updated_at = models.DateTimeField()
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["folder"]

    def __str__(self) -> str:
        return self.folder


class HostPrompts(models.Model):
    """An agent host's default prompt and the prompts it may use."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    default = models.ForeignKey(
        Prompt,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="Empty: the prompt named default.",
    )
    allowed = models.JSONField(
        null=True,
        blank=True,
        help_text='Names or folders ("support/"); null: every prompt.',
    )
    updated_at = models.DateTimeField()
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    def __str__(self) -> str:
        return f"prompts of user {self.user_id}"


class TemplateVersion(HistoryRow):
    """One saved state of a prompt's template; its highest ``number`` is current.

    Numbers count across the deployment (like a repository's revisions), so a stored
    conversation or release names a version by its number alone; each prompt's history
    lists its own."""

    stored_message = "Template {row} is stored; add a new version."
    kept_message = "Template {row} is part of the history; it stays."

    number = models.PositiveIntegerField(unique=True, editable=False)
    prompt = models.ForeignKey(
        Prompt, on_delete=models.PROTECT, related_name="versions", editable=False
    )
    text = models.TextField(blank=True, editable=False)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        editable=False,
    )
    created_at = models.DateTimeField(editable=False)
    compress = models.BooleanField(
        default=False,
        editable=False,
        help_text="Compress the text before it is parsed (outside fenced code blocks).",
    )

    class Meta:
        ordering = ["-number"]
        get_latest_by = "number"
        constraints = [
            models.CheckConstraint(
                condition=models.Q(number__gte=1), name="sysprompt_template_version_number_gte_1"
            ),
        ]
        indexes = [
            # A prompt's newest version (every first turn): one index probe, however many
            # prompts' versions the deployment-wide numbers interleave.
            models.Index(fields=["prompt", "-number"], name="sysprompt_version_prompt_idx"),
        ]

    def __str__(self) -> str:
        return f"version {self.number}"


class ConversationPrompt(models.Model):
    """The system prompt persisted for one conversation."""

    conversation_id = models.CharField(max_length=CONVERSATION_ID_MAX_LENGTH)
    prompt = models.ForeignKey(Prompt, on_delete=models.PROTECT, related_name="conversations")
    system_prompt = models.TextField(null=True, blank=True)
    sha256 = models.CharField(max_length=64, null=True, blank=True)
    template_version = models.ForeignKey(
        TemplateVersion,
        to_field="number",
        db_column="template_version",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The version it was built from; empty for the built-in default template.",
    )
    cwd = models.TextField()
    model = models.CharField(max_length=MODEL_MAX_LENGTH, blank=True)
    constructed_at = models.DateTimeField()
    created_at = models.DateTimeField(editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        editable=False,
        db_index=False,  # the (owner, id) index below serves every lookup by owner
        help_text=(
            "The user whose call created it; empty for rows stored before conversations "
            "had owners (or whose owner was deleted): only prompt authors see those."
        ),
    )

    provider = models.CharField(max_length=MODEL_MAX_LENGTH, blank=True)
    tools = models.JSONField(default=list, blank=True, help_text="The tools the host listed.")
    variables = models.JSONField(
        default=dict, blank=True, help_text="The host-supplied values of var: variables."
    )
    override = models.JSONField(
        null=True,
        blank=True,
        help_text="The thread override given at construction; applied again at compaction.",
    )
    fragments_used = models.JSONField(
        default=list,
        blank=True,
        help_text="Which version of which fragment variant the prompt was built from.",
    )
    shared_prefix_chars = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text=(
            "How many leading characters (code points) of the prompt every conversation "
            "of the same agent host, provider and model shares; empty for prompts stored "
            "before it was recorded."
        ),
    )

    label = models.CharField(
        max_length=LABEL_NAME_MAX_LENGTH,
        default=PRODUCTION,
        help_text="The label it was built from (production for prompts stored before labels).",
    )
    release = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="The number of the release it was built from; empty: latest, the working copy.",
    )
    arm = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        help_text="The arm of the label's split it got (from 0); empty without a split.",
    )

    class Meta:
        ordering = ["-id"]
        constraints = [
            # Ids are scoped to the agent host that made them (named prompts §2).
            models.UniqueConstraint(
                fields=["owner", "conversation_id"], name="sysprompt_conv_owner_id_unique"
            ),
        ]
        indexes = [
            models.Index(fields=["owner", "id"], name="sysprompt_conv_owner_id_idx"),
            models.Index(fields=["conversation_id"], name="sysprompt_conv_id_idx"),
            # One prompt's Conversations page: newest first, in keyset pages.
            models.Index(fields=["prompt", "-id"], name="sysprompt_conv_prompt_id_idx"),
            # The impact report: a label's conversations constructed in a recent window.
            models.Index(
                fields=["prompt", "label", "constructed_at"], name="sysprompt_conv_label_idx"
            ),
        ]

    def __str__(self) -> str:
        return self.conversation_id

    @property
    def template_version_number(self) -> int:
        """The template version's number; 0 for the built-in default template."""
        return self.template_version_id or 0
