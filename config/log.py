"""Logging to the process's standard error, as gunicorn and systemd expect."""

from __future__ import annotations

import logging
import sys
from typing import TextIO


class StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """A StreamHandler on whatever ``sys.stderr`` is when a record is written, not when
    logging was configured (a test's captured stderr, a redirected one)."""

    def __init__(self, level: int | str = logging.NOTSET) -> None:
        logging.Handler.__init__(self, level)

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, value: TextIO) -> None:
        """Ignored: the stream is always the current ``sys.stderr``."""
