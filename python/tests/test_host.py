"""parrot_compress.Host on the corpus: the same payloads and metadata as the command, recovery,
the report, explain, construction errors, a plugin cdylib, Redis, threads, the kill switch."""

import json
import subprocess
import threading

import pytest

from conftest import CORPUS, ROOT, corpus_files
from parrot_compress import BuildError, Host

BUILD_LOG = CORPUS / "build-log.txt"


def tool_of(path):
    return "shell_cargo_build" if path.suffix == ".txt" else path.stem.replace("-", "_")


def without_time(meta):
    return {name: value for name, value in meta.items() if name != "compression_duration_ms"}


def command_compress(command, project, tool, path):
    done = subprocess.run(
        [str(command), "--project", str(project), "compress", "--tool", tool, "--meta", str(path)],
        capture_output=True,
        check=True,
    )
    return done.stdout, json.loads(done.stderr.decode().strip().splitlines()[-1])


@pytest.mark.parametrize("path", corpus_files(), ids=lambda path: path.name)
def test_compress_matches_the_command_on_the_corpus(path, tmp_path, command):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    ours.mkdir()
    theirs.mkdir()
    text = path.read_text()
    payload, meta = Host(project=ours).compress(tool_of(path), text)
    expected_payload, expected_meta = command_compress(command, theirs, tool_of(path), path)
    assert payload.encode() == expected_payload
    assert without_time(meta) == without_time(expected_meta)
    assert isinstance(payload, str)


def test_bytes_in_bytes_out_and_an_unchanged_result_is_the_same_object(project):
    host = Host(project=project)
    raw = BUILD_LOG.read_bytes()
    payload, meta = host.compress("shell_cargo_build", raw)
    assert isinstance(payload, bytes) and meta["compression_codec"] == "log"
    tiny = "ok"
    same, meta = host.compress("shell_ls", tiny)
    assert same is tiny and meta["_compressed"] is False


def test_a_python_value_is_compressed_as_its_compact_json(project):
    host = Host(project=project)
    rows = json.loads((CORPUS / "query-500x12.json").read_text())
    text = json.dumps(rows, separators=(",", ":"), ensure_ascii=False)
    from_value = host.compress("dq_execute_database_query", rows)
    from_text = host.compress("dq_execute_database_query", text)
    assert from_value.payload == from_text.payload
    assert without_time(from_value.meta) == without_time(from_text.meta)
    assert from_value.meta["result_size_bytes_original"] == len(text.encode())


@pytest.mark.parametrize(
    "value, where",
    [
        ({"a": {1: "x"}}, 'result["a"]: the key 1 is a int, not a str'),
        ({"rows": [1, {"at": object()}]}, 'result["rows"][1]["at"]: a object is not JSON'),
        ([float("nan")], "result[0]: NaN is not a JSON number"),
    ],
)
def test_a_value_that_is_not_json_is_refused_naming_where(project, value, where):
    with pytest.raises((TypeError, ValueError)) as caught:
        Host(project=project).compress("t", value)
    assert where in str(caught.value)


INJECTED = '1, "injected": true'


class InjectingInt(int):
    """An int whose own text would break out of its place in the JSON."""

    def __str__(self):
        return INJECTED

    __repr__ = __str__

    def __int__(self):
        return 7

    __index__ = __int__


class InjectingFloat(float):
    def __str__(self):
        return INJECTED

    __repr__ = __str__

    def __float__(self):
        return 7.0


class InjectingStr(str):
    def __str__(self):
        return INJECTED

    __repr__ = __str__


class ItemsDict(dict):
    """A dict whose members, as json.dumps reads them, are what its items() gives."""

    def items(self):
        return [("from_items", InjectingInt(5))]


class IteratingList(list):
    def __iter__(self):
        return iter([InjectingFloat(0.5), InjectingStr("s")])


def moved_to_end():
    from collections import OrderedDict

    ordered = OrderedDict(a=1, b=2)
    ordered.move_to_end("a")
    return ordered


def rows_of_subclasses():
    return [
        {"id": InjectingInt(n), "big": InjectingInt(2**70 + n), "at": InjectingFloat(n / 4)}
        for n in range(40)
    ]


