"""sysprompt management commands: render_prompt, bootstrap."""
