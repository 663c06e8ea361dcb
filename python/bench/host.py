"""Times Host.compress from Python on one payload file: the Python half of
`cargo bench -p parrot-compress-python --bench binding`, which times the same call in Rust and
runs this between its own rounds.

usage: host.py PROJECT FILE TOOL ITERATIONS  ->  one JSON line {"median_ns": …, "bytes": …}
"""

import json
import sys
import time

from parrot_compress import Host


def main():
    project, path, tool, iterations = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    with open(path, encoding="utf-8") as file:
        text = file.read()
    host = Host(project=project)
    for _ in range(3):
        host.compress(tool, text)
    times = []
    for _ in range(iterations):
        start = time.perf_counter_ns()
        payload, meta = host.compress(tool, text)
        times.append(time.perf_counter_ns() - start)
    times.sort()
    print(json.dumps({"median_ns": times[len(times) // 2], "bytes": len(text.encode()),
                      "codec": meta["compression_codec"]}))


if __name__ == "__main__":
    main()
