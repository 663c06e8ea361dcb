"""Host.compress_request on real request bodies of the three APIs: every byte outside the tool
results kept, each result replaced by what Host.compress makes of it, errors and unknown calls
left alone, the recovery tool offered as serve offers it, and its calls answered."""

import json

import pytest

from conftest import CORPUS
from parrot_compress import RECOVERY_TOOL, Host, recovery_tool

REPOS = (CORPUS / "github-repos.json").read_text()
BUILD_LOG = (CORPUS / "build-log.txt").read_text()
FAILURE = "error: could not compile `parrot` (lib) due to 1 previous error\n" * 3
lit = json.dumps

# Each body is its segments with a tool result's text between each two: the segments are what
# must come back byte for byte (odd whitespace, escapes and member order included).
ANTHROPIC = [
    '{\n  "model": "claude-sonnet-4-5",  "max_tokens": 1024,\n'
    '  "system": "You are a careful agent \\u00e9 ✓",\n'
    '  "tools": [{"name": "github_list_repos", "description": "Lists repos", '
    '"input_schema": {"type": "object"}}],\n'
    '  "messages": [\n'
    '    {"role": "user", "content": "Which repos? \\ud83d\\ude00"},\n'
    '    {"role": "assistant", "content": [{"type": "text", "text": "Looking."},\n'
    '      {"type": "tool_use", "id": "toolu_1", "name": "github_list_repos", "input": {}},\n'
    '      {"type": "tool_use", "id": "toolu_2", "name": "shell_cargo_build", "input": {"cmd": "cargo build"}},\n'
    '      {"type": "tool_use", "id": "toolu_3", "name": "shell_cargo_test", "input": {}}]},\n'
    '    {"role": "user", "content": [\n'
    '      {"type": "tool_result", "tool_use_id": "toolu_1", "content": ',
    '},\n      {"type": "tool_result", "tool_use_id": "toolu_2", "content": [{"type": "text", "text": ',
    '}]},\n      {"type": "tool_result", "tool_use_id": "toolu_3", "is_error": true, "content": ',
    '},\n      {"type": "tool_result", "tool_use_id": "toolu_9", "content": ',
    '}]}\n  ]\n}\n',
]
CHAT = [
    '{"model":"gpt-5","temperature":0,"messages":[{"role":"system","content":"Be brief."},'
    '{"role":"user","content":"Build it"},{"role":"assistant","content":null,"tool_calls":['
    '{"id":"call_1","type":"function","function":{"name":"github_list_repos","arguments":"{}"}},'
    '{"id":"call_2","type":"function","function":{"name":"shell_cargo_build","arguments":"{\\"cmd\\":\\"cargo build\\"}"}},'
    '{"id":"call_3","type":"function","function":{"name":"shell_cargo_test","arguments":"{}"}}]},'
    '{"role":"tool","tool_call_id":"call_1","content":',
    '},{"role":"tool","tool_call_id":"call_2","content":',
    '},{"role":"tool","tool_call_id":"call_3","content":',
    '},{"role":"tool","tool_call_id":"call_9","content":',
    '}],"tools":[{"type":"function","function":{"name":"github_list_repos","parameters":{}}}]}',
]
RESPONSES = [
    '{"model": "gpt-5", "input": [{"role": "user", "content": "Build it"},'
    ' {"type": "function_call", "call_id": "c1", "name": "github_list_repos", "arguments": "{}"},'
    ' {"type": "function_call", "call_id": "c2", "name": "shell_cargo_build", "arguments": "{}"},'
    ' {"type": "function_call", "call_id": "c3", "name": "shell_cargo_test", "arguments": "{}"},'
    ' {"type": "function_call_output", "call_id": "c1", "output": ',
    '}, {"type": "function_call_output", "call_id": "c2", "output": ',
    '}, {"type": "function_call_output", "call_id": "c3", "output": ',
    '}, {"type": "function_call_output", "call_id": "c9", "output": ',
    '}], "tools": [{"type": "function", "name": "github_list_repos", "parameters": {}}]}',
]
# The results, in the order of the literals: (tool, text, compressed?).
RESULTS = [
    ("github_list_repos", REPOS, True),
    ("shell_cargo_build", BUILD_LOG, True),
    # Chat and Responses have no error flag: a failure's text is short and stays as it is.
    ("shell_cargo_test", FAILURE, False),
    (None, BUILD_LOG, False),
]
APIS = {"anthropic": ANTHROPIC, "openai-chat": CHAT, "openai-responses": RESPONSES}


def body_of(segments):
    parts = [segments[0]]
    for (_, text, _), segment in zip(RESULTS, segments[1:]):
        parts.append(lit(text))
        parts.append(segment)
    return "".join(parts)