@pytest.mark.parametrize(
    "value",
    [
        {"a": InjectingInt(2**70)},
        {"a": InjectingInt(3)},
        {"a": InjectingInt(-(2**70))},
        {"a": InjectingFloat(2.5)},
        {"a": InjectingFloat(1e16)},
        {"a": InjectingStr("text")},
        ItemsDict(hidden=1),
        [IteratingList([1, 2])],
        moved_to_end(),
        rows_of_subclasses(),
    ],
    ids=["big-int", "small-int", "negative-int", "float", "exponent-float", "str",
         "dict-items", "list-iter", "ordered-dict", "rows"],
)
def test_a_subclass_is_written_as_json_dumps_writes_it_not_as_its_own_text(project, value):
    host = Host(project=project, tee_store=False)
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    assert "injected" not in text
    ours = host.compress("t", value)
    assert "injected" not in ours.payload
    assert ours.meta["result_size_bytes_original"] == len(text.encode())
    theirs = host.compress("t", text)
    assert ours.payload == theirs.payload
    assert without_time(ours.meta) == without_time(theirs.meta)
    if not ours.meta["_compressed"]:
        assert ours.payload == text


def test_a_number_subclass_runs_none_of_its_methods_while_it_is_written(project):
    """The review's case: a float whose __repr__ changed the dict being written, which ended in
    a Rust panic. Its __repr__ is not called now, as json.dumps does not call it."""
    value = {}

    class Changing(float):
        def __repr__(self):
            value["added"] = True
            return "0.0"

    value.update({"a": Changing(1.5), "b": 2})
    host = Host(project=project, tee_store=False)
    ours = host.compress("t", value)
    assert list(value) == ["a", "b"]
    assert ours.meta["result_size_bytes_original"] == len('{"a":1.5,"b":2}')
    assert ours.payload == host.compress("t", '{"a":1.5,"b":2}').payload


def changed_by_a_member(change):
    """A dict whose first member's items() changes the dict itself while it is being written."""
    value = {}

    class Changing(dict):
        def items(self):
            change(value)
            return super().items()

    value.update({"a": Changing(x=1), "b": 2, "c": 3})
    return value


def grow(value):
    value["added"] = 1


def swap(value):
    del value["a"]
    value["d"] = 4


@pytest.mark.parametrize(
    "change, message",
    [(grow, "changed size"), (swap, "keys changed")],
    ids=["grown", "keys-swapped"],
)
def test_a_dict_changed_while_it_is_written_raises_runtime_error_without_a_backtrace(
    project, capfd, change, message
):
    host = Host(project=project, tee_store=False)
    caught = None
    try:
        host.compress("t", {"rows": [changed_by_a_member(change)]})
    except Exception as err:  # noqa: BLE001 - what `except Exception` catches is the point
        caught = err
    assert isinstance(caught, RuntimeError), repr(caught)
    assert str(caught) == f'result["rows"][0]: dictionary {message} during iteration'
    stderr = capfd.readouterr().err
    assert "panicked" not in stderr and "backtrace" not in stderr, stderr


@pytest.mark.parametrize(
    "items, error, where",
    [
        (lambda: [("a",)], ValueError, "result[0]: items() must return 2-tuples, got ('a',)"),
        (lambda: 5, TypeError, "result[0]: Odd.items() returned a non-iterable (int)"),
        (lambda: [(1, 2)], TypeError, "result[0]: the key 1 is a int, not a str"),
    ],
    ids=["not-a-pair", "not-iterable", "key-not-str"],
)
def test_a_dict_subclass_whose_items_are_not_members_is_refused_naming_where(
    project, items, error, where
):
    class Odd(dict):
        pass

    Odd.items = lambda self: items()
    with pytest.raises(error) as caught:
        Host(project=project, tee_store=False).compress("t", [Odd(a=1)])
    assert where in str(caught.value)


def test_a_lossy_result_is_recovered_exactly(project):
    host = Host(project=project)
    payload, meta = host.compress("shell_cargo_build", BUILD_LOG.read_text())
    key = meta["compression_tee_key"]
    assert meta["compression_teed"] is True and key in payload
    assert host.recover(key) == BUILD_LOG.read_bytes()
    # A new host over the same project reads the same store.
    assert Host(project=project).recover(key) == BUILD_LOG.read_bytes()


