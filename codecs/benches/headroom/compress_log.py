"""Times Headroom's `compress()` on one log passed as a tool result, for `benches/log.rs`.

    python compress_log.py LOG RUNS [O200K_GZ]

LOG is read as UTF-8 and sent as the content of ONE tool message, after the user's request and
the assistant's tool call that produced it (the OpenAI chat shape Headroom's docs use), so that
Headroom's router picks whatever it picks for a log. `compress()` runs with its defaults
(model `claude-sonnet-4-5-20250929`, which Headroom prices with tiktoken's `o200k_base`).

Offline: the caller sets HEADROOM_OFFLINE=1 (Headroom's own switch: no telemetry beacon, update
check, model or vocabulary download), HF_HUB_OFFLINE=1, and HEADROOM_WORKSPACE_DIR to a fresh
folder (Headroom keeps its retrieval store, `ccr_store.db`, there). tiktoken's `o200k_base`
vocabulary, which tiktoken would fetch over the network, is put into TIKTOKEN_CACHE_DIR from
O200K_GZ (the copy inside the `bpe-openai` crate, checked against the SHA-256 tiktoken pins);
without it Headroom counts tokens with its character estimate, and the output says so.

Timing: one warm-up call first, on a different, smaller log (the first 4,000 lines of LOG in
reverse order: long enough to take the same path, as Headroom's router gives text over about
50,000 tokens to its log compressor rather than to its ML compressor), so that Headroom's lazy
imports and one-off set-up are not counted; then RUNS calls, each timed around `compress()`
alone, each after every cache Headroom keeps is cleared (`clear_caches`), each required to give
the same output. Prints one JSON object: the median and each run's seconds, sizes, what
Headroom reports (tokens, transforms, the tool message's decision), what ran (`what_ran`) and
the Headroom version.
"""

from __future__ import annotations

import gc
import gzip
import hashlib
import json
import os
import statistics
import sys
import time

O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"


def seed_tiktoken(gz_path: str) -> None:
    """Writes `o200k_base` where tiktoken looks before it downloads: TIKTOKEN_CACHE_DIR, under
    the SHA-1 of the vocabulary's URL."""
    cache = os.environ["TIKTOKEN_CACHE_DIR"]
    os.makedirs(cache, exist_ok=True)
    path = os.path.join(cache, hashlib.sha1(O200K_URL.encode()).hexdigest())
    with gzip.open(gz_path, "rb") as f:
        data = f.read()
    got = hashlib.sha256(data).hexdigest()
    if got != O200K_SHA256:
        sys.exit(f"{gz_path}: SHA-256 {got}, but tiktoken expects {O200K_SHA256} for o200k_base")
    with open(path, "wb") as f:
        f.write(data)


def messages(log: str) -> list[dict]:
    """The log as one tool result: the request, the call that ran the build, its output."""
    return [
        {"role": "user", "content": "The build failed. What went wrong?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {
                        "name": "bash",
                        "arguments": json.dumps({"command": "cargo build && cargo test"}),
                    },
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": log},
    ]


def clear_caches() -> list[str]:
    """Empties every cache of Headroom's that a second `compress()` of the same log could use;
    returns what was cleared. The vocabulary (an `lru_cache` of loaded encodings) and the
    compressors themselves are kept: they are loading, not results."""
    from headroom.tokenizers.base import TokenCountCache
    from headroom.transforms.content_router import CompressionCache, ContentRouter

    cleared = []
    # The router's result cache (compressed text and the skip set, by content digest), its
    # in-request memos, and the token counts memoised by text: found on every live instance.
    for obj in gc.get_objects():
        if isinstance(obj, CompressionCache):
            obj.clear()
            cleared.append("router result cache")
        elif isinstance(obj, TokenCountCache):
            obj.clear()
            cleared.append("token count memo")
        elif isinstance(obj, ContentRouter):
            obj._lossless_first_memo.clear()
            obj._lossless_provider_memo.clear()
            cleared.append("router memos")
    # Process-wide singletons, where their module is loaded and they exist: the retrieval (CCR)
    # store that keeps each original, the tool-output learning (TOIN), the compression feedback
    # and the compacted thinking blocks, all emptied in place.
    for name, module, attribute in [
        ("retrieval store", "headroom.cache.compression_store", "_compression_store"),
        ("TOIN patterns", "headroom.telemetry.toin", "_toin_instance"),
        ("compression feedback", "headroom.cache.compression_feedback", "_compression_feedback"),
        ("thinking compaction cache", "headroom.transforms.thinking_compactor", "_COMPACT_CACHE"),
    ]:
        store = getattr(sys.modules.get(module), attribute, None)
        if store is not None:
            store.clear()
            cleared.append(name)
    return sorted(set(cleared))


