"""The Django admin: the template's history and the stored conversation prompts.

* Template versions are append-only. "Add template version" saves a new version through
  :func:`sysprompt.prompts.services.template_save`; a stored version is shown read-only and
  nobody, superusers included, may change or delete it. Adding needs the same
  permission as ``PUT /api/system-prompt``: ``sysprompt.change_templateversion``.
* Conversation prompts are built by the API, never here: the admin shows them
  read-only with their owner, finds them by exact conversation id, and deletes them
  ("forget").

Both lists are built for large tables: no full count, no per-row query, and no prompt
or template text loaded for a list page.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django import forms
from django.contrib import admin
from django.contrib.admin.views.main import ChangeList
from django.db.models import QuerySet
from django.db.models.functions import Length, Substr
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.http import urlencode
from django.utils.safestring import SafeString

from sysprompt import errors
from sysprompt.prompts import selectors, services, validation
from sysprompt.prompts.models import ConversationPrompt, TemplateVersion
from sysprompt.prompts.permissions import TEMPLATE_EDIT_PERMISSION

if TYPE_CHECKING:
    _VersionAdmin = admin.ModelAdmin[TemplateVersion]
    _PromptAdmin = admin.ModelAdmin[ConversationPrompt]
    _VersionForm = forms.ModelForm[TemplateVersion]
else:  # the admin and form classes take no type parameters at run time
    _VersionAdmin = _PromptAdmin = admin.ModelAdmin
    _VersionForm = forms.ModelForm

admin.site.site_header = "sysprompt administration"
admin.site.site_title = "sysprompt admin"

FIRST_LINE_CHARS = 80
_HEAD_CHARS = 400  # how much of a template a list row reads to find its first line
_PRE_STYLE = "white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; font-size: 0.8125rem"


def _pre(text: str) -> SafeString:
    """``text`` exactly as stored, whitespace and line breaks kept, HTML-escaped."""
    return format_html('<pre style="{}">{}</pre>', _PRE_STYLE, text)


def _first_line(head: str) -> str:
    """The first line with something on it, shortened to :data:`FIRST_LINE_CHARS`."""
    line = next((line.strip() for line in head.splitlines() if line.strip()), "")
    return line if len(line) <= FIRST_LINE_CHARS else line[: FIRST_LINE_CHARS - 1] + "…"


class TemplateVersionAddForm(_VersionForm):
    """The text of a new version; the service assigns number, author and time."""

    template = forms.CharField(
        label="Template",
        required=False,
        strip=False,
        widget=forms.Textarea(
            attrs={
                "rows": 24,
                "cols": 100,
                "spellcheck": "false",
                "style": "font-family: var(--font-family-monospace); width: 100%",
            }
        ),
        help_text=(
            "Saved as a new version, which becomes current; earlier versions stay. "
            "An empty template means no system prompt."
        ),
    )

    class Meta:
        model = TemplateVersion
        fields: tuple[str, ...] = ()

    def clean_template(self) -> str:
        # Browsers send a textarea's line breaks as CRLF, whatever was typed or pasted.
        text: str = self.cleaned_data["template"].replace("\r\n", "\n")
        try:
            validation.template_size_check(text)
        except errors.TemplateTooLarge as error:
            raise forms.ValidationError(str(error), code="too_large") from error
        return text


class _TemplateVersionList(ChangeList):
    def get_queryset(
        self, request: HttpRequest, exclude_parameters: list[str | None] | None = None
    ) -> QuerySet[Any]:
        # A row shows the first line (from the annotated head), never the whole text.
        return super().get_queryset(request, exclude_parameters).defer("text")


@admin.register(TemplateVersion)
class TemplateVersionAdmin(_VersionAdmin):
    add_form = TemplateVersionAddForm
    list_display = ("number", "first_line", "size", "author", "created_at")
    list_display_links = ("number", "first_line")
    list_select_related = ("author",)
    list_per_page = 50
    show_full_result_count = False
    readonly_fields = ("number", "author", "created_at", "size", "conversations", "text_display")

    def get_queryset(self, request: HttpRequest) -> QuerySet[TemplateVersion]:
        return (
            super()
            .get_queryset(request)
            .annotate(text_length=Length("text"), text_head=Substr("text", 1, _HEAD_CHARS))
        )

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[ChangeList]:
        return _TemplateVersionList

    def get_fields(
        self, request: HttpRequest, obj: TemplateVersion | None = None
    ) -> tuple[str, ...]:
        return ("template",) if obj is None else self.readonly_fields

    def get_readonly_fields(
        self, request: HttpRequest, obj: TemplateVersion | None = None
    ) -> tuple[str, ...]:
        return () if obj is None else tuple(self.readonly_fields)

    def get_form(
        self,
        request: HttpRequest,
        obj: TemplateVersion | None = None,
        change: bool = False,
        **kwargs: Any,
    ) -> type[forms.ModelForm[TemplateVersion]]:
        if obj is None:
            kwargs["form"] = self.add_form
        return super().get_form(request, obj, change, **kwargs)

    def get_changeform_initial_data(self, request: HttpRequest) -> dict[str, Any]:
        """Start from the current template, or from the version named by ``?from=N``."""
        source = request.GET.get("from", "")
        version = None
        if source.isdigit():
            version = TemplateVersion.objects.filter(number=int(source)).first()
        text = version.text if version is not None else selectors.template_current().text
        return {"template": text}

    def has_add_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm(TEMPLATE_EDIT_PERMISSION)

    def has_change_permission(
        self, request: HttpRequest, obj: TemplateVersion | None = None
    ) -> bool:
        return False

    def has_delete_permission(
        self, request: HttpRequest, obj: TemplateVersion | None = None
    ) -> bool:
        return False

    def save_model(
        self, request: HttpRequest, obj: TemplateVersion, form: forms.Form, change: bool
    ) -> None:
        saved = services.template_save(text=form.cleaned_data["template"], author=request.user)
        # The admin logs, messages and redirects using ``obj``: make it the saved version.
        for field in TemplateVersion._meta.concrete_fields:
            setattr(obj, field.attname, getattr(saved, field.attname))
        obj._state.adding = False
        obj._state.db = saved._state.db

    @admin.display(description="first line")
    def first_line(self, obj: TemplateVersion) -> str:
        head: str = getattr(obj, "text_head", None) or ""
        if line := _first_line(head):
            return line
        if (getattr(obj, "text_length", None) or 0) > _HEAD_CHARS:
            return f"(the first {_HEAD_CHARS} characters are blank)"
        return "(empty: no system prompt)"

    @admin.display(description="size", ordering="text_length")
    def size(self, obj: TemplateVersion) -> str:
        length = getattr(obj, "text_length", None)
        if length is None:
            length = len(obj.text)
        return "1 character" if length == 1 else f"{length:,} characters"

    @admin.display(description="conversations built from it")
    def conversations(self, obj: TemplateVersion) -> SafeString:
        count = ConversationPrompt.objects.filter(template_version_id=obj.number).count()
        url = reverse("admin:sysprompt_conversationprompt_changelist")
        query = urlencode({TemplateVersionFilter.parameter_name: obj.number})
        return format_html('<a href="{}?{}">{}</a>', url, query, f"{count:,}")

    @admin.display(description="template")
    def text_display(self, obj: TemplateVersion) -> SafeString:
        text = obj.text
        if not text:
            return format_html("<em>{}</em>", "(empty: no system prompt)")
        return _pre(text)

    def render_change_form(
        self,
        request: HttpRequest,
        context: dict[str, Any],
        add: bool = False,
        change: bool = False,
        form_url: str = "",
        obj: TemplateVersion | None = None,
    ) -> Any:
        if add:
            context["show_save_and_add_another"] = False
        elif obj is not None and self.has_add_permission(request):
            add_url = reverse("admin:sysprompt_templateversion_add")
            context["subtitle"] = format_html(
                '{} · <a href="{}?{}">start a new version from this one</a>',
                obj,
                add_url,
                urlencode({"from": obj.number}),
            )
        return super().render_change_form(request, context, add, change, form_url, obj)


class TemplateVersionFilter(admin.SimpleListFilter):
    """By the version a prompt was built from; "0" is the built-in default template."""

    title = "template version"
    parameter_name = "template_version"

    def lookups(
        self, request: HttpRequest, model_admin: admin.ModelAdmin[Any]
    ) -> list[tuple[str, str]]:
        numbers = TemplateVersion.objects.order_by("-number").values_list("number", flat=True)
        return [(str(number), f"version {number}") for number in numbers] + [
            ("0", "built-in default")
        ]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        value = self.value()
        if value is None:
            return queryset
        if not value.isdigit():
            return queryset.none()
        number = int(value)
        if number == 0:
            return queryset.filter(template_version__isnull=True)
        return queryset.filter(template_version_id=number)


class _ConversationPromptList(ChangeList):
    def get_queryset(
        self, request: HttpRequest, exclude_parameters: list[str | None] | None = None
    ) -> QuerySet[Any]:
        return super().get_queryset(request, exclude_parameters).defer("system_prompt")


@admin.register(ConversationPrompt)
class ConversationPromptAdmin(_PromptAdmin):
    list_display = (
        "conversation_id",
        "template_version_column",
        "model",
        "working_directory",
        "constructed_at",
        "owner",
        "sha256_short",
    )
    list_select_related = ("owner",)
    list_filter = (TemplateVersionFilter,)
    date_hierarchy = "constructed_at"
    search_fields = ("conversation_id__exact",)
    search_help_text = "Find a conversation by its exact id."
    show_full_result_count = False
    fields = (
        "conversation_id",
        "owner",
        "template_version_link",
        "model",
        "working_directory",
        "constructed_at",
        "created_at",
        "sha256_full",
        "prompt_display",
    )
    readonly_fields = fields

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[ChangeList]:
        return _ConversationPromptList

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # prompts are constructed by the API, for a working directory

    def has_change_permission(
        self, request: HttpRequest, obj: ConversationPrompt | None = None
    ) -> bool:
        return False  # a stored prompt is replaced by construct or compact, never edited

    def delete_model(self, request: HttpRequest, obj: ConversationPrompt) -> None:
        # This row (ids are scoped to the agent host: another host's may share its id).
        rows = ConversationPrompt.objects.filter(pk=obj.pk)
        services.conversation_prompts_delete(prompts=rows, user=request.user)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[ConversationPrompt]) -> None:
        services.conversation_prompts_delete(prompts=queryset, user=request.user)

    @admin.display(description="template version", ordering="template_version")
    def template_version_column(self, obj: ConversationPrompt) -> str:
        number = obj.template_version_number
        return str(number) if number else "default"

    @admin.display(description="template version")
    def template_version_link(self, obj: ConversationPrompt) -> SafeString | str:
        number = obj.template_version_number
        if not number:
            return "the built-in default template"
        version = obj.template_version  # the admin's URL names the id, the row the number
        assert version is not None
        url = reverse("admin:sysprompt_templateversion_change", args=[version.pk])
        return format_html('<a href="{}">{}</a>', url, version)

    @admin.display(description="working directory", ordering="cwd")
    def working_directory(self, obj: ConversationPrompt) -> str:
        return obj.cwd

    @admin.display(description="SHA-256")
    def sha256_full(self, obj: ConversationPrompt) -> SafeString | str:
        return "—" if obj.sha256 is None else format_html("<code>{}</code>", obj.sha256)

    @admin.display(description="SHA-256", ordering="sha256")
    def sha256_short(self, obj: ConversationPrompt) -> SafeString | str:
        if obj.sha256 is None:
            return "—"
        return format_html('<code title="{}">{}</code>', obj.sha256, obj.sha256[:12])

    @admin.display(description="system prompt")
    def prompt_display(self, obj: ConversationPrompt) -> SafeString:
        if obj.system_prompt is None:
            return format_html("<em>{}</em>", "No system prompt: the template rendered to nothing.")
        return _pre(obj.system_prompt)
