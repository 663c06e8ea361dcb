"""ai-parrot's optional columnar extension, from parrot-compress.

ai-parrot's columnar codec (``parrot.tools.compression.codecs.columnar``) imports a module
named ``parrot_codec`` when one is installed, and hands it JSON row arrays that arrive as
bytes or str: ``columnarize(rows_bytes, min_rows)``. Installing parrot-compress provides that
module. Its ``columnarize`` returns the bytes the codec's pure-Python transform would give,
encoded by orjson, for the same rows, so the codec's outcome is the same with or without it,
only faster. Nothing needs configuring: the codec finds the module on its own.

    >>> from parrot_codec import columnarize
    >>> columnarize(b'[{"id": 1, "db": "pg"}, {"id": 2, "db": "pg"}]')
    b'{"columns":["id"],"rows":[[1],[2]],"constants":{"db":"pg"}}'
"""

from parrot_compress._native import columnarize

__all__ = ["columnarize"]
