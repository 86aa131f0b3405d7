"""Every default and limit the core and the server share, each defined once.

The server's settings (``SYSPROMPT_*``) default to these; the resolvers' options
(:class:`~sysprompt_core.variables.ResolverOptions`) too; the API's and the editor's
input checks and the database columns take their lengths from here.
"""

from __future__ import annotations

CONVERSATION_ID_MAX_LENGTH = 200
CONVERSATION_ID_CHARACTERS = "A-Za-z0-9._:-"
CONVERSATION_ID_PATTERN = rf"[{CONVERSATION_ID_CHARACTERS}]{{1,{CONVERSATION_ID_MAX_LENGTH}}}"
"""A conversation id: 1–200 letters, digits and ``. _ : -`` (a regular expression)."""
CWD_MAX_LENGTH = 4096
"""The longest working directory path accepted (Linux's PATH_MAX)."""
MODEL_MAX_LENGTH = 200
"""The longest model name accepted and stored."""

DEFAULT_GIT_TIMEOUT = 2.0
"""Seconds reading a repository for ``git:`` may take (``SYSPROMPT_GIT_TIMEOUT``)."""
DEFAULT_GIT_WORKERS = 2
"""Worker processes each server process keeps for reading git repositories
(``SYSPROMPT_GIT_WORKERS``): git reads that may run at once; one more queues for a free
worker (``DEFAULT_GIT_QUEUE_TIMEOUT``), then its values are "busy"."""
DEFAULT_GIT_QUEUE_TIMEOUT = 10.0
"""Seconds a git read may queue for a reader, free or starting, before it is given up
as "busy" (``SYSPROMPT_GIT_QUEUE_TIMEOUT``). The wait comes before the read's own
``DEFAULT_GIT_TIMEOUT``, never out of it: a burst of first turns on a loaded machine
waits its turn and then reads in full. A request's git values take at most the sum of
the two."""
DEFAULT_GIT_MEMORY_LIMIT = 512 * 1_048_576
"""The address space one git worker process may use, in bytes
(``SYSPROMPT_GIT_MEMORY_LIMIT``, ``RLIMIT_AS``): a read that needs more ends with its
values missing, and the worker is replaced. An idle worker uses about 60 MB of it; the
status of a repository of 100,000 files about 100 MB more."""
DEFAULT_GIT_RECYCLE_BYTES = 8 * 1_048_576
"""How much more resident memory than when it said it was ready a git worker may hold
after a read (``SYSPROMPT_GIT_RECYCLE_BYTES``): one that holds more — read from
``/proc`` by its pool as the read ends — is killed, which frees all it held at once,
and a fresh one is started in the background. A small repository's read leaves about
2 MB behind; a large status up to 32 MB, kept by the allocator, which a worker kept
until its next read."""
DEFAULT_MAX_FILE_BYTES = 1_048_576
"""The largest file ``file:`` reads, and the largest ``git:status``
(``SYSPROMPT_MAX_FILE_BYTES``)."""
DEFAULT_MAX_TEMPLATE_BYTES = 262_144
"""The largest template, in UTF-8 bytes (``SYSPROMPT_MAX_TEMPLATE_BYTES``)."""
DEFAULT_MAX_PROMPT_BYTES = 1_048_576
"""The largest rendered prompt, in UTF-8 bytes (``SYSPROMPT_MAX_PROMPT_BYTES``).

A variable whose value would take the prompt past it does not exist; a template whose
literal text alone is over it is refused (413). 1 MiB is about 250,000 tokens, beyond
any model's context window, so no useful prompt is refused."""
DEFAULT_MAX_READ_BYTES = 8 * 1_048_576
"""What the resolvers of one resolution may read from files together, in bytes
(``SYSPROMPT_MAX_READ_BYTES``).

8 MiB is eight files of the largest size ``MAX_FILE_BYTES`` admits, or thousands of
ordinary ``AGENTS.md``-sized ones: eight times what one prompt can hold, so a template
that reads a few large files and tests others with ``[if]`` still works. It bounds the
memory one request can take for file text (the text and the values the preview keeps,
a few times 8 MiB at most), where before the template size alone bounded it (26,000
references to a 1 MB file fitted in a template: 26 GB)."""

HOST_TOOLS_MAX_COUNT = 200
"""The most tool names one request may list (``tool:``)."""
HOST_VARIABLES_MAX_COUNT = 200
"""The most host-supplied variables (``var:``) one request, override or preset's
``defaults`` may hold."""
HOST_VARIABLE_NAME_MAX_LENGTH = 200
"""The longest host-supplied variable name, in characters (the rest of the rule is the
template language's for a variable's name: ``[var:<name>]`` must be a variable)."""
HOST_VARIABLE_VALUE_MAX_BYTES = 65_536
"""The largest host-supplied variable value, in UTF-8 bytes (64 KiB)."""

