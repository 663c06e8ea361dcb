"""Drives one request through an official SDK (PyPI `anthropic` or `openai`) and prints what
the SDK returned as one JSON line.

stdin: {"sdk": "anthropic" | "openai", "base_url": URL, "api": "messages" | "chat" |
"responses", "kwargs": {...}, "stream": bool}
stdout: {"result": ...} (the SDK's object, model_dump), or {"events": [...], "times": [...]}
for a stream (each event and the seconds since the request when it arrived), or
{"error": {"status": N, "message": ..., "body": ...}} for an API error, or
{"dropped": {"type": ..., "message": ..., "events": [...]}} for a stream that broke off (the
connection error's class and message, and the events that came before).
"""

import json
import sys
import time

spec = json.load(sys.stdin)
kwargs = spec["kwargs"]
started = time.monotonic()

if spec["sdk"] == "anthropic":
    import anthropic

    client = anthropic.Anthropic(
        api_key="sk-ant-test-key", base_url=spec["base_url"], max_retries=0, timeout=30
    )
    errors = (anthropic.APIStatusError,)
    create = client.messages.create
else:
    import openai

    client = openai.OpenAI(
        api_key="sk-test-key", base_url=spec["base_url"] + "/v1", max_retries=0, timeout=30
    )
    errors = (openai.APIStatusError,)
    create = (
        client.chat.completions.create if spec["api"] == "chat" else client.responses.create
    )

events = []
try:
    if spec.get("stream"):
        times = []
        for event in create(stream=True, **kwargs):
            times.append(time.monotonic() - started)
            events.append(event.model_dump(mode="json"))
        out = {"events": events, "times": times}
    else:
        out = {"result": create(**kwargs).model_dump(mode="json")}
except errors as err:
    out = {
        "error": {
            "status": err.status_code,
            "message": str(err),
            "body": err.body,
        }
    }
except Exception as err:  # noqa: BLE001 - a broken stream surfaces as the HTTP library's error
    if not spec.get("stream"):
        raise
    out = {"dropped": {"type": type(err).__name__, "message": str(err), "events": events}}
print(json.dumps(out))