def test_recover_with_selectors_answers_as_the_recovery_tool(project, command):
    host = Host(project=project)
    key = host.compress("shell_cargo_build", BUILD_LOG.read_text()).meta["compression_tee_key"]
    part = host.recover(key, grep="^error", context=1)
    assert part.splitlines()[0] == f'[wm_get_result {{"key":"{key}","grep":"^error","context":1}}]'
    assert "4101:error[E0308]" in part
    lines = host.recover(key, lines="4100-4102")
    assert lines.splitlines()[1:] == BUILD_LOG.read_text().splitlines()[4099:4102]
    assert host.recover(key, lines=4101).splitlines()[1] == BUILD_LOG.read_text().splitlines()[4100]
    # The command prints the same part (its continuation written as its own flags).
    done = subprocess.run(
        [str(command), "--project", str(project), "recover", key, "--grep", "^error",
         "--context", "1"],
        capture_output=True, check=True, text=True,
    )
    assert done.stdout.splitlines()[1:] == part.splitlines()[1:]


def test_recover_pointer_and_rows_of_a_json_original(project):
    host = Host(project=project, tee_lossless=True)
    text = (CORPUS / "github-repos.json").read_text()
    payload, meta = host.compress("github_list_repos", text)
    key = meta["compression_tee_key"]
    assert host.recover(key) == text.encode()
    first = json.loads(text)[0]
    assert json.loads(host.recover(key, pointer="/0/name").splitlines()[1]) == first["name"]
    rows = host.recover(key, rows="1-2").splitlines()
    assert rows[1] == "[rows 1-2 of 100 at the root]"
    assert json.loads(text)[1]["name"] in rows[3] and json.loads(text)[2]["name"] in rows[4]


def test_recover_errors_name_what_is_wrong(project):
    host = Host(project=project)
    key = host.compress("shell_cargo_build", BUILD_LOG.read_text()).meta["compression_tee_key"]
    with pytest.raises(KeyError, match="did you mean"):
        host.recover(key[:-1])
    with pytest.raises(ValueError, match="context"):
        host.recover(key, context=-1)
    with pytest.raises(ValueError):
        host.recover(key, lines="4100-4102", pointer="/x")


def test_report_counts_every_call_as_a_dict_and_as_the_table(project):
    host = Host(project=project)
    files = corpus_files()
    for path in files:
        host.compress(tool_of(path), path.read_text())
    report = host.report()
    assert report["total"]["calls"] == len(files)
    assert report["tokenizer"] == "o200k_base"
    assert {row["tool"] for row in report["tools"]} == {tool_of(path) for path in files}
    assert report["total"]["tokens_after"] < report["total"]["tokens_before"]
    table = host.report_table()
    assert table.splitlines()[0].startswith("tool")
    assert any(line.startswith("TOTAL") and f" {len(files)} " in line for line in table.splitlines())


def test_explain_is_the_commands(project, command):
    done = subprocess.run(
        [str(command), "--project", str(project), "explain", "github_list_repos"],
        capture_output=True, check=True, text=True,
    )
    assert Host(project=project).explain("github_list_repos") == done.stdout


def test_a_bad_manifest_raises_every_error_the_command_prints(project, command):
    (project / ".parrot").mkdir()
    (project / ".parrot" / "compressors.toml").write_text(
        '[compressor."sql_*"]\ncodec = "nope"\nlevel = "loud"\n'
    )
    with pytest.raises(BuildError) as caught:
        Host(project=project)
    done = subprocess.run(
        [str(command), "--project", str(project), "check"], capture_output=True, text=True
    )
    assert done.returncode == 2
    printed = [line.removeprefix("error: ") for line in done.stderr.splitlines()]
    assert caught.value.errors == printed
    assert str(caught.value) == "\n".join(printed)
    assert 'entry "sql_*": unknown codec "nope"' in str(caught.value)
    assert 'key "level": unknown level "loud"' in str(caught.value)


