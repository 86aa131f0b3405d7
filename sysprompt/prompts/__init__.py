"""The prompts app: the global template's versions and the per-conversation prompts."""
