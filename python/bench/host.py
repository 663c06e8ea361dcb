"""The Python half of `cargo bench -p parrot-compress-python --bench binding`: times
Host.compress on one payload file, in batches the benchmark asks for between batches of the
same call in Rust, so that the two sides alternate every few calls.

usage: host.py PROJECT FILE TOOL
Prints {"codec": …} once warmed up; then, for each line N read from stdin, times N calls with
the payload as a str, N with it as bytes, and N of CPython's own UTF-8 encoding of the str
(what the binding must do to read a str), interleaved, and prints their medians:
{"str_ns": …, "bytes_ns": …, "encode_ns": …}; ends at the end of stdin.
"""

import json
import sys
import time

from parrot_compress import Host


def main():
    project, path, tool = sys.argv[1], sys.argv[2], sys.argv[3]
    with open(path, encoding="utf-8") as file:
        text = file.read()
    raw = text.encode()
    host = Host(project=project)
    for _ in range(3):
        payload, meta = host.compress(tool, text)
        host.compress(tool, raw)
    print(json.dumps({"codec": meta["compression_codec"]}), flush=True)
    runs = {
        "str_ns": lambda: host.compress(tool, text),
        "bytes_ns": lambda: host.compress(tool, raw),
        "encode_ns": lambda: text.encode(),
    }
    for line in sys.stdin:
        times = {name: [] for name in runs}
        for _ in range(int(line)):
            for name, run in runs.items():
                start = time.perf_counter_ns()
                run()
                times[name].append(time.perf_counter_ns() - start)
        print(json.dumps({name: median(values) for name, values in times.items()}), flush=True)


def median(values):
    values.sort()
    return values[len(values) // 2]


if __name__ == "__main__":
    main()
