"""The events app."""

from __future__ import annotations

import ssl
import threading

import certifi
from django.apps import AppConfig


class EventsConfig(AppConfig):
    """The audit log, webhook subscriptions, events and their deliveries. Owns the
    process's TLS context for webhook receivers (loading a CA bundle takes tens of
    milliseconds: once per process and CA file, not once per attempt)."""

    name = "sysprompt.events"
    label = "events"
    verbose_name = "Events and audit log"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        self._tls_lock = threading.Lock()
        self._tls: dict[str, ssl.SSLContext] = {}

    def tls_context(self, ca_file: str) -> ssl.SSLContext:
        """Certificates checked against ``ca_file`` (empty: certifi's bundle)."""
        with self._tls_lock:
            context = self._tls.get(ca_file)
            if context is None:
                context = ssl.create_default_context(cafile=ca_file or certifi.where())
                self._tls[ca_file] = context
            return context
