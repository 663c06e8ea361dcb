"""parrot_codec.columnarize held to ai-parrot's pure-Python columnar path, byte for byte.

The reference is the codec's own transform (``ColumnarCodec._columnarize``) between its own
decoder and encoder (datamodel's, over orjson): for every payload, ours returns the bytes that
path encodes, or raises ValueError where that path fails. Payloads are generated as JSON text,
not through an encoder, so that escapes, exponents, duplicate names, whitespace and numbers at
the edges of orjson's int range reach both readers as written.
"""

import logging
import math
import os
import random
import struct
import sys
import threading
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pytest  # noqa: E402

import parrot_codec  # noqa: E402
from aiparrot import (  # noqa: E402
    ColumnarCodec,
    FilterLevel,
    columnar,
    json_decoder,
    json_encoder,
    pure_bytes,
    pure_dict,
)

CORPUS = Path(__file__).resolve().parents[2] / "corpus"

I64_MIN, I64_MAX, U64_MAX = -(2**63), 2**63 - 1, 2**64 - 1


# -- comparing ------------------------------------------------------------------------------


def same_typed(a, b):
    """Equal with types: an int is not a float or a bool, -0.0 is not 0.0, dict order counts."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return struct.pack("<d", a) == struct.pack("<d", b)
    if isinstance(a, list):
        return len(a) == len(b) and all(same_typed(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same_typed(a[k], b[k]) for k in a)
    return a == b


def check_same(text, as_str=False):
    """Ours gives the pure path's bytes and value for `text` (bytes), or raises ValueError
    where the pure path fails. Returns whether the pure path succeeded."""
    try:
        expected_value = pure_dict(text)
        expected = json_encoder(expected_value).encode("utf-8")
    except Exception:
        expected = None
    payload = text
    if as_str:
        try:
            payload = text.decode("utf-8")
        except UnicodeDecodeError:
            pass
    if expected is None:
        with pytest.raises(ValueError):
            parrot_codec.columnarize(payload, 20)
        return False
    got = parrot_codec.columnarize(payload, 20)
    assert got == expected, f"payload {text[:2000]!r}"
    assert same_typed(json_decoder(got), expected_value), f"payload {text[:2000]!r}"
    return True


# -- generating JSON text -------------------------------------------------------------------

EDGE_INTS = [
    0, 1, -1, 2**53, 2**53 + 1, -(2**53) - 1, I64_MAX - 1, I64_MAX, I64_MAX + 1, I64_MIN,
    I64_MIN + 1, I64_MIN - 1, U64_MAX - 1, U64_MAX, U64_MAX + 1, 2**64 + 4096, 10**19, 10**20,
    -(10**19), 10**30, 123456789012345678901234567890, -(10**25), 2**1000,
]

EDGE_FLOATS = [
    "1e16", "9999999999999998.0", "1e-5", "1e-6", "0.00001", "0.000001", "1E5", "1.0e2",
    "-0e0", "0e0", "-0.0", "0.0", "5e-324", "4.9e-324", "2.4703282292062328e-324",
    "2.2250738585072014e-308", "1.7976931348623157e308", "1e-400", "-1e-400", "1e15",
    "123456789012345680000.0", "0.1", "0.30000000000000004", "1e22", "1e21", "1e23",
    "9007199254740993.0", "18446744073709551616.0", "1.5", "-2.5E-3", "100", "12345678.9e-3",
]

CHARS = (
    list("abcxyzABC019 _-.,:;") + ['"', "\\", "/", "\b", "\f", "\n", "\r", "\t", "\x00", "\x01",
    "\x1f", "\x7f", "\x80", "é", "ß", "€", "\u2028", "\u2029", "\ufeff", "\uffff", "日", "本",
    "😀", "🚀", "\U0010ffff"]
)

SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
                 "\t": "\\t"}


def u_escape(code, rng):
    return f"\\u{code:04X}" if rng.random() < 0.3 else f"\\u{code:04x}"


def char_text(char, rng):
    """One character of a JSON string, written raw or escaped, at random."""
    code = ord(char)
    escape = rng.random() < 0.25
    if char in SHORT_ESCAPES:
        return u_escape(code, rng) if escape else SHORT_ESCAPES[char]
    if code < 0x20:
        return u_escape(code, rng)
    if not escape:
        return char
    if char == "/":
        return rng.choice(["\\/", u_escape(code, rng)])
    if code > 0xFFFF:
        high, low = divmod(code - 0x10000, 0x400)
        return u_escape(0xD800 + high, rng) + u_escape(0xDC00 + low, rng)
    return u_escape(code, rng)


def string_text(value, rng):
    return '"' + "".join(char_text(char, rng) for char in value) + '"'


def random_string(rng):
    return "".join(rng.choice(CHARS) for _ in range(rng.choice([0, 1, 1, 2, 3, 5, 8, 13])))


def ws(rng):
    return rng.choice(["", "", "", "", " ", "\n", "\t", " \r\n  "])


def int_text(rng):
    r = rng.random()
    if r < 0.4:
        return str(rng.randint(-1000, 1000))
    if r < 0.45:
        return "-0"
    if r < 0.8:
        return str(rng.choice(EDGE_INTS) + rng.choice([0, 0, 0, 1, -1]))
    digits = rng.randint(1, 40)
    return str(rng.randint(-(10**digits), 10**digits))


def float_text(rng):
    r = rng.random()
    if r < 0.3:
        while True:
            value = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
            if math.isfinite(value):
                return repr(value)
    if r < 0.55:
        digits = str(rng.randint(0, 10 ** rng.randint(1, 20)))
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else rng.choice(["", ".0"]))
        exponent = rng.choice("eE") + rng.choice(["", "+", "-"]) + str(rng.randint(0, 300))
        return rng.choice(["", "-"]) + mantissa + exponent
    if r < 0.7:
        whole = str(rng.randint(0, 10 ** rng.randint(0, 18)))
        fraction = str(rng.randint(0, 10 ** rng.randint(1, 12))).zfill(rng.randint(1, 14))
        return rng.choice(["", "-"]) + whole + "." + fraction
    if r < 0.8:
        return rng.choice(EDGE_FLOATS)
    if r < 0.85:
        # Exactly halfway between two candidates of 17 digits: the even one is written.
        whole = rng.randint(2**44, 2**52)
        return rng.choice(["", "-"]) + f"{whole}." + rng.choice(["125", "375", "625", "875", "5"])
    # More digits than a double holds: the rounding of both readers meets here.
    digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(18, 45)))
    point = rng.randint(1, len(digits) - 1)
    return (digits[:point].lstrip("0") or "0") + "." + digits[point:]


def scalar_text(rng):
    r = rng.random()
    if r < 0.25:
        return int_text(rng)
    if r < 0.5:
        return float_text(rng)
    if r < 0.6:
        return rng.choice(["true", "false"])
    if r < 0.7:
        return "null"
    return string_text(random_string(rng), rng)


def value_text(rng, depth=0):
    r = rng.random()
    if depth < 3 and r < 0.06:
        items = [value_text(rng, depth + 1) for _ in range(rng.randint(0, 4))]
        return "[" + ws(rng) + ("," + ws(rng)).join(items) + ws(rng) + "]"
    if depth < 3 and r < 0.12:
        names = [random_string(rng) for _ in range(rng.randint(0, 4))]
        if names and rng.random() < 0.3:
            names.insert(rng.randrange(len(names) + 1), rng.choice(names))
        members = [string_text(n, rng) + ws(rng) + ":" + ws(rng) + value_text(rng, depth + 1)
                   for n in names]
        return "{" + ws(rng) + ("," + ws(rng)).join(members) + ws(rng) + "}"
    return scalar_text(rng)


# Values that Python's == puts in one class, each written several ways; the last few of
# each class differ from the rest.
EQUAL_CLASSES = [
    ["1", "1.0", "true", "1E0", "10e-1", "1.00", "0.1e1", "2", "1.0000000000000002"],
    ["0", "-0", "false", "0.0", "-0.0", "0e0", "-0E-3", "0.000", "1e-400", "5e-324"],
    ["9007199254740992", "9007199254740992.0", "9007199254740993.0", "9007199254740993"],
    ["18446744073709551615", "18446744073709551616", "18446744073709551616.0",
     "1.8446744073709552e19", "18446744073709551614"],
    ["-9223372036854775808", "-9223372036854775808.0", "-9223372036854775809",
     "-9223372036854775807"],
    ["null"],
]


def equal_spec(rng, depth=0):
    """A value to repeat down a column, as a tree whose leaves are equality classes."""
    r = rng.random()
    if depth < 2 and r < 0.15:
        return ("list", [equal_spec(rng, depth + 1) for _ in range(rng.randint(0, 3))])
    if depth < 2 and r < 0.3:
        names = list(dict.fromkeys(random_string(rng) for _ in range(rng.randint(0, 3))))
        return ("dict", [(name, equal_spec(rng, depth + 1)) for name in names])
    if r < 0.55:
        return ("str", random_string(rng))
    return ("num", rng.choice(EQUAL_CLASSES))


def equal_text(spec, rng, differ):
    """One writing of `spec`: every one equal in Python unless `differ` (a chance) strikes."""
    kind, body = spec
    if kind == "list":
        return "[" + ",".join(equal_text(item, rng, differ) for item in body) + "]"
    if kind == "dict":
        members = list(body)
        rng.shuffle(members)
        return "{" + ",".join(string_text(name, rng) + ":" + equal_text(item, rng, differ)
                              for name, item in members) + "}"
    if kind == "str":
        return string_text(body + "!" if rng.random() < differ else body, rng)
    same = body[: max(1, len(body) - 2)] if len(body) > 2 else body
    return rng.choice(body if rng.random() < differ else same)


def column_cell(kind, spec, rng, differ):
    """The text of one row's value for a column, or None for no member."""
    if kind == "null":
        return None if rng.random() < 0.4 else "null"
    if kind == "constant":
        return equal_text(spec, rng, differ)
    if kind == "sparse":
        return None if rng.random() < 0.5 else value_text(rng)
    if kind == "boolish":
        return rng.choice(["1", "0", "true", "false", "1.0", "0.0", "-0.0", "2", "null"])
    return value_text(rng)


