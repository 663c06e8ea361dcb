"""parrot-compress in-process: compress the results of LLM tool calls before a model sees them.

The host of the ``parrot-compress`` command, in the same process as the agent::

    from parrot_compress import Host

    host = Host(project=".")
    payload, meta = host.compress("dq_execute_database_query", rows_json)

- :class:`Host` reads the project's manifests (``.parrot/compressors.toml``), the plugin
  packages and the core defaults exactly as the command does, and keeps lossy originals in its
  tee store, from which :meth:`Host.recover` and the recovery tool ``wm_get_result`` read them.
- :meth:`Host.compress_request` rewrites a whole LLM request body (Anthropic Messages, OpenAI
  Chat Completions or Responses) as the ``serve`` proxy does, so a client compresses before it
  sends, with no proxy; :func:`recovery_tool` and :meth:`Host.answer_recovery` are the recovery
  tool a model calls to get an original back.

The work runs in Rust with the GIL released; one ``Host`` can be shared by many threads, and a
``Host`` made before a fork (``multiprocessing`` with ``fork``, a pre-forking server) works in
the forked processes. With
``PARROT_COMPRESSION_DISABLED=1`` when a host is made, every result passes through unchanged.

The package also ships ``parrot_codec``, the optional extension ai-parrot's ``columnar`` codec
looks for.
"""

from ._native import (
    RECOVERY_TOOL,
    BuildError,
    Compressed,
    Host,
    RequestRewrite,
    __version__,
    recovery_tool,
)

__all__ = [
    "BuildError",
    "Compressed",
    "Host",
    "RECOVERY_TOOL",
    "RequestRewrite",
    "__version__",
    "recovery_tool",
]