def texts_between(body, segments):
    """The result texts of `body` when its segments are exactly `segments`: asserts every
    byte outside the tool results."""
    decoder = json.JSONDecoder()
    assert body.startswith(segments[0])
    at = len(segments[0])
    texts = []
    for segment in segments[1:]:
        text, end = decoder.raw_decode(body, at)
        texts.append(text)
        assert body[end : end + len(segment)] == segment, body[end : end + 200]
        at = end + len(segment)
    assert at == len(body)
    return texts


@pytest.mark.parametrize("api", APIS)
def test_only_the_tool_results_change(project, api):
    host = Host(project=project)
    segments = APIS[api]
    body = body_of(segments)
    rewrite = host.compress_request(body.encode(), api, recovery_tool=False)
    assert isinstance(rewrite.body, bytes)
    texts = texts_between(rewrite.body.decode(), segments)
    for (tool, original, compressed), text in zip(RESULTS, texts):
        if compressed:
            assert text == host.compress(tool, original).payload
            assert len(text) < len(original)
        else:
            assert text == original
    assert rewrite.counts == {
        "seen": 4,
        "compressed": 2,
        "errors": 1 if api == "anthropic" else 0,
        "unknown": 1,
    }
    assert [r["tool"] for r in rewrite.replaced] == ["github_list_repos", "shell_cargo_build"]
    assert rewrite.replaced[1]["codec"] == "log" and rewrite.replaced[1]["tee_key"]
    assert not rewrite.recovery_tool


@pytest.mark.parametrize("api", APIS)
def test_the_recovery_tool_is_appended_to_the_tools(project, api):
    host = Host(project=project)
    body = body_of(APIS[api])
    without = host.compress_request(body, api, recovery_tool=False).body
    rewrite = host.compress_request(body, api)
    assert isinstance(rewrite.body, str) and rewrite.recovery_tool
    ours, theirs = json.loads(rewrite.body), json.loads(without)
    assert ours["tools"][:-1] == theirs["tools"]
    assert ours["tools"][-1] == recovery_tool(api)
    ours.pop("tools")
    theirs.pop("tools")
    assert ours == theirs


def test_a_body_that_is_not_the_apis_request_is_refused_naming_where(project):
    host = Host(project=project)
    with pytest.raises(ValueError, match=r"messages\[0\]\.content: expected a string or an array"):
        host.compress_request('{"messages": [{"role": "user", "content": 7}]}')
    with pytest.raises(ValueError, match="api"):
        host.compress_request("{}", api="gemini")
    with pytest.raises(TypeError, match="body"):
        host.compress_request({"messages": []})


def test_an_unchanged_body_is_the_same_object(project):
    body = b'{"model": "m", "messages": [{"role": "user", "content": "hi"}]}'
    assert Host(project=project).compress_request(body, recovery_tool=False).body is body


def test_the_recovery_tools_calls_are_answered_in_their_namespace(project):
    host = Host(project=project)
    rewrite = host.compress_request(body_of(ANTHROPIC), namespace="alice")
    key = rewrite.replaced[1]["tee_key"]
    text, is_error = host.answer_recovery({"key": key, "grep": "^error"}, namespace="alice")
    assert not is_error
    assert text.splitlines()[0] == f'[{RECOVERY_TOOL} {{"key":"{key}","grep":"^error"}}]'
    assert "4101:error[E0308]" in text
    text, is_error = host.answer_recovery(json.dumps({"key": key}), namespace="bob")
    assert is_error and "no original is stored" in text
    text, is_error = host.answer_recovery({"key": key, "lines": "1-2", "pointer": "/x"},
                                          namespace="alice")
    assert is_error and "lines" in text and "pointer" in text
    text, is_error = host.answer_recovery("not json")
    assert is_error and "key" in text


def test_a_key_naming_a_namespace_reads_nothing_without_it(project):
    """The review's finding (issue 47): a namespace's original is stored under
    `<namespace>/<key>`, and `recover("alice/KEY")` and `answer_recovery({"key": "alice/KEY"})`
    (the model's own arguments) read it. Without the namespace, such a key is one nobody holds;
    in it, the plain key still reads it."""
    host = Host(project=project)
    rewrite = host.compress_request(body_of(ANTHROPIC), namespace="alice")
    key = rewrite.replaced[1]["tee_key"]
    named = f"alice/{key}"
    assert host.recover(key, namespace="alice") == BUILD_LOG.encode()
    not_found = f'no original is stored under "{named}"'
    for selector in ({}, {"lines": "1-3"}):
        with pytest.raises(KeyError) as raised:
            host.recover(named, **selector)
        assert raised.value.args == (not_found,)
    text, is_error = host.answer_recovery({"key": named})
    assert (text, is_error) == (not_found, True)
    text, is_error = host.answer_recovery({"key": named, "lines": "1-"})
    assert (text, is_error) == (not_found, True)
