"""sysprompt-core: what the sysprompt server and its client share. Pure Python, no Django.

* ``template``  — the template language: lexer → parser → nodes → render, and lint;
* ``variables`` — the variable registry, one resolver module per type, and
  ``resolve_prompt`` (resolve only what the rendering reaches, within the limits);
* ``diff``      — the one line diff of the project, bounded in size and time (the
  editor's hunks, the releases' ``diff -u``);
* ``limits``    — every default and limit the core and the server share;
* ``errors``    — the core's exceptions, under :class:`~sysprompt_core.errors.CoreError`.
"""
