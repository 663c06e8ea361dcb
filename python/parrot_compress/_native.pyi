"""Type stubs of the native module; the package ``parrot_compress`` re-exports all of it."""

import os
import pathlib
from typing import Any, Iterator, Literal, Optional, Sequence, Tuple, Union

__version__: str

RECOVERY_TOOL: str
"""The recovery tool's name, ``"wm_get_result"``."""

Api = Literal["anthropic", "openai-chat", "openai-responses"]
Level = Literal["none", "minimal", "normal", "aggressive"]
Json = Union[dict, list, tuple, str, int, float, bool, None]

class BuildError(ValueError):
    """A host could not be set up; the message is every problem found, one per line."""

    errors: list[str]
    """Every problem found: the lines the command prints, each naming the file, entry, key,
    codec, plugin or store."""

class Compressed:
    """What :meth:`Host.compress` returns; unpacks as ``payload, meta``."""

    @property
    def payload(self) -> Union[str, bytes]:
        """The payload the model sees: the result itself when nothing changed."""
    @property
    def meta(self) -> dict[str, Any]:
        """The call's metadata: the members the command's ``--meta`` prints."""
    def __iter__(self) -> Iterator[Any]: ...

class RequestRewrite:
    """What :meth:`Host.compress_request` returns."""

    @property
    def body(self) -> Union[str, bytes]:
        """The body to send (the one given when nothing changed)."""
    @property
    def replaced(self) -> list[dict[str, Any]]:
        """Each result replaced: ``tool``, ``path``, ``codec``, ``bytes_before``,
        ``bytes_after``, ``tee_key``."""
    @property
    def counts(self) -> dict[str, int]:
        """``seen``, ``compressed``, ``errors``, ``unknown``."""
    @property
    def recovery_tool(self) -> bool:
        """Whether ``wm_get_result`` was added to the body's tools."""

class Host:
    """The host in-process, set up as the ``parrot-compress`` command sets one up.

    ``tee_store``: ``None`` for the project's ``.parrot/tee.db``, ``False`` for none, else a
    path or a ``redis://`` URL. Raises :class:`BuildError` for any problem found.
    """

    def __init__(
        self,
        project: Union[str, os.PathLike[str], None] = None,
        plugins: Optional[Sequence[Union[str, os.PathLike[str]]]] = None,
        tee_store: Union[str, os.PathLike[str], Literal[False], None] = None,
        trust_project_plugins: bool = False,
        tokenizer: Literal["o200k", "cl100k"] = "o200k",
        tee_lossless: bool = False,
    ) -> None: ...
    @property
    def killed(self) -> bool:
        """Whether the kill switch was on when the host was made."""
    @property
    def project(self) -> pathlib.Path:
        """The project folder."""
    def compress(
        self,
        tool: str,
        result: Union[str, bytes, Json],
        status: str = "success",
        level: Optional[Level] = None,
        namespace: Optional[str] = None,
    ) -> Compressed:
        """One tool result through the pipeline."""
    def recover(
        self,
        key: str,
        *,
        lines: Union[str, int, None] = None,
        grep: Optional[str] = None,
        context: Optional[int] = None,
        pointer: Optional[str] = None,
        rows: Union[str, int, None] = None,
        max_chars: Optional[int] = None,
        namespace: Optional[str] = None,
    ) -> Union[bytes, str]:
        """The exact original (``bytes``) without a selector; the selected part (``str``)
        with one. ``KeyError`` for an unknown key (and for ``"alice/KEY"`` without
        ``namespace="alice"``), ``ValueError`` for a bad selector."""
    def expand(self, codec: str, payload: Union[str, bytes]) -> str:
        """The original codec ``codec``'s output ``payload`` was made from, through its inverse
        (a ``"lossless"`` tee pointer taken off): the same JSON value for a JSON codec, the same
        text for a text codec. ``ValueError`` with the command's message for an unknown codec,
        ``"auto"``, a codec without an inverse, a lossy output (the message gives its key for
        :meth:`recover`) or a payload the codec did not write."""
    def report(self) -> dict[str, Any]:
        """The savings report so far, as a dict."""
    def report_table(self) -> str:
        """The savings report so far, as the command's text table."""
    def explain(self, tool: str) -> str:
        """Which manifest entry applies to ``tool``, and why."""
    def compress_request(
        self,
        body: Union[str, bytes],
        api: Api = "anthropic",
        *,
        namespace: Optional[str] = None,
        recovery_tool: bool = True,
    ) -> RequestRewrite:
        """A request body's tool results through the pipeline, in place, as ``serve`` does."""
    def answer_recovery(
        self, arguments: Union[dict[str, Any], str], *, namespace: Optional[str] = None
    ) -> Tuple[str, bool]:
        """Answers one call of ``wm_get_result``: ``(text, is_error)``."""

def recovery_tool(api: Api = "anthropic") -> dict[str, Any]:
    """The recovery tool's definition in ``api``'s format."""

def columnarize(payload: Union[bytes, str], min_rows: int = 20) -> bytes:
    """ai-parrot's columnar transform (re-exported by ``parrot_codec``): the orjson bytes of
    ``{"columns", "rows", "constants"}`` the pure-Python transform gives for the same rows."""
