"""Helpers of the tests that need a folder the server's user cannot read.

The tests run as root on the development machines and in CI, and root reads any
folder whatever its mode: :func:`unprivileged` then takes the effective user id of
``nobody`` for the duration (the real one stays root, so it can be taken back), and
:func:`world_readable_folder` makes a folder that ``nobody`` can reach (pytest's
own temporary folders are private to root).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

NOBODY = 65534


@contextmanager
def unprivileged() -> Iterator[None]:
    """Run the block as ``nobody`` when the tests run as root (else as they are)."""
    if os.geteuid() != 0:
        yield
        return
    os.seteuid(NOBODY)
    try:
        yield
    finally:
        os.seteuid(0)


@contextmanager
def world_readable_folder() -> Iterator[Path]:
    """A new folder, and every folder above it, that any user may enter and list (made
    in the system's temporary folder: pytest's own are private to root); removed
    afterwards."""
    root = Path(tempfile.mkdtemp(prefix="sysprompt-walk-"))
    try:
        root.chmod(0o755)
        yield root.resolve()
    finally:
        shutil.rmtree(root, ignore_errors=True)
