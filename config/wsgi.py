"""WSGI entry point. Refuses to start without a SECRET_KEY (see settings); logs an
error when git readers cannot be confined by the kernel (they then read nothing)."""

from __future__ import annotations

import os

from django.conf import settings
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

application = get_wsgi_application()
settings.SECRET_KEY  # noqa: B018 -- raises ImproperlyConfigured when the key is empty

from sysprompt.prompts.checks import report_git_confinement  # noqa: E402 -- apps are ready

report_git_confinement()
