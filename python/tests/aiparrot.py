"""ai-parrot's pure-Python columnar codec, the reference parrot_codec is held to.

ai-parrot's package ``parrot.tools`` imports, in its ``__init__``, the whole tool stack and its
heavy dependencies (openai, pandas, …), none of which the columnar codec needs. Registering a
bare package module for ``parrot.tools`` first lets its submodules be imported from the wheel
as they are, with only the codec's own dependencies installed (tests/requirements.txt).
"""

import importlib.util
import sys
import types

import parrot


def _bare_tools_package():
    if "parrot.tools" in sys.modules:
        return
    spec = importlib.util.find_spec("parrot.tools")
    package = types.ModuleType("parrot.tools")
    package.__path__ = list(spec.submodule_search_locations)
    package.__spec__ = spec
    sys.modules["parrot.tools"] = package
    parrot.tools = package


_bare_tools_package()

from datamodel.parsers.json import json_decoder, json_encoder  # noqa: E402
from parrot.tools.compression.codecs import columnar  # noqa: E402
from parrot.tools.compression.levels import FilterLevel  # noqa: E402

ColumnarCodec = columnar.ColumnarCodec

__all__ = [
    "ColumnarCodec",
    "FilterLevel",
    "columnar",
    "json_decoder",
    "json_encoder",
    "pure_bytes",
    "pure_dict",
]


def pure_dict(text):
    """The pure-Python path's result for JSON row text: decoded as ai-parrot decodes it, then
    columnarized with null columns elided (what the extension stands in for)."""
    rows = json_decoder(text)
    columns, out_rows, constants, _null, _factored = ColumnarCodec._columnarize(
        rows, elide_nulls=True
    )
    return {"columns": columns, "rows": out_rows, "constants": constants}


def pure_bytes(text):
    """The pure-Python path's result as the bytes ai-parrot's encoder writes."""
    return json_encoder(pure_dict(text)).encode("utf-8")
