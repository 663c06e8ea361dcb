#!/usr/bin/env python3
"""A scripted MCP server for the mcp-proxy tests: what a real server rarely does on demand.

It reads JSON-RPC lines on stdin and writes its messages with Python's default separators
(", " and ": "), so a test can tell a relayed line from a re-serialized one. Its tools:

  rows         a result whose text is a pretty-printed JSON array (compressible)
  rows_error   the same text with isError: true
  progress     two notifications/progress for the call's progressToken, then rows
  hold         no answer until a `release` call arrives; then the answer to `release` first,
               then this one (out-of-order responses)
  release      see hold
  batch        answers with one JSON array: a log notification, then rows
  ping_me      sends the client a ping request, waits for its response, then answers
  wait_cancel  no answer; a notifications/cancelled for it makes the server log "cancelled ID"
  garbage      writes a line that is not JSON, then answers with rows
  die          exits with status 3 without answering
  hang         never answers (for killing the server mid-call)
  exotic       rows in a line written by hand: numbers as 1E400 and -0.0, escapes, odd
               whitespace and member order around the text block (the request's id as sent)
  spawn        starts a child process (`sleep 600`, sharing the server's stdout, as `npx`
               shares it with `node`) and answers "pid N"
  detach       starts a daemon the way one detaches: a shell in a new session (setsid())
               starts `sleep 600` with its input and output on /dev/null and exits at once,
               so the sleep leaves the server's process group and loses its parent; answers
               "pid N" (the sleep's)
  goodbye      from now on SIGTERM makes the server write a notifications/message
               "terminated by signal 15" and exit 0
  ignore_term  from now on the server ignores SIGTERM (and so do the children it spawns after)
  linger       the server keeps running when its input closes
  file         the text of the file at the argument "path", "times" times over (a big result)

Any other method gets {"echo": <method>, "params": <params>}; a line that is not JSON gets a
JSON-RPC parse error (-32700) whose data is the line as received.
"""
import json
import signal
import subprocess
import sys
import time

TOOLS = ["rows", "rows_error", "progress", "hold", "release", "batch", "ping_me",
         "wait_cancel", "garbage", "die", "hang", "exotic", "spawn", "detach", "goodbye",
         "ignore_term", "linger", "file"]


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def rows_text(n=40):
    return json.dumps([{"id": i, "name": "row %d" % i, "note": None} for i in range(n)], indent=2)


def text_result(text, is_error=False):
    result = {"content": [{"type": "text", "text": text}]}
    if is_error:
        result["isError"] = True
    return result


def goodbye(signum, _frame):
    send({"jsonrpc": "2.0", "method": "notifications/message",
          "params": {"level": "info", "data": "terminated by signal %d" % signum}})
    sys.exit(0)


