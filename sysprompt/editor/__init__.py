"""The editor: full-page template editor, live preview, history and conversations."""