def test_a_missing_plugin_is_a_build_error(project, tmp_path):
    with pytest.raises(BuildError, match="no such directory"):
        Host(project=project, plugins=[tmp_path / "absent"])
    package = tmp_path / "broken"
    package.mkdir()
    (package / "compressors.toml").write_text(
        '[plugin]\nlibrary = "parrot_plugin_gone"\ncodecs = ["gone"]\n'
    )
    with pytest.raises(BuildError) as caught:
        Host(project=project, plugins=[package])
    assert "parrot_plugin_gone" in str(caught.value) and str(package) in str(caught.value)


@pytest.mark.parametrize(
    "url, message",
    [
        ("redis://localhost/x", 'database "x" is not a number'),
        ("redis://localhost/1?bogus=1", 'unknown parameter "bogus"'),
        ("memcached://localhost", "memcached"),
    ],
)
def test_a_bad_store_url_is_a_build_error(project, url, message):
    with pytest.raises(BuildError, match=message) as caught:
        Host(project=project, tee_store=url)
    assert url.split("?")[0] in str(caught.value)


def test_bad_settings_are_refused(project):
    with pytest.raises(BuildError, match='tokenizer "p50k"'):
        Host(project=project, tokenizer="p50k")
    with pytest.raises(TypeError, match="tee_store"):
        Host(project=project, tee_store=True)
    with pytest.raises(ValueError, match='unknown level "loud"'):
        Host(project=project).compress("t", "x", level="loud")
    with pytest.raises(TypeError, match="plugins: expected a list of plugin package folders"):
        Host(project=project, plugins=str(project))
    with pytest.raises(TypeError, match="result: a bytearray is not a tool result"):
        Host(project=project).compress("t", bytearray(b"x"))


def test_a_plugin_cdylib_is_loaded_and_compresses(project, line_dedup_package):
    host = Host(project=project, plugins=[line_dedup_package])
    log = "".join(f"step {n}\n" + "waiting for lock\n" * 40 for n in range(20))
    payload, meta = host.compress("shell_poll", log)
    assert meta["compression_codec"] == "line_dedup"
    assert "[... previous line repeated 39 more times ...]" in payload
    assert "line_dedup" in host.explain("shell_poll")


def test_no_store_means_lossy_results_pass_through(project):
    host = Host(project=project, tee_store=False)
    payload, meta = host.compress("shell_cargo_build", BUILD_LOG.read_text())
    assert "compression_tee_key" not in meta
    assert not (project / ".parrot" / "tee.db").exists()


def test_a_redis_store_is_shared_between_hosts(tmp_path, redis_url):
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    payload, meta = Host(project=one, tee_store=redis_url).compress(
        "shell_cargo_build", BUILD_LOG.read_text()
    )
    key = meta["compression_tee_key"]
    assert Host(project=two, tee_store=redis_url).recover(key) == BUILD_LOG.read_bytes()


def log_of(thread, call):
    lines = [f"2026-12-07T10:00:{n % 60:02}Z INFO compiling crate_{n} v0.{n}.0" for n in range(300)]
    lines[150] = f"error[E0308]: mismatched types in thread {thread} call {call}"
    return "\n".join(lines) + "\n"


def test_eight_threads_share_one_host_and_every_lossy_result_is_recoverable(project):
    host = Host(project=project)
    results = {}
    failures = []

    def work(thread):
        try:
            for call in range(500):
                text = log_of(thread, call)
                payload, meta = host.compress("shell_build", text)
                assert meta["compression_teed"], meta
                assert f"thread {thread} call {call}" in payload
                results[(thread, call)] = (meta["compression_tee_key"], text)
        except Exception as err:  # noqa: BLE001 - reported below with the thread
            failures.append((thread, err))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert len(results) == 8 * 500
    assert len({key for key, _ in results.values()}) == 8 * 500
    for key, text in results.values():
        assert host.recover(key) == text.encode()
    assert host.report()["total"]["calls"] == 8 * 500


