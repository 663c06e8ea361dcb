"""ai-parrot's optional columnar extension, from parrot-compress."""

def columnarize(payload: bytes | str, min_rows: int = 20) -> bytes:
    """Columnarize a JSON array of row objects.

    Returns the UTF-8 JSON of ``{"columns": [...], "rows": [[...], ...], "constants": {...}}``,
    byte for byte what ai-parrot's pure-Python columnar transform gives, encoded by orjson.
    ``min_rows`` must be a non-negative int; it is not applied (the codec counts the rows
    before calling).

    Raises:
        ValueError: the payload is not a JSON array of objects, or ``min_rows`` is not a
            non-negative int.
        TypeError: the payload is neither bytes nor str.
    """
    ...