def main():
    lingering = False
    held = None
    pinging = None
    waiting_cancel = None
    for raw in sys.stdin:
        line = raw.rstrip("\n")
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            send({"jsonrpc": "2.0", "id": None,
                  "error": {"code": -32700, "message": "Parse error", "data": line}})
            continue
        if isinstance(message, list):
            send([{"jsonrpc": "2.0", "id": m.get("id"), "result": {"echo": m.get("method")}}
                  for m in message if isinstance(m, dict) and "id" in m])
            continue
        method = message.get("method")
        mid = message.get("id")
        params = message.get("params") or {}
        if method is None:
            # A response from the client: the answer to the server's ping.
            if pinging is not None and mid == "server-ping-1":
                send({"jsonrpc": "2.0", "id": pinging,
                      "result": text_result("pong received: %s" % json.dumps(message))})
                pinging = None
            continue
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": mid, "result": {
                "protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}, "resources": {}, "prompts": {}},
                "serverInfo": {"name": "fake", "version": "1.0.0"}}})
        elif method == "notifications/cancelled":
            if waiting_cancel is not None and params.get("requestId") == waiting_cancel:
                send({"jsonrpc": "2.0", "method": "notifications/message",
                      "params": {"level": "info", "data": "cancelled %s" % waiting_cancel}})
                waiting_cancel = None
        elif method and method.startswith("notifications/"):
            pass
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": mid, "result": {"tools": [
                {"name": name, "inputSchema": {"type": "object"}} for name in TOOLS]}})
        elif method == "tools/call":
            name = params.get("name")
            if name == "rows":
                send({"jsonrpc": "2.0", "id": mid, "result": text_result(rows_text())})
            elif name == "rows_error":
                send({"jsonrpc": "2.0", "id": mid, "result": text_result(rows_text(), True)})
            elif name == "progress":
                token = (params.get("_meta") or {}).get("progressToken")
                for step in (1, 2):
                    send({"jsonrpc": "2.0", "method": "notifications/progress",
                          "params": {"progressToken": token, "progress": step, "total": 2}})
                send({"jsonrpc": "2.0", "id": mid, "result": text_result(rows_text())})
            elif name == "hold":
                held = mid
            elif name == "release":
                send({"jsonrpc": "2.0", "id": mid, "result": text_result(rows_text(30))})
                if held is not None:
                    send({"jsonrpc": "2.0", "id": held, "result": text_result(rows_text(50))})
                    held = None
            elif name == "batch":
                send([{"jsonrpc": "2.0", "method": "notifications/message",
                       "params": {"level": "info", "data": "batch follows"}},
                      {"jsonrpc": "2.0", "id": mid, "result": text_result(rows_text())}])
            elif name == "ping_me":
                pinging = mid
                send({"jsonrpc": "2.0", "id": "server-ping-1", "method": "ping"})
            elif name == "wait_cancel":
                waiting_cancel = mid
            elif name == "garbage":
                sys.stdout.write("this is not JSON {\n")
                sys.stdout.flush()
                send({"jsonrpc": "2.0", "id": mid, "result": text_result(rows_text())})
            elif name == "die":
                sys.exit(3)
            elif name == "hang":
                pass
            elif name == "spawn":
                child = subprocess.Popen(["sleep", "600"])
                send({"jsonrpc": "2.0", "id": mid, "result": text_result("pid %d" % child.pid)})
            elif name == "detach":
                shell = subprocess.run(
                    ["sh", "-c", "sleep 600 </dev/null >/dev/null 2>&1 & echo $!"],
                    start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                    check=True, text=True)
                send({"jsonrpc": "2.0", "id": mid,
                      "result": text_result("pid %s" % shell.stdout.strip())})
            elif name == "goodbye":
                signal.signal(signal.SIGTERM, goodbye)
                send({"jsonrpc": "2.0", "id": mid, "result": text_result("goodbye on SIGTERM")})
            elif name == "ignore_term":
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                send({"jsonrpc": "2.0", "id": mid, "result": text_result("SIGTERM ignored")})
            elif name == "linger":
                lingering = True
                send({"jsonrpc": "2.0", "id": mid, "result": text_result("lingering")})
            elif name == "file":
                arguments = params.get("arguments") or {}
                with open(arguments["path"], encoding="utf-8") as text:
                    content = text.read() * int(arguments.get("times", 1))
                send({"jsonrpc": "2.0", "id": mid, "result": text_result(content)})
            elif name == "exotic":
                sys.stdout.write(
                    '{ "result" :\t{"structuredContent": {"big": 1E400, "zero": -0.0,\t"one": 1.0,'
                    ' "name": "caf\\u00e9 \\/ x"}, "_meta" : {"n": -1E-400, "t": "\\u00e9"},'
                    ' "content": [ {"type": "text", "text" : %s } ] } , "id" : %s,'
                    ' "jsonrpc": "2.0" }\n' % (json.dumps(rows_text()), json.dumps(mid)))
                sys.stdout.flush()
            else:
                send({"jsonrpc": "2.0", "id": mid,
                      "error": {"code": -32602, "message": "unknown tool %s" % name}})
        elif mid is not None:
            send({"jsonrpc": "2.0", "id": mid, "result": {"echo": method, "params": params}})
    while lingering:
        time.sleep(600)


if __name__ == "__main__":
    main()