def column_names(rng, count):
    pool = ["id", "name", "value", "é", "😀 emoji", "with space", 'quote"', "back\\slash",
            "tab\t", "ctl\x01", "", "日本語", "a/b", "\u2028", "kA", "x" * 40]
    names = rng.sample(pool, min(count, len(pool)))
    while len(names) < count:
        names.append(random_string(rng) + str(len(names)))
    return list(dict.fromkeys(names))


def row_set_text(rng):
    """A JSON array of row objects, as text."""
    rows = rng.choice([0, 1, 2, 2, 3, 4, 5, 8, 13, 21, 40])
    kinds = ["constant", "constant", "null", "sparse", "mixed", "boolish"]
    columns = [(name, rng.choice(kinds)) for name in column_names(rng, rng.randint(0, 9))]
    specs = {name: equal_spec(rng) for name, _ in columns}
    differ = rng.choice([0.0, 0.0, 0.05, 0.3])
    shuffle = rng.random() < 0.3
    out = []
    for _ in range(rows):
        order = list(columns)
        if shuffle:
            rng.shuffle(order)
        members = []
        for name, kind in order:
            cell = column_cell(kind, specs[name], rng, differ)
            if cell is not None:
                members.append((name, cell))
        if members and rng.random() < 0.1:
            # A name written twice: the first place counts, the last value wins.
            name, _ = rng.choice(members)
            at = rng.randrange(len(members) + 1)
            members.insert(at, (name, scalar_text(rng)))
        written = [ws(rng) + string_text(name, rng) + ws(rng) + ":" + ws(rng) + cell + ws(rng)
                   for name, cell in members]
        out.append(ws(rng) + "{" + ",".join(written) + "}" + ws(rng))
    return (ws(rng) + "[" + ",".join(out) + "]" + ws(rng)).encode("utf-8")


