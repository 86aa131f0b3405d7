"""sysprompt, the server: Django apps around the pure-Python core (``sysprompt_core``).

* ``prompts``  — the global template's versions and the per-conversation prompts
  (models, validation, rendering, selectors, services);
* ``accounts`` — agent hosts, groups and the first administrator;
* ``api``      — the REST API (DRF), one view per operation;
* ``editor``   — the full-page editor and the conversations pages (htmx).

The Django project itself (settings, URLs, entry points) lives in ``config``.
"""
