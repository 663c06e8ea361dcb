"""A Host made before a fork works in the forked processes: `multiprocessing` with the `fork`
start method, as gunicorn's `--preload` and celery's prefork pool use it. The host's token
worker is a thread, which `fork` does not copy, and a store's connections are the parent's."""

import json
import multiprocessing
import os
import time

import pytest

from parrot_compress import Host

# The host the pool's processes inherit: set by the test before the pool forks them.
HOST = None

# Each pool gets this long; a process that waits forever fails the test instead of hanging it.
TIMEOUT_SECONDS = 30


def rows_of(call):
    return [{"id": n, "name": f"label-{n}", "call": call, "color": "ff0000"} for n in range(40)]


def log_of(call):
    lines = [f"2026-12-07T10:00:{n % 60:02}Z INFO compiling crate_{n} v0.{n}.0" for n in range(300)]
    lines[150] = f"error[E0308]: mismatched types in call {call}"
    return "\n".join(lines) + "\n"


def compress_in_a_forked_process(call):
    """Runs in a pool process: a lossless result (rows) and a lossy one (a log), then the report
    (which waits for this process's token counts)."""
    rows = HOST.compress("dq_query", rows_of(call))
    log = HOST.compress("shell_build", log_of(call))
    calls = HOST.report()["total"]["calls"]
    return os.getpid(), (rows.payload, rows.meta), (log.payload, log.meta), calls


def without_time(meta):
    return {name: value for name, value in meta.items() if name != "compression_duration_ms"}


@pytest.mark.parametrize("used_in_parent", [False, True], ids=["unused", "used"])
@pytest.mark.parametrize("store", ["none", "project", "redis"])
def test_a_host_made_before_a_fork_compresses_in_the_forked_processes(
    request, project, store, used_in_parent
):
    global HOST
    if store == "redis":
        tee_store = request.getfixturevalue("redis_url")
    else:
        tee_store = {"none": False, "project": None}[store]
    HOST = Host(project=project, tee_store=tee_store)
    parent_calls = 0
    if used_in_parent:
        HOST.compress("dq_query", rows_of(-1))
        parent_calls = 1
    started = time.monotonic()
    with multiprocessing.get_context("fork").Pool(2) as pool:
        try:
            results = pool.map_async(compress_in_a_forked_process, range(4)).get(
                timeout=TIMEOUT_SECONDS
            )
        except multiprocessing.TimeoutError:
            pytest.fail(f"4 calls in 2 forked processes gave nothing in {TIMEOUT_SECONDS} s")
    elapsed = time.monotonic() - started
    assert {pid for pid, *_ in results} - {os.getpid()}, "the calls ran in other processes"
    for call, (_, rows, log, calls) in enumerate(results):
        # What the parent makes of the same results, after the pool.
        expected_rows = HOST.compress("dq_query", rows_of(call))
        assert rows[0] == expected_rows.payload
        assert without_time(rows[1]) == without_time(expected_rows.meta)
        assert rows[1]["_compressed"] is True
        assert rows[1]["tokens_after"] < rows[1]["tokens_before"]
        expected_log = HOST.compress("shell_build", log_of(call))
        assert log[0] == expected_log.payload
        assert without_time(log[1]) == without_time(expected_log.meta)
        if store == "none":
            assert log[1]["compression_teed"] is False
        else:
            # The forked process stored the original where the parent finds it.
            assert log[1]["compression_teed"] is True
            assert HOST.recover(log[1]["compression_tee_key"]) == log_of(call).encode()
        # Each process counts its own calls on top of what it inherited.
        assert calls >= parent_calls + 2
    print(f"\n{store}, {'used' if used_in_parent else 'unused'}: Pool(2).map over 4 calls "
          f"in {elapsed:.2f} s")


def chat_body(results):
    """An OpenAI Chat Completions request body holding `results` as tool results."""
    calls = [
        {"id": f"call_{n}", "type": "function", "function": {"name": "shell_build", "arguments": "{}"}}
        for n in range(len(results))
    ]
    messages = [
        {"role": "user", "content": "Build it"},
        {"role": "assistant", "content": None, "tool_calls": calls},
    ]
    messages += [
        {"role": "tool", "tool_call_id": f"call_{n}", "content": text}
        for n, text in enumerate(results)
    ]
    return json.dumps({"model": "gpt-5", "messages": messages})


def pending_in_a_forked_process(call):
    """Runs in a pool process: a call, then the tokens its copy of the report still waits for."""
    HOST.compress("dq_query", rows_of(call))
    return HOST.report()["total"]["tokens_pending"]


def test_a_fork_waits_for_the_parents_token_worker(project):
    """The parent's token worker has a backlog when the pool forks (a request rewrite returns
    before its results are counted: about 40 ms of counting here). The fork waits for it
    (`os.register_at_fork`): each child's copy of the report holds no count that no thread of
    its own will ever deliver, and the worker held no lock at the fork."""
    global HOST
    HOST = Host(project=project, tee_store=False)
    HOST.compress_request(chat_body([log_of(n) * 60 for n in range(8)]), "openai-chat")
    with multiprocessing.get_context("fork").Pool(2) as pool:
        try:
            pending = pool.map_async(pending_in_a_forked_process, range(4)).get(
                timeout=TIMEOUT_SECONDS
            )
        except multiprocessing.TimeoutError:
            pytest.fail(f"4 calls in 2 forked processes gave nothing in {TIMEOUT_SECONDS} s")
    assert pending == [0, 0, 0, 0]
    assert HOST.report()["total"]["calls"] == 8


def recover_in_a_forked_process(call):
    """Runs in a pool process: recovers every stored original a number of times, and returns
    those that did not come back exact."""
    wrong = []
    for _ in range(25):
        for n, key in enumerate(KEYS):
            try:
                if HOST.recover(key) != log_of(n).encode():
                    wrong.append((call, n, "other bytes"))
            except Exception as err:  # noqa: BLE001 - every failure is reported
                wrong.append((call, n, repr(err)))
    return wrong


# The keys of the originals the parent stored before the pool forked.
KEYS = []


def test_forked_processes_do_not_share_the_parents_redis_connections(project, redis_url):
    """The parent's idle connection is copied into every child: two processes sending requests
    on one socket read each other's answers. Each child opens its own."""
    global HOST
    HOST = Host(project=project, tee_store=redis_url)
    KEYS[:] = [HOST.compress("shell_build", log_of(n)).meta["compression_tee_key"] for n in range(4)]
    with multiprocessing.get_context("fork").Pool(4) as pool:
        try:
            wrong = pool.map_async(recover_in_a_forked_process, range(8)).get(
                timeout=TIMEOUT_SECONDS
            )
        except multiprocessing.TimeoutError:
            pytest.fail(f"8 recoveries in 4 forked processes gave nothing in {TIMEOUT_SECONDS} s")
    assert [w for ws in wrong for w in ws] == []
    # The parent's own connection still answers.
    assert HOST.recover(KEYS[0]) == log_of(0).encode()