# -- (a) generated payloads, byte for byte ------------------------------------------------------

BATCHES, PER_BATCH = 50, 25


@pytest.mark.parametrize("batch", range(BATCHES))
def test_generated_rows_match_the_pure_path(batch):
    passed = 0
    for case in range(batch * PER_BATCH, (batch + 1) * PER_BATCH):
        rng = random.Random(case)
        passed += check_same(row_set_text(rng), as_str=case % 3 == 0)
    # Every generated payload is one the pure path columnarizes.
    assert passed == PER_BATCH


def test_every_float_reads_and_writes_as_orjson_does():
    rng = random.Random(7)
    texts = [float_text(rng) for _ in range(20000)]
    rows = ",".join('{"f":%s,"g":%s}' % (text, rng.choice(texts)) for text in texts)
    assert check_same(f"[{rows}]".encode())
    floats = []
    while len(floats) < 20000:
        value = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
        if math.isfinite(value):
            floats.append(value)
    rows = ",".join('{"f":%r}' % value for value in floats)
    assert check_same(f"[{rows}]".encode())


def test_every_int_edge_reads_as_orjson_does():
    texts = [str(edge + delta) for edge in EDGE_INTS for delta in (-2, -1, 0, 1, 2)]
    texts += ["-0", "-" + str(U64_MAX), "-" + str(U64_MAX + 1), "1" + "0" * 308, "-1" + "0" * 308]
    rows = ",".join('{"n":%s}' % text for text in texts)
    assert check_same(f"[{rows}]".encode())


