"""The permission the releases app checks, by name (``app_label.codename``)."""

from __future__ import annotations

PUBLISH_CODENAME = "publish_release"
PUBLISH_PERMISSION = f"releases.{PUBLISH_CODENAME}"
"""What moving a protected label (``production``) takes: publishing."""
