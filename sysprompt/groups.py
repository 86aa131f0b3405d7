"""The names of the groups the server creates and looks users up by.

Below every app (like :mod:`sysprompt.errors`): ``accounts`` creates the groups and
gives them their permissions, and ``library``, the lowest app layer, finds the agent
hosts by group, so both import the names from here rather than one from the other.
"""

from __future__ import annotations

__all__ = ["AGENT_HOSTS_GROUP", "PROMPT_AUTHORS_GROUP", "PROMPT_PUBLISHERS_GROUP"]

PROMPT_AUTHORS_GROUP = "Prompt authors"
"""Users who write the template and the library, and see every conversation."""

PROMPT_PUBLISHERS_GROUP = "Prompt publishers"
"""Users who may move protected labels (``production``): publish releases."""

AGENT_HOSTS_GROUP = "Agent hosts"
"""Users that are agent hosts: they read the template and construct conversations."""