POISONS = [
    "NaN", "-Infinity", "Infinity", "1e400", "-1e309", "1" + "0" * 400, '"\\ud800"',
    '"\\udc00x"', '"\\ud83dx"', "'a'", "[1,]", '{"a":1,}', "01", "+1", ".5", "1.", "1e", "tru",
    "nul", '"tab\there"', '"nl\nhere"', '"\\x"', '"\\u12"', "[", "{", '"open', "1 2",
]


@pytest.mark.parametrize("poison", POISONS)
def test_payloads_the_pure_path_cannot_read_raise_value_error(poison):
    body = '{"a":1},{"a":%s}' % poison
    assert not check_same(("[" + body + "]").encode())
    for seed in range(5):
        inner = row_set_text(random.Random(seed)).decode().strip()[1:-1]
        rows = [inner] if inner.strip() else []
        assert not check_same(("[" + ",".join(rows + [body]) + "]").encode())


@pytest.mark.parametrize(
    "raw",
    [b"\xff", b'[{"a":"\xc3"}]', b'[{"a":"\xed\xa0\x80"}]', b"\xef\xbb\xbf[]", b"\x00", b"",
     b" ", b'[{"a":1}] [', b'[{"a":1}]\x00'],
)
def test_bytes_the_pure_path_cannot_read_raise_value_error(raw):
    assert not check_same(raw)


@pytest.mark.parametrize("depth", [250, 251, 252, 253, 254, 255, 256, 511, 512, 513, 1024, 1025])
def test_nesting_fails_where_the_pure_path_fails(depth):
    nest = "[" * depth + "]" * depth
    # A kept column, a constant one, and a single row.
    check_same(('[{"a":%s},{"a":1}]' % nest).encode())
    check_same(('[{"a":%s},{"a":%s}]' % (nest, nest)).encode())
    check_same(('[{"a":%s}]' % nest).encode())
    check_same(('[{"a":{"b":%s}},{"a":{"b":%s}}]' % (nest, nest)).encode())
    # A value a repeated name replaced is not written: its depth counts only for reading.
    if depth + 2 <= 512:
        check_same(('[{"a":%s,"a":1},{"a":2}]' % nest).encode())


def test_a_replaced_value_past_the_workspace_depth_limit_is_refused_though_orjson_reads_it(
    monkeypatch, caplog
):
    # The one payload the two paths part on: orjson reads 1024 levels, parrot_codec 512, and
    # the pure path writes nothing of the deep value, which a repeated name replaced.
    nest = "[" * 600 + "]" * 600
    payload = ('[{"a":%s,"a":1},{"a":2}]' % nest).encode()
    assert pure_bytes(payload) == b'{"columns":["a"],"rows":[[1],[2]],"constants":{}}'
    with pytest.raises(ValueError, match="more than 512 arrays and objects"):
        parrot_codec.columnarize(payload)
    # The codec passes it on (decoded, no row holds a nested value), and passes it through
    # unchanged when the extension raises.
    with caplog.at_level(logging.WARNING, logger=columnar.__name__):
        ours = outcome(monkeypatch, parrot_codec, payload, {"min_rows": 2})
    assert ours.payload is payload and caplog.records
    theirs = outcome(monkeypatch, None, payload, {"min_rows": 2})
    assert theirs.payload == {"columns": ["a"], "rows": [[1], [2]], "constants": {}}


