"""Editor URLs."""

from __future__ import annotations

from django.urls import path

from editor.views import PlaceholderView

app_name = "editor"

urlpatterns = [
    path("", PlaceholderView.as_view(), name="index"),
    path("editor/", PlaceholderView.as_view(), name="editor"),
]
