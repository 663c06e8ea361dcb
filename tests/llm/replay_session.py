"""Sends a session's tool results (JSON lines {"tool", "status", "result"}, default
samples/session.jsonl) as one Anthropic Messages conversation through `parrot-compress serve`,
with the official SDK, to a local upstream that records the body it receives, and prints what
the proxy changed: request bytes, and the tool results' tokens from the proxy's report.

    python3 tests/llm/replay_session.py PARROT_COMPRESS [SESSION]

Run it with the venv's python (tests/llm/.venv/bin/python) or any python with `anthropic`.
"""

import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
import urllib.request

import anthropic

command = sys.argv[1]
session = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
    os.path.dirname(__file__), "..", "..", "samples", "session.jsonl"
)

received = []


class Upstream(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        received.append(self.rfile.read(int(self.headers["content-length"])))
        body = json.dumps({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
            "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1},
        }).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
threading.Thread(target=server.serve_forever, daemon=True).start()
upstream = "http://127.0.0.1:%d" % server.server_address[1]

messages = [{"role": "user", "content": "Go through the data and the builds."}]
with open(session) as lines:
    for number, line in enumerate(lines):
        call = json.loads(line)
        result = call["result"]
        text = result if isinstance(result, str) else json.dumps(result)
        messages.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_%d" % number, "name": call["tool"], "input": {}}]})
        block = {"type": "tool_result", "tool_use_id": "toolu_%d" % number, "content": text}
        if call.get("status", "success") != "success":
            block["is_error"] = True
        messages.append({"role": "user", "content": [block]})
messages.append({"role": "user", "content": "Summarise."})
# Consecutive user messages are fine for this measurement; merge them for a valid conversation.
merged = []
for message in messages:
    if merged and merged[-1]["role"] == message["role"] == "user":
        previous = merged[-1]["content"]
        previous = previous if isinstance(previous, list) else [{"type": "text", "text": previous}]
        current = message["content"]
        current = current if isinstance(current, list) else [{"type": "text", "text": current}]
        merged[-1]["content"] = previous + current
    else:
        merged.append(message)
request = {"model": "claude-sonnet-4-5", "max_tokens": 1024, "messages": merged}


def send(base_url):
    client = anthropic.Anthropic(api_key="sk-ant-none", base_url=base_url, max_retries=0)
    client.messages.create(**request)
    return received[-1]


direct = send(upstream)
with tempfile.TemporaryDirectory() as project:
    proxy = subprocess.Popen(
        [command, "--project", project, "serve", "--listen", "127.0.0.1:0",
         "--upstream-anthropic", upstream],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        url = proxy.stdout.readline().strip().removeprefix("listening on ")
        proxied = send(url)
        report = json.load(urllib.request.urlopen(url + "/parrot/report"))
    finally:
        proxy.terminate()
        proxy.wait()

total = report["total"]
print("request bytes: %d direct, %d through the proxy (%.1f%% smaller)" % (
    len(direct), len(proxied), 100.0 * (1 - len(proxied) / len(direct))))
print("tool results: %d, %d compressed; tokens (%s) %d -> %d (%.1f%% saved)" % (
    total["calls"], total["compressed"], report["tokenizer"], total["tokens_before"],
    total["tokens_after"], total["tokens_saved_pct"]))
