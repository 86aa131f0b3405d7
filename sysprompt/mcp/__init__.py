"""The MCP server over Streamable HTTP at ``/mcp`` (docs/mcp.md): the same prompts and
tools as the ``sysprompt-mcp`` command, answered from this server's own services."""