def what_ran(msgs: list[dict]) -> dict:
    """One more `compress()` of the same messages, caches cleared and not timed, with the
    router's stages watched: the lossless fold, the prompt-conditioned relevance split and
    Headroom's log compressor (each wrapped for this call only, then put back)."""
    from headroom import compress
    from headroom.transforms.content_router import ContentRouter
    from headroom.transforms.log_compressor import LogCompressor

    seen: dict = {"log_compressor_calls": []}
    originals = {}
    # The watched stages running now, outermost first: a call records those it ran inside.
    running: list[str] = []

    def watch(cls, name, record):
        original = getattr(cls, name)
        originals[(cls, name)] = original

        def wrapper(self, content, *args, **kwargs):
            within = list(running)
            running.append(name)
            start = time.perf_counter()
            try:
                result = original(self, content, *args, **kwargs)
            finally:
                running.pop()
            record(self, content, result, time.perf_counter() - start, within)
            return result

        setattr(cls, name, wrapper)

    def fold(_router, content, result, seconds, _within):
        # The first call; the router asks again for the same block and gets its memo.
        seen.setdefault(
            "lossless_fold",
            {"label": result[1], "chars": [len(content), len(result[0])], "seconds": seconds},
        )

    def split(router, _content, result, seconds, _within):
        scorer = router._relevance_scorer
        embeddings = getattr(scorer, "has_embedding_support", lambda: False)()
        seen["relevance_split"] = {
            "adopted": result is not None,
            "scorer": f"{type(scorer).__name__}, {'with' if embeddings else 'no'} embeddings",
            "seconds": seconds,
        }

    def log_compressor(compressor, content, result, seconds, within):
        seen["log_compressor"] = (
            f"{type(compressor).__module__}.{type(compressor).__qualname__} (native "
            f"{type(compressor._rust).__module__}.{type(compressor._rust).__qualname__})"
        )
        seen["log_compressor_calls"].append(
            {
                "chars": [len(content), len(result.compressed)],
                "lines": [result.original_line_count, result.compressed_line_count],
                "format_detected": result.format_detected.value,
                "stats": result.stats,
                "seconds": seconds,
                "within_relevance_split": "_relevance_split_compress" in within,
            }
        )

    watch(ContentRouter, "_lossless_first", fold)
    watch(ContentRouter, "_relevance_split_compress", split)
    watch(LogCompressor, "compress", log_compressor)
    try:
        clear_caches()
        result = compress(msgs, diagnostics=True)
    finally:
        for (cls, name), original in originals.items():
            setattr(cls, name, original)
    tool = [d for d in (result.diagnostics or []) if d.role == "tool"]
    seen["transforms_applied"] = result.transforms_applied
    seen["tool_message_action"] = tool[0].action if tool else None
    return seen


def main() -> None:
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: compress_log.py LOG RUNS [O200K_GZ]")
    log_path, runs = sys.argv[1], int(sys.argv[2])
    if len(sys.argv) == 4:
        seed_tiktoken(sys.argv[3])
    with open(log_path, encoding="utf-8", newline="") as f:
        log = f.read()

    import headroom
    from headroom import compress
    from headroom.compress import _get_pipeline

    warm_up = "".join(reversed(log.splitlines(keepends=True)[:4000]))
    warmed = compress(messages(warm_up))
    times = []
    outputs = set()
    for _ in range(runs):
        cleared = clear_caches()
        gc.collect()
        msgs = messages(log)
        start = time.perf_counter()
        result = compress(msgs)
        times.append(time.perf_counter() - start)
        outputs.add(result.messages[-1]["content"])

    out = result.messages[-1]["content"]
    if out == log:
        sys.exit(
            f"Headroom returned the log unchanged (transforms: {result.transforms_applied})"
        )
    if len(outputs) > 1:
        sys.exit(f"Headroom's {runs} runs on the same log gave {len(outputs)} different outputs")
    counter = _get_pipeline()._get_tokenizer("claude-sonnet-4-5-20250929")
    report = {
        "headroom_version": headroom.__version__,
        "median_s": statistics.median(times),
        "runs_s": times,
        "input_chars": len(log),
        "input_bytes": len(log.encode("utf-8")),
        "output_chars": len(out),
        "output_bytes": len(out.encode("utf-8")),
        "tokens_before": result.tokens_before,
        "tokens_after": result.tokens_after,
        "token_counter": type(getattr(counter, "_counter", counter)).__name__,
        "caches_cleared": cleared,
        "warm_up": {"chars": len(warm_up), "transforms_applied": warmed.transforms_applied},
    }
    report.update(what_ran(messages(log)))
    print(json.dumps(report))


if __name__ == "__main__":
    main()
