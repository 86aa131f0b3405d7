"""Editor pages. Views only render; anything else belongs in services and selectors."""

from __future__ import annotations

from django.contrib.auth.mixins import LoginRequiredMixin
from django.views.generic import TemplateView


class PlaceholderView(LoginRequiredMixin, TemplateView):
    """Stands in for the editor until it arrives."""

    template_name = "editor/placeholder.html"