def corpus_row_arrays():
    """Every array of objects in the corpus: whole files, a query result's rows, a search's
    items."""
    arrays = []
    for path in sorted(CORPUS.glob("*.json")):
        value = json_decoder(path.read_bytes())
        if isinstance(value, list):
            arrays.append((path.name, path.read_bytes()))
        elif isinstance(value, dict):
            for key in ("rows", "items"):
                if isinstance(value.get(key), list):
                    arrays.append((f"{path.name}:{key}", json_encoder(value[key]).encode()))
    return arrays


@pytest.mark.parametrize("name,text", corpus_row_arrays(), ids=lambda value: str(value)[:40])
def test_corpus_rows_match_the_pure_path(name, text):
    assert check_same(text)
    assert check_same(text, as_str=True)


def test_empty_array_gives_empty_lists():
    assert parrot_codec.columnarize(b"[]") == b'{"columns":[],"rows":[],"constants":{}}'
    assert parrot_codec.columnarize(" [ ] ") == pure_bytes(b" [ ] ")


def test_threads_share_the_function():
    payload = b"[" + b",".join(b'{"id":%d,"db":"pg","v":%d.5}' % (i, i) for i in range(5000)) + b"]"
    expected = pure_bytes(payload)
    results = []

    def run():
        results.append(parrot_codec.columnarize(payload))

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [expected] * 4


# -- (b) ai-parrot's codec with and without the extension ---------------------------------------


class Spy:
    """parrot_codec, counting the codec's calls."""

    def __init__(self):
        self.calls = 0

    def columnarize(self, payload, min_rows):
        self.calls += 1
        return parrot_codec.columnarize(payload, min_rows)


def outcome(monkeypatch, extension, payload, params):
    monkeypatch.setattr(columnar, "_RUST", extension)
    monkeypatch.setattr(columnar, "_RUST_CHECKED", True)
    return ColumnarCodec().compress(payload, level=FilterLevel.NORMAL, params=params)


def assert_same_outcome(monkeypatch, caplog, payload, params):
    """The codec's outcome with parrot_codec and without it; how often it called it."""
    spy = Spy()
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger=columnar.__name__):
        ours = outcome(monkeypatch, spy, payload, params)
    assert not caplog.records, "the codec fell back after an exception"
    theirs = outcome(monkeypatch, None, payload, params)
    assert same_typed(ours.payload, theirs.payload), payload[:500]
    for field in ("lossy", "bytes_before", "bytes_after", "est_tokens_saved", "codec_name"):
        assert getattr(ours, field) == getattr(theirs, field), field
    return spy.calls


def test_the_codec_imports_parrot_codec(monkeypatch):
    monkeypatch.setattr(columnar, "_RUST", None)
    monkeypatch.setattr(columnar, "_RUST_CHECKED", False)
    assert columnar._rust() is parrot_codec


def flat_rows_text(rng, rows):
    """Rows the codec hands the extension: one key set, scalar values, some columns constant
    or null, names repeated now and then."""
    names = column_names(rng, rng.randint(2, 10))
    kinds = {name: rng.choice(["constant", "null", "boolish", "scalar"]) for name in names}
    specs = {name: ("num", rng.choice(EQUAL_CLASSES)) for name in names}
    out = []
    for _ in range(rows):
        members = []
        for name in names:
            kind = kinds[name]
            if kind == "constant":
                cell = equal_text(specs[name], rng, 0.02)
            elif kind == "null":
                cell = "null"
            elif kind == "boolish":
                cell = column_cell("boolish", None, rng, 0)
            else:
                cell = scalar_text(rng)
            members.append(string_text(name, rng) + ":" + ws(rng) + cell)
        if rng.random() < 0.1:
            members.append(string_text(rng.choice(names), rng) + ":" + scalar_text(rng))
        out.append("{" + ",".join(members) + "}")
    return ("[" + ",".join(out) + "]").encode()


