"""Adapters: sysprompt where an agent framework has a hook for the system prompt.

One module per framework, importing nothing of it until used, so the client installs
and imports without any provider SDK (they are optional extras):

* ``openai_agents`` — the OpenAI Agents SDK: ``Agent(instructions=instructions(...))``,
  and ``model_settings(prompt)`` for the ``prompt_cache_key`` of the shared prefix.

The request shapes for the plain SDKs (``openai_chat``, ``openai_responses``,
``anthropic_messages``) are the core's: :mod:`sysprompt_core.messages`.
"""