HOST_VALUES_MAX_COUNT = 1000
"""The most host-supplied values (``values``: ``prompt:cwd``, ``git:``, ``file:``,
``system:``) one request may hold. Each is at most ``DEFAULT_MAX_FILE_BYTES`` and all
together at most ``DEFAULT_MAX_READ_BYTES`` in UTF-8, as if the server had read them
(the server's own settings apply when it sets them)."""
HOST_VALUE_KEY_MAX_LENGTH = CWD_MAX_LENGTH + 64
"""The longest key of a host-supplied value, in characters: a ``file:`` path as long as
the longest working directory, with room for its type."""

FRAGMENT_MAX_DEPTH = 8
"""How deep fragments may include fragments: a fragment the template includes is at
depth 1, one that it includes at depth 2; one deeper than this does not exist."""
FRAGMENT_MAX_RENDERS = 1000
"""The most fragment renders one resolution makes. A fragment is rendered once per
distinct place in the include graph (name, variant and the fragments including it);
past this count a fragment does not exist, so no include graph (a diamond of diamonds)
can make a resolution take more than this many renders."""
FRAGMENT_MAX_BYTES_FACTOR = 16
"""The fragments one resolution renders take together at most this many times
``max_prompt_bytes`` of source text and output, in UTF-8 bytes (16 MiB by default);
past it a fragment does not exist. Twice the deepest nesting: a text as large as the
prompt limit, wrapped in fragments eight levels deep, counts its source once and its
output at every level, so any prompt within the limit fits. With
``FRAGMENT_MAX_RENDERS`` it bounds the time and memory of a resolution, whatever the
library holds."""

DEFAULT_PARSE_CACHE_BYTES = 32 * 1_048_576
"""What a process's cache of parsed templates and fragments may hold, in bytes of the
memory their parsed forms take (``SYSPROMPT_PARSE_CACHE_BYTES``; each counted as the
allocator hands it out, within 10% of what it really keeps). A parsed template takes
about 1 to 17 times its source (every tag and piece of text is a Python object; a
template at ``DEFAULT_MAX_TEMPLATE_BYTES`` with a tag every dozen bytes, 3 to 5 MB):
32 MiB keeps thousands of ordinary fragments and templates parsed, and a handful of
the largest ones. Drafts previewed are not kept, so previews of many different large
templates leave a worker within it, their own working set (about 12 MB at the largest
size, one request per thread) included."""

EVAL_CHECKS_MAX_COUNT = 50
"""The most checks one evaluation case may hold."""
EVAL_CHECK_TEXT_MAX_CHARS = 10_000
"""The longest ``value`` of a text check (``contains``, ``equals``…) or judge ``rubric``."""
EVAL_PATTERN_MAX_CHARS = 1_000
"""The longest pattern, in characters: a ``regex`` check's, and each one a
``json_schema`` check's schema holds (``pattern``, the keys of ``patternProperties``)."""
EVAL_PATTERN_MAX_REPEAT = 1_000
"""The largest count a pattern's counted repeat (``{m,n}``) or fuzzy limit (``{e<=n}``)
may give; ``+`` and ``*`` are open-ended."""
EVAL_PATTERN_MAX_DEPTH = 20
"""How deep a pattern may nest groups, alternatives and repeats."""
EVAL_PATTERN_MAX_SIZE = 5_000
"""The largest pattern, in parts of its parse tree counted once per repetition of the
repeats around them (what the ``regex`` module builds when it compiles: measured, at
most 300 bytes and 2 µs a part). 5,000 parts: at most 1.5 MB and 10 ms to compile, while
``a{4294967294}`` would ask for 20 GB."""
EVAL_CASE_PATTERNS_MAX_SIZE = 20_000
"""The patterns of one case's checks together, in the same parts (at most 6 MB)."""
EVAL_PATTERN_TIMEOUT = 0.25
"""Seconds one ``regex`` check (or a JSON schema's ``pattern``) may take on one answer;
past it the check fails and says so, so an author's pattern never hangs a worker."""
EVAL_SCHEMA_MAX_BYTES = 65_536
"""The largest ``json_schema`` check schema, in bytes of canonical JSON."""
EVAL_SCHEMA_MAX_NODES = 1_000
"""The most JSON values (objects, arrays, strings, numbers…) one schema may hold:
checking a schema against JSON Schema's own takes about half a millisecond per
subschema."""
EVAL_CASE_SCHEMA_MAX_NODES = 2_000
"""The most JSON values the schemas of one case's checks may hold together."""
EVAL_SCHEMA_MAX_DEPTH = 32
"""How deep a schema may nest objects and arrays."""
EVAL_SCHEMA_TIMEOUT = 1.0
"""Seconds checking one answer against one JSON schema may take."""
