"""sysprompt: templated LLM system prompts, resolved once per conversation."""
