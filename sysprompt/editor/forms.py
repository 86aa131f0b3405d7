"""Input of the editor's htmx requests: shapes only; the checks that read the disk or the
database (cwd, template size, conversation id) live in ``sysprompt.prompts.selectors``."""

from __future__ import annotations

from django import forms

from sysprompt_core.library import FRAGMENT_NAME_MAX_LENGTH
from sysprompt_core.limits import CONVERSATION_ID_MAX_LENGTH, CWD_MAX_LENGTH, MODEL_MAX_LENGTH


class PreviewForm(forms.Form):
    """The preview's fields; ``tools`` (a comma list) and ``variables`` (``name=value``
    lines) are checked by ``host_context_check``, whose limits bound them."""

    template = forms.CharField(required=False, strip=False)
    cwd = forms.CharField(required=False, max_length=CWD_MAX_LENGTH)
    model = forms.CharField(required=False, max_length=MODEL_MAX_LENGTH)
    conversation_id = forms.CharField(required=False, max_length=CONVERSATION_ID_MAX_LENGTH)
    provider = forms.CharField(required=False, max_length=MODEL_MAX_LENGTH)
    tools = forms.CharField(required=False, strip=False)
    variables = forms.CharField(required=False, strip=False)
    compress = forms.BooleanField(required=False)
    fragment = forms.CharField(required=False, max_length=FRAGMENT_NAME_MAX_LENGTH)


class SaveForm(forms.Form):
    template = forms.CharField(required=False, strip=False)
    base_etag = forms.CharField(required=False, max_length=200)
    compress = forms.BooleanField(required=False)


class HistoryForm(forms.Form):
    before = forms.IntegerField(required=False, min_value=1)


class DiffForm(forms.Form):
    template = forms.CharField(required=False, strip=False)


class VersionsCompareForm(forms.Form):
    """The two versions the History tab's "from" and "to" choices name."""

    old = forms.IntegerField(min_value=1)
    new = forms.IntegerField(min_value=1)


class AgentHostForm(forms.Form):
    """The name of a new agent host; ``agent_host_create`` checks it as a user name."""

    name = forms.CharField(max_length=150, strip=True)


class FileSuggestForm(forms.Form):
    cwd = forms.CharField(max_length=CWD_MAX_LENGTH)
    q = forms.CharField(required=False, max_length=CWD_MAX_LENGTH)


class CwdForm(forms.Form):
    """The working directory a preview ran in, for the editor to remember."""

    cwd = forms.CharField(max_length=CWD_MAX_LENGTH)


class ConversationSearchForm(forms.Form):
    q = forms.CharField(required=False, max_length=CONVERSATION_ID_MAX_LENGTH)
    before = forms.IntegerField(required=False, min_value=1)
