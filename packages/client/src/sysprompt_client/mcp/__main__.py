"""``python -m sysprompt_client.mcp``: the ``sysprompt-mcp`` command."""

from sysprompt_client.mcp.stdio import main

raise SystemExit(main())
