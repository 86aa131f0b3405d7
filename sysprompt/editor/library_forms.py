"""Input of the Library pages, the agent hosts' overrides and Export / Import: shapes
only. Names, variant keys, settings and overrides are checked by
``sysprompt.library.validation`` (through the services), whose messages the pages show.
"""

from __future__ import annotations

from django import forms

from sysprompt_core.library import FRAGMENT_NAME_MAX_LENGTH, STRATEGIES
from sysprompt_core.limits import MODEL_MAX_LENGTH

STRATEGY_CHOICES = [(strategy, strategy) for strategy in STRATEGIES]


class VariantKeyForm(forms.Form):
    """``?provider=&model=`` of a variant's URLs (both empty: the default variant)."""

    provider = forms.CharField(required=False, max_length=MODEL_MAX_LENGTH)
    model = forms.CharField(required=False, max_length=MODEL_MAX_LENGTH)


class LibrarySearchForm(forms.Form):
    q = forms.CharField(required=False, max_length=FRAGMENT_NAME_MAX_LENGTH)


class NewVariantForm(VariantKeyForm):
    """A fragment or a variant to open in the editor; nothing exists until it is saved."""

    name = forms.CharField(max_length=FRAGMENT_NAME_MAX_LENGTH, strip=True)


class VariantSaveForm(forms.Form):
    """The editor's text (added by editor.js), the base ETag and the version's settings;
    ``defaults`` are ``name=value`` lines."""

    template = forms.CharField(required=False, strip=False)
    base_etag = forms.CharField(required=False, max_length=200)
    compress = forms.BooleanField(required=False)
    strategy = forms.ChoiceField(choices=STRATEGY_CHOICES, required=False)
    defaults = forms.CharField(required=False, strip=False)


class RestoreForm(forms.Form):
    number = forms.IntegerField(min_value=1)


OVERRIDE_KINDS = [
    ("none", "No override"),
    ("text", "Text"),
    ("preset", "Preset"),
]
_PLACES = {"append": "append (after the template)", "prepend": "prepend (before the template)"}
TEXT_STRATEGIES = [(strategy, _PLACES[strategy]) for strategy in STRATEGIES]
"""A text's strategy: append (the default) or prepend; it has no strategy of its own."""
PRESET_STRATEGIES = [("", "the preset's own (else append)"), *TEXT_STRATEGIES]
"""A preset's: by default the preset version's own strategy, else append."""


class HostOverrideForm(forms.Form):
    """An agent host's instance override, as the page's fields: none, a text with its
    strategy, or a preset with ``name=value`` variables and its (optional) strategy.
    Each kind has its own strategy field: only a preset has a strategy of its own to
    fall back to."""

    kind = forms.ChoiceField(choices=OVERRIDE_KINDS)
    content = forms.CharField(required=False, strip=False)
    text_strategy = forms.ChoiceField(choices=TEXT_STRATEGIES, required=False)
    preset = forms.CharField(required=False, max_length=FRAGMENT_NAME_MAX_LENGTH)
    variables = forms.CharField(required=False, strip=False)
    preset_strategy = forms.ChoiceField(choices=PRESET_STRATEGIES, required=False)


class ImportForm(forms.Form):
    archive = forms.FileField(allow_empty_file=False)


class ImportApplyForm(forms.Form):
    """Apply the archive the dry run reported on: named by its SHA-256."""

    digest = forms.CharField(min_length=64, max_length=64)


class HostPromptsForm(forms.Form):
    """An agent host's prompts: its default prompt (empty: ``default``) and the prompts
    it may use, names and folders separated by commas (empty: every prompt); checked by
    ``sysprompt.prompts.hosts.host_prompts_set``."""

    default = forms.CharField(required=False, strip=True)
    allowed = forms.CharField(required=False, strip=True)

    def values(self) -> tuple[str | None, list[str] | None]:
        """The default prompt and the allowed list as the service takes them."""
        default = self.cleaned_data["default"] or None
        entries = [entry.strip() for entry in self.cleaned_data["allowed"].split(",")]
        allowed = [entry for entry in entries if entry]
        return default, allowed or None


class HostLabelForm(forms.Form):
    """An agent host's label: a label's name (checked by
    ``sysprompt.releases.services.host_label_set``); empty, or ``clear``, for none
    (its conversations use production)."""

    label = forms.CharField(required=False, strip=True)
    clear = forms.BooleanField(required=False)
