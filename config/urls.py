"""Root URL configuration."""

from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from sysprompt.mcp.views import mcp_endpoint

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", include("sysprompt.api.urls")),
    path("mcp", mcp_endpoint, name="mcp"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", include("sysprompt.editor.urls")),
]
