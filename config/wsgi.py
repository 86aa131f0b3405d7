"""WSGI entry point. Refuses to start without a SECRET_KEY (see settings)."""

from __future__ import annotations

import os

from django.conf import settings
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

application = get_wsgi_application()
settings.SECRET_KEY  # noqa: B018 -- raises ImproperlyConfigured when the key is empty