@pytest.mark.parametrize("seed", range(40))
def test_the_codec_gives_the_same_outcome_on_generated_rows(seed, monkeypatch, caplog):
    rng = random.Random(1000 + seed)
    text = flat_rows_text(rng, rng.choice([20, 25, 60, 200]))
    assert assert_same_outcome(monkeypatch, caplog, text, {}) == 1
    assert assert_same_outcome(monkeypatch, caplog, text.decode(), {"min_rows": 3}) == 1
    mixed = row_set_text(rng)
    assert_same_outcome(monkeypatch, caplog, mixed, {"min_rows": 2})


@pytest.mark.parametrize("path", sorted(CORPUS.glob("*.json")), ids=lambda path: path.name)
@pytest.mark.parametrize("params", [{}, {"min_rows": 2}], ids=["default", "min_rows=2"])
def test_the_codec_gives_the_same_outcome_on_the_corpus(path, params, monkeypatch, caplog):
    raw = path.read_bytes()
    assert_same_outcome(monkeypatch, caplog, raw, params)
    assert_same_outcome(monkeypatch, caplog, raw.decode(), params)


def test_the_codec_calls_the_extension_for_a_query_result(monkeypatch, caplog):
    raw = (CORPUS / "query-500x12.json").read_bytes()
    assert assert_same_outcome(monkeypatch, caplog, raw, {}) == 1


# -- (c) errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "payload,message",
    [
        (b"[{", "not valid JSON (at byte 2)"),
        (b"nope", "not valid JSON (at byte 0)"),
        (b'[{"a":NaN}]', "not valid JSON (at byte 6)"),
        (b'[{"a":"\\ud800"}]', "not valid JSON (at byte 13)"),
        (b'[{"a":1e400}]', "number at byte 6 is out of the range of a 64-bit float"),
        (b'[{"a":"\xff"}]', "not UTF-8: invalid byte at offset 7"),
        (b'{"rows": [{"a": 1}]}', "payload is an object, not an array of rows (at byte 0)"),
        (b'"[]"', "payload is a string, not an array of rows"),
        # The pure path iterates these two as no rows at all; the codec never passes them on.
        (b"{}", "payload is an object, not an array of rows"),
        (b'""', "payload is a string, not an array of rows"),
        (b'[{"a":1}, [1]]', "row 1 is an array, not an object (at byte 10)"),
        (b'[{"a":1}, {"a":2}, null]', "row 2 is null, not an object"),
        ("[\ud800]", "not valid Unicode"),
        ("[" * 600 + "]" * 600, "more than 512 arrays and objects (at byte 512)"),
        (('[{"a":%s},{"a":1}]' % ("[" * 252 + "]" * 252)).encode(),
         'column "a" holds values that would nest 255 levels deep'),
    ],
)
def test_errors_say_what_is_wrong_and_where(payload, message):
    with pytest.raises(ValueError) as raised:
        parrot_codec.columnarize(payload)
    assert message in str(raised.value)


@pytest.mark.parametrize("min_rows", [-1, "20", 1.5, 20.0, None, True, [20]])
def test_min_rows_must_be_a_non_negative_int(min_rows):
    with pytest.raises(ValueError, match="min_rows: expected a non-negative int"):
        parrot_codec.columnarize(b"[]", min_rows)
    with pytest.raises(ValueError, match="min_rows"):
        parrot_codec.columnarize(b"[]", min_rows=min_rows)


@pytest.mark.parametrize("min_rows", [0, 1, 20, 10**30])
def test_min_rows_is_not_applied(min_rows):
    payload = b'[{"a":1,"b":2},{"a":1,"b":3}]'
    assert parrot_codec.columnarize(payload, min_rows) == pure_bytes(payload)


@pytest.mark.parametrize(
    "payload,type_name",
    [(bytearray(b"[]"), "bytearray"), (memoryview(b"[]"), "memoryview"), (12, "int"),
     (None, "NoneType"), ([{"a": 1}], "list")],
)
def test_payload_must_be_bytes_or_str(payload, type_name):
    with pytest.raises(TypeError, match=f"expected bytes or str .*got {type_name}"):
        parrot_codec.columnarize(payload)