def test_the_kill_switch_passes_everything_through_and_touches_nothing(project, monkeypatch):
    stored = Host(project=project).compress("shell_cargo_build", BUILD_LOG.read_text())
    key = stored.meta["compression_tee_key"]
    (project / ".parrot" / "compressors.toml").write_text('[compressor."x"]\ncodec = "nope"\n')
    monkeypatch.setenv("PARROT_COMPRESSION_DISABLED", "1")
    host = Host(project=project, plugins=[project / "absent"])
    assert host.killed
    text = BUILD_LOG.read_text()
    payload, meta = host.compress("shell_cargo_build", text)
    assert payload is text
    assert meta == {
        "_compressed": False,
        "compression_codec": None,
        "compression_level": "none",
        "result_size_bytes_original": len(text.encode()),
        "result_size_bytes": len(text.encode()),
        "compression_duration_ms": 0.0,
        "compression_teed": False,
        "compression_skipped": "kill_switch",
    }
    assert host.report()["total"]["calls"] == 0
    # The switch stops compression, not recovery.
    assert host.recover(key) == BUILD_LOG.read_bytes()
    rewrite = host.compress_request(b'{"messages": []}')
    assert rewrite.counts["seen"] == 0 and not rewrite.recovery_tool


OBJECT = {"id": 7, "tags": None, "items": [{"x": 1}, {"x": 1}, {"x": 1}]}
# json_compact leaves out null members, which the contract counts as absent.
OBJECT_WITHOUT_NULLS = {"id": 7, "items": [{"x": 1}, {"x": 1}, {"x": 1}]}


def test_expand_gives_back_the_value_of_what_compress_made(project):
    host = Host(project=project)
    payload, meta = host.compress("t", OBJECT)
    assert meta["compression_codec"] == "json_compact"
    expanded = host.expand("json_compact", payload)
    assert isinstance(expanded, str)
    assert json.loads(expanded) == OBJECT_WITHOUT_NULLS
    assert host.expand("json_compact", payload.encode()) == expanded
    # As the model saw it, with a lossless pointer: the pointer is taken off.
    teed = Host(project=project, tee_lossless=True)
    text = (CORPUS / "github-repos.json").read_text()
    payload, meta = teed.compress("github_list_repos", text)
    # JSON keeps its `_tee` member; a text winner (TOON) ends with its pointer line.
    if payload.lstrip().startswith(("{", "[")):
        assert json.loads(payload)["_tee"]["reason"] == "lossless"
    else:
        last = payload.splitlines()[-1]
        assert last.startswith('[wm_get_result {"key":') and "of this lossless result" in last
    assert json.loads(teed.expand(meta["compression_codec"], payload)) == json.loads(text)


def test_expand_of_a_lossy_output_raises_the_commands_message_with_its_key(project, command):
    host = Host(project=project)
    payload, meta = host.compress("shell_cargo_build", BUILD_LOG.read_text())
    key = meta["compression_tee_key"]
    with pytest.raises(ValueError) as caught:
        host.expand("log", payload)
    assert str(caught.value).endswith(f"the tee store holds the original: parrot-compress recover {key}")
    done = subprocess.run(
        [str(command), "--project", str(project), "expand", "--codec", "log"],
        input=payload.encode(), capture_output=True,
    )
    assert done.returncode == 2
    assert done.stderr.decode() == f"error: {caught.value}\n"
    assert host.recover(key) == BUILD_LOG.read_bytes()


@pytest.mark.parametrize(
    "codec, payload, error, message",
    [
        ("jsn_compact", "[1]", ValueError, 'unknown codec "jsn_compact" .*; did you mean "json_compact"\\?$'),
        ("auto", "[1]", ValueError, '^codec "auto" is the router, not a codec: .*"compression_codec"'),
        ("log", "folded", ValueError, '^codec "log" offers no inverse'),
        ("json_compact", "garbage {", ValueError, '^codec "json_compact" cannot expand this payload: '),
        ("toon", b"[\xff]", ValueError, "^payload: not UTF-8 at byte 1"),
        ("toon", 1, TypeError, "^payload: expected str or bytes, got 1$"),
    ],
)
def test_expand_errors_name_what_is_wrong(project, codec, payload, error, message):
    with pytest.raises(error, match=message):
        Host(project=project).expand(codec, payload)


def test_the_kill_switch_does_not_stop_expand(project, monkeypatch):
    payload = Host(project=project).compress("t", OBJECT).payload
    monkeypatch.setenv("PARROT_COMPRESSION_DISABLED", "1")
    host = Host(project=project)
    assert host.killed
    assert json.loads(host.expand("json_compact", payload)) == OBJECT_WITHOUT_NULLS
