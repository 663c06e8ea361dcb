"""parrot_codec.columnarize against the pure-Python path it stands in for, on ~1 MB of rows.

The pure-Python path is what ai-parrot's columnar codec runs for a JSON payload when
parrot_codec is not installed: decode the bytes (datamodel's decoder, orjson), columnarize
(``ColumnarCodec._columnarize``), encode the result (datamodel's encoder, orjson). Both sides
take the same bytes and give the same bytes; the script checks that once, then times each
several times and prints one JSON line with the medians:

    python python/bench/columnarize.py [--runs N] [--bytes N]
"""

import argparse
import json
import os
import random
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

import parrot_codec  # noqa: E402
from aiparrot import json_encoder, pure_bytes  # noqa: E402

WORDS = ("order shipped delayed refund customer invoice warehouse priority express standard "
         "pending review approved carrier tracking batch pallet return note").split()


def row(rng, index):
    """A query-result row of about 500 bytes: 12 columns, two constant, one always null."""
    return {
        "id": index,
        "order_ref": f"ORD-{rng.randrange(10**9):09d}",
        "customer": f"{rng.choice(WORDS).title()} {rng.choice(WORDS).title()}",
        "email": f"user{rng.randrange(10**6)}@example.com",
        "created_at": f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T"
                      f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00Z",
        "amount": round(rng.uniform(1, 5000), 2),
        "quantity": rng.randint(1, 40),
        "paid": rng.random() < 0.8,
        "currency": "EUR",
        "region": "eu-west-1",
        "deleted_at": None,
        "notes": " ".join(rng.choice(WORDS) for _ in range(rng.randint(30, 40))),
    }


def payload(size):
    rng = random.Random(0)
    rows, total = [], 2
    while total < size:
        rows.append(row(rng, len(rows)))
        total += len(json_encoder(rows[-1])) + 1
    return json_encoder(rows).encode(), len(rows)


def median_ms(function, argument, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        function(argument)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--bytes", type=int, default=1_000_000)
    args = parser.parse_args()
    text, rows = payload(args.bytes)
    if parrot_codec.columnarize(text) != pure_bytes(text):
        sys.exit("parrot_codec.columnarize and the pure-Python path disagree")
    rust_ms = median_ms(parrot_codec.columnarize, text, args.runs)
    python_ms = median_ms(pure_bytes, text, args.runs)
    print(json.dumps({
        "payload_bytes": len(text),
        "rows": rows,
        "rust_ms": round(rust_ms, 3),
        "python_ms": round(python_ms, 3),
        "speedup": round(python_ms / rust_ms, 2),
    }))


if __name__ == "__main__":
    main()
