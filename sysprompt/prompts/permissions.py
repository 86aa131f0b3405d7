"""The permissions the prompts app checks, by name (``app_label.codename``)."""

from __future__ import annotations

TEMPLATE_EDIT_PERMISSION = "sysprompt.change_templateversion"
"""What changing the template takes (PUT /api/system-prompt, adding a version in the admin)."""
CONVERSATION_VIEW_PERMISSION = "sysprompt.view_conversationprompt"
"""What seeing every conversation takes, not only one's own (prompt authors)."""
CONVERSATION_CHANGE_PERMISSION = "sysprompt.change_conversationprompt"
"""What constructing or compacting someone else's conversation takes."""
CONVERSATION_DELETE_PERMISSION = "sysprompt.delete_conversationprompt"
"""What deleting (forgetting) someone else's conversation takes."""
