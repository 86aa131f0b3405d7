"""``sysprompt-mcp``: sysprompt's MCP server over stdio, for one agent host.

Configured by the environment (docs/mcp.md): ``SYSPROMPT_URL`` and
``SYSPROMPT_TOKEN`` (required: the server and an agent host's token),
``SYSPROMPT_CWD`` (default: the directory it starts in), ``SYSPROMPT_ROOTS`` (the
directories a call's ``cwd`` may name and host-local values may be read in,
``:``-separated; default: ``SYSPROMPT_CWD`` alone), ``SYSPROMPT_LABEL``,
``SYSPROMPT_PROMPT`` (the named prompt a call that names none is built from; default:
the agent host's default prompt, else ``default``),
``SYSPROMPT_CACHE_DIR``, ``SYSPROMPT_FALLBACK``, ``SYSPROMPT_MCP_WRITE``
(``true``: declare the write tools), ``SYSPROMPT_MCP_POLL_SECONDS`` (how often the
fragment list is polled for ``list_changed``; 0: never) and
``SYSPROMPT_MCP_LOG_LEVEL``. Nothing but the protocol is written on stdout: logging
goes to stderr, and while it serves the SDK points file descriptor 1 at stderr too.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial

from sysprompt_client.mcp import INSTALL_HINT
from sysprompt_core.paths import is_inside, real_roots
from sysprompt_core.prompt_names import PROMPT_NAME_RULE, is_prompt_name

__all__ = ["Config", "ConfigError", "main", "serve"]

log = logging.getLogger("sysprompt_client.mcp")

DEFAULT_POLL_SECONDS = 30.0
TRUE = frozenset({"1", "true", "yes", "on"})
FALSE = frozenset({"", "0", "false", "no", "off"})


class ConfigError(ValueError):
    """A setting of the environment that cannot be used (the message names it)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    url: str
    token: str
    cwd: str
    roots: tuple[str, ...] = ()
    """Where a call's ``cwd`` may be and host-local values may be read (empty: ``cwd``
    alone)."""
    write: bool = False
    poll_seconds: float = DEFAULT_POLL_SECONDS
    label: str | None = None
    prompt: str | None = None
    cache_dir: str | None = None
    fallback: str | None = None
    log_level: str = "WARNING"

    @classmethod
    def from_env(cls, env: Mapping[str, str], *, cwd: str | None = None) -> Config:
        missing = [name for name in ("SYSPROMPT_URL", "SYSPROMPT_TOKEN") if not env.get(name)]
        if missing:
            raise ConfigError(
                f"{' and '.join(missing)} must be set: the sysprompt server's URL and an "
                "agent host's token (docs/mcp.md)"
            )
        write = env.get("SYSPROMPT_MCP_WRITE", "").strip().lower()
        if write not in TRUE | FALSE:
            raise ConfigError(f"SYSPROMPT_MCP_WRITE must be true or false, not {write!r}")
        poll = env.get("SYSPROMPT_MCP_POLL_SECONDS", "").strip()
        try:
            poll_seconds = float(poll) if poll else DEFAULT_POLL_SECONDS
        except ValueError:
            raise ConfigError(
                f"SYSPROMPT_MCP_POLL_SECONDS must be a number of seconds, not {poll!r}"
            ) from None
        if not poll_seconds >= 0:
            raise ConfigError("SYSPROMPT_MCP_POLL_SECONDS must not be negative")
        work = os.path.abspath(env.get("SYSPROMPT_CWD") or cwd or os.getcwd())
        if not os.path.isdir(work):
            raise ConfigError(f"SYSPROMPT_CWD is not a directory: {work!r}")
        roots = _roots(env.get("SYSPROMPT_ROOTS", ""), work)
        level = (env.get("SYSPROMPT_MCP_LOG_LEVEL") or "WARNING").upper()
        if not isinstance(logging.getLevelName(level), int):
            raise ConfigError(f"SYSPROMPT_MCP_LOG_LEVEL is not a logging level: {level!r}")
        prompt = env.get("SYSPROMPT_PROMPT", "").strip() or None
        if prompt is not None and not is_prompt_name(prompt):
            raise ConfigError(
                f"SYSPROMPT_PROMPT {prompt!r} is not a prompt name: {PROMPT_NAME_RULE}"
            )
        return cls(
            url=env["SYSPROMPT_URL"],
            token=env["SYSPROMPT_TOKEN"],
            cwd=work,
            roots=roots,
            write=write in TRUE,
            poll_seconds=poll_seconds,
            label=env.get("SYSPROMPT_LABEL") or None,
            prompt=prompt,
            cache_dir=env.get("SYSPROMPT_CACHE_DIR") or None,
            fallback=env.get("SYSPROMPT_FALLBACK") or None,
            log_level=level,
        )


def _roots(setting: str, work: str) -> tuple[str, ...]:
    """The roots ``SYSPROMPT_ROOTS`` names (``:``-separated absolute directories), or
    ``work`` alone when it names none; ``work`` must lie inside one of them."""
    named = [part for part in setting.split(os.pathsep) if part.strip()]
    if not named:
        return (work,)
    for root in named:
        if not os.path.isabs(root) or not os.path.isdir(root):
            raise ConfigError(f"SYSPROMPT_ROOTS: {root!r} is not an absolute path to a directory")
    roots = tuple(os.path.normpath(root) for root in named)
    real = os.path.realpath(work)
    if not any(is_inside(real, root) for root in real_roots(roots)):
        raise ConfigError(f"SYSPROMPT_CWD {work!r} is outside SYSPROMPT_ROOTS ({', '.join(roots)})")
    return roots


async def serve(config: Config) -> None:
    """Serve MCP on stdin/stdout until the client closes stdin."""
    import anyio
    from mcp.server.stdio import stdio_server

    from sysprompt_client.client import Client
    from sysprompt_client.mcp.client_backend import ClientBackend
    from sysprompt_client.mcp.server import (
        PromptChanges,
        build_server,
        initialization_options,
        watch_prompts,
    )

    client = Client(
        config.url,
        config.token,
        label=config.label,
        prompt=config.prompt,
        cache_dir=config.cache_dir,
        fallback=config.fallback,
        allowed_roots=config.roots or (config.cwd,),
    )
    backend = ClientBackend(client, cwd=config.cwd, roots=config.roots or (config.cwd,))
    changes = PromptChanges()
    server = build_server(backend, write=config.write, changes=changes)
    options = initialization_options(server, changes=changes)
    try:
        async with (
            stdio_server() as (read_stream, write_stream),
            anyio.create_task_group() as group,
        ):
            if config.poll_seconds > 0:
                group.start_soon(
                    partial(watch_prompts, backend, changes, interval=config.poll_seconds)
                )
            await server.run(read_stream, write_stream, options)
            group.cancel_scope.cancel()
    finally:
        await anyio.to_thread.run_sync(client.close)


def main(argv: Sequence[str] | None = None) -> int:
    """The ``sysprompt-mcp`` command: 0 when the client closed the connection, 2 when
    it cannot start (the SDK missing, a bad setting; said on stderr)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("-h", "--help"):
        print(__doc__, file=sys.stderr)
        return 0
    try:
        importlib.import_module("mcp.server.stdio")
    except ImportError as error:
        print(f"sysprompt-mcp: {INSTALL_HINT} ({error})", file=sys.stderr)
        return 2
    try:
        config = Config.from_env(os.environ)
    except ConfigError as error:
        print(f"sysprompt-mcp: {error}", file=sys.stderr)
        return 2
    logging.basicConfig(
        stream=sys.stderr,
        level=config.log_level,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    import anyio

    try:
        anyio.run(serve, config)
    except KeyboardInterrupt:
        return 0
    return 0
