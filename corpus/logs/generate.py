#!/usr/bin/env python3
"""Generates the log corpus of the `log` codec's tests: build, test and application logs of
the tool families the codec must read, with failures planted at known lines.

Run from anywhere: `python3 corpus/logs/generate.py`. Standard library only; every file comes
from its own seeded random stream, so the output is the same on every run and every machine
(the committed files are this script's output; rerun it and `git diff` shows nothing).

Writes, next to this script:
- `<family>-<nn>.log`: one log each (200 to 5,000 lines, `\\n`-terminated);
- `failures.json`: per file, the 1-based line numbers of every planted failure line, the
  ground truth the integration test checks the codec against (never the codec's own
  classification). The real captures under `real/` are listed there too; their entries are
  written by hand and kept as they are when this script rewrites the file.

A failure line is a line that says something failed or why: an error or panic message, each
line of a compiler diagnostic (its location, gutter, source and `^^^` lines), each line of a
traceback or stack trace, a failing test's report, a failing run's summary. Blank lines inside
a block are not listed (a blank line cannot be told apart from any other). Noise never says
fail, error, panic, fatal or exception, except in passing test names (`test_error_path ... ok`),
which a codec may keep but the ground truth does not list.

Most failure lines are unique within their file (timestamps, ids, numbers); short structural
ones (a diagnostic's ` |` gutter, a lone `^`, `FAIL`) may repeat, so a test should count them
as a multiset.

Placements, one per file, so every kind is covered several times: `start` (the first lines of
the file), `middle`, `end` (the last lines, or just before the summary), `several` (three to six
blocks spread out), `template` (one failure line of the same shape inside a run of hundreds of
otherwise-identical lines, e.g. one ERROR among 500 INFO lines).
"""

import json
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 20261129
MAX_TOTAL_BYTES = 3_000_000

ESC = "\x1b"
GREEN = ESC + "[32m"
RED = ESC + "[31m"
BOLD_RED = ESC + "[1m" + ESC + "[31m"
BOLD_GREEN = ESC + "[1m" + ESC + "[32m"
YELLOW = ESC + "[33m"
CYAN = ESC + "[36m"
DIM = ESC + "[2m"
RESET = ESC + "[0m"
CLEAR_LINE = ESC + "[2K"

CRATES = ["serde", "syn", "quote", "proc-macro2", "tokio", "regex", "memchr", "libc", "anyhow",
          "thiserror", "bytes", "hashbrown", "indexmap", "itoa", "ryu", "once_cell", "smallvec",
          "parking_lot", "mio", "futures-core", "tracing", "clap", "rand", "log", "cfg-if"]
MODULES = ["parser", "lexer", "pipeline", "router", "store", "codec", "tee", "report", "config",
           "manifest", "registry", "budget", "tokens", "cursor", "writer", "reader"]
PY_MODULES = ["api", "models", "views", "serializers", "utils", "auth", "billing", "search",
              "storage", "tasks", "cache", "schema", "client", "events"]
GO_PKGS = ["internal/store", "internal/router", "pkg/codec", "pkg/api", "cmd/server",
           "internal/auth", "pkg/cache", "internal/queue", "pkg/metrics", "internal/config"]
JAVA_PKGS = ["com.acme.billing", "com.acme.orders", "com.acme.auth", "com.acme.search",
             "org.example.store", "org.example.api"]
JS_DIRS = ["src/components", "src/hooks", "src/lib", "src/api", "src/utils", "src/store"]
SERVICES = ["api-gateway", "orders", "billing", "auth", "search", "inventory", "notifier"]
HOSTS = ["ip-10-0-3-17", "ip-10-0-7-201", "ip-10-0-1-88", "web-4", "worker-2"]


class Log:
    """Lines of one file and which of them are planted failure lines."""

    def __init__(self, rng):
        self.rng = rng
        self.lines = []  # (text, is_failure)
        self.t = 1_796_000_000.0 + rng.randrange(0, 5_000_000)

    def tick(self, lo=0.001, hi=1.5):
        self.t += self.rng.uniform(lo, hi)
        return self.t

    def ts(self):
        """An ISO-8601 timestamp with milliseconds, advancing."""
        t = self.tick()
        whole = int(t)
        ms = int((t - whole) * 1000)
        days, rem = divmod(whole, 86400)
        hh, rem = divmod(rem, 3600)
        mm, ss = divmod(rem, 60)
        y, mo, d = civil(days)
        return f"{y:04d}-{mo:02d}-{d:02d}T{hh:02d}:{mm:02d}:{ss:02d}.{ms:03d}Z"

    def hms(self):
        t = self.tick()
        whole = int(t) % 86400
        return f"{whole // 3600:02d}:{whole % 3600 // 60:02d}:{whole % 60:02d}"


def civil(days):
    """Days since 1970-01-01 to (year, month, day) (Howard Hinnant's algorithm)."""
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return (y + (m <= 2), m, d)


def hexid(rng, n=16):
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def uuid(rng):
    h = hexid(rng, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


def version(rng):
    return f"{rng.randrange(0, 4)}.{rng.randrange(0, 30)}.{rng.randrange(0, 20)}"


def dur(rng, lo=0.001, hi=3.0):
    return f"{rng.uniform(lo, hi):.2f}s"


def ms(rng, lo=1, hi=900):
    return f"{rng.randrange(lo, hi)}ms"


def progress(rng, label, width=30, steps=None):
    """A carriage-return progress redraw: every state padded to one width, so the final
    state is both the last segment and what a terminal shows."""
    steps = steps or rng.randrange(4, 12)
    states = []
    for k in range(1, steps + 1):
        filled = width * k // steps
        bar = "=" * max(filled - 1, 0) + (">" if filled < width else "=")
        states.append(f"{label} [{bar:<{width}}] {100 * k // steps:>3}%")
    return "\r".join(states)


# ---------------------------------------------------------------------------------------------
# Families. Each has: noise(log, i) -> one noise line; blocks(log, k) -> a failure block as
# [(text, is_failure)]; a run template (noise shape, failure shape) for the `template`
# placement; header(log) and footer(log, failed) -> [(text, is_failure)].
# ---------------------------------------------------------------------------------------------


class Cargo:
    name = "cargo-build"

    def header(self, log):
        return [("$ cargo build --workspace --all-targets", False),
                (f"{DIM}    Updating{RESET} crates.io index", False)]

    def noise(self, log, i):
        r = log.rng
        kind = r.random()
        if kind < 0.55:
            return f"{BOLD_GREEN}   Compiling{RESET} {r.choice(CRATES)} v{version(r)}"
        if kind < 0.7:
            return f"{BOLD_GREEN} Downloaded{RESET} {r.choice(CRATES)} v{version(r)}"
        if kind < 0.8:
            return progress(r, f"    Building", 27)
        if kind < 0.9:
            return (f"   Fresh {r.choice(CRATES)} v{version(r)} "
                    f"(/home/ci/.cargo/registry/src/index.crates.io-{hexid(r, 16)})")
        return (f"   Checking {r.choice(MODULES)}-{r.randrange(1, 40)} v{version(r)} "
                f"(/work/ws/{r.choice(MODULES)})")

    def blocks(self, log, k):
        r = log.rng
        mod = r.choice(MODULES)
        line = r.randrange(10, 900)
        col = r.randrange(5, 40)
        var = f"x{r.randrange(100, 999)}"
        kinds = [
            ("E0308", "mismatched types", f"let {var}: u32 = config.name_{k}();",
             f"expected `u32`, found `String`"),
            ("E0425", f"cannot find value `{var}` in this scope", f"total += {var} * 2;",
             "not found in this scope"),
            ("E0599", f"no method named `frobnicate_{k}` found for struct `Pipeline`",
             f"self.pipeline.frobnicate_{k}(&{var});", "method not found in `Pipeline`"),
        ]
        code, msg, src, label = r.choice(kinds)
        gutter = " " * len(str(line))
        return [
            (f"{BOLD_RED}error[{code}]{RESET}{ESC}[1m: {msg}{RESET}", True),
            (f"{gutter}--> src/{mod}.rs:{line}:{col}", True),
            (f"{gutter} |", True),
            (f"{line} |     {src}", True),
            (f"{gutter} |     {' ' * 4}{'^' * r.randrange(3, 12)} {label}", True),
            ("", False),
        ]

    def run(self, log):
        r = log.rng
        crate = r.choice(CRATES)

        def ok(i):
            return f"   Compiling {crate}-shard-{i} v0.{i % 9}.{i % 13} (/work/ws/shards/{i})"

        def bad(i):
            return f"   Compiling {crate}-shard-{i} v0.{i % 9}.{i % 13} (/work/ws/shards/{i}) failed: build script exited with status 101"
        return ok, bad

    def footer(self, log, failed):
        if failed:
            n = log.rng.randrange(1, 5)
            return [(f"{BOLD_RED}error{RESET}: could not compile `ws-{log.rng.choice(MODULES)}` "
                     f"(lib) due to {n} previous error{'s' if n > 1 else ''}", True)]
        return [(f"{BOLD_GREEN}    Finished{RESET} `dev` profile [unoptimized + debuginfo] "
                 f"target(s) in {dur(log.rng, 20, 300)}", False)]


class CargoTest(Cargo):
    name = "cargo-test"

    def header(self, log):
        r = log.rng
        return [("$ cargo test --workspace", False),
                (f"   Compiling ws-{r.choice(MODULES)} v{version(r)} (/work/ws)", False),
                (f"    Finished `test` profile [unoptimized + debuginfo] target(s) in "
                 f"{dur(r, 5, 90)}", False),
                (f"     Running unittests src/lib.rs (target/debug/deps/ws-{hexid(r, 16)})", False),
                ("", False),
                (f"running {r.randrange(200, 5000)} tests", False)]

    def noise(self, log, i):
        r = log.rng
        kind = r.random()
        name = f"{r.choice(MODULES)}::tests::{r.choice(['parses', 'rejects', 'keeps', 'folds', 'handles_error_path', 'round_trips', 'counts'])}_{i}"
        if kind < 0.85:
            return f"test {name} ... {GREEN}ok{RESET}"
        if kind < 0.93:
            return f"test {name} ... {YELLOW}ignored{RESET}"
        return f"test {name} has been running for over 60 seconds"

    def blocks(self, log, k):
        r = log.rng
        mod = r.choice(MODULES)
        name = f"{mod}::tests::case_{k}_{r.randrange(1000, 9999)}"
        left, right = r.randrange(0, 500), r.randrange(500, 999)
        return [
            (f"test {name} ... {RED}FAILED{RESET}", True),
            ("", False),
            (f"---- {name} stdout ----", True),
            (f"thread '{name}' panicked at src/{mod}.rs:{r.randrange(10, 900)}:{r.randrange(5, 40)}:", True),
            (f"assertion `left == right` failed: counts differ for shard {k}", True),
            (f"  left: {left}", True),
            (f" right: {right}", True),
            ("note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace", True),
            ("", False),
        ]

    def run(self, log):
        r = log.rng
        mod = r.choice(MODULES)

        def ok(i):
            return f"test {mod}::tests::property_case_{i:04d} ... ok"

        def bad(i):
            return f"test {mod}::tests::property_case_{i:04d} ... FAILED"
        return ok, bad

    def footer(self, log, failed):
        r = log.rng
        passed = r.randrange(200, 5000)
        if failed:
            return [("", False), ("failures:", True),
                    (f"    {r.choice(MODULES)}::tests::summary_{r.randrange(1000, 9999)}", True),
                    ("", False),
                    (f"test result: {RED}FAILED{RESET}. {passed} passed; {r.randrange(1, 6)} failed; "
                     f"{r.randrange(0, 9)} ignored; 0 measured; 0 filtered out; finished in "
                     f"{dur(r, 1, 90)}", True),
                    ("", False),
                    ("error: test failed, to rerun pass `--lib`", True)]
        return [("", False), (f"test result: {GREEN}ok{RESET}. {passed} passed; 0 failed; "
                              f"0 ignored; 0 measured; 0 filtered out; finished in {dur(r, 1, 90)}",
                              False)]


class Pytest:
    name = "pytest"

    def header(self, log):
        r = log.rng
        return [(f"{ESC}[1m============================= test session starts =============================={RESET}", False),
                (f"platform linux -- Python 3.12.{r.randrange(0, 9)}, pytest-8.3.{r.randrange(0, 5)}, pluggy-1.5.0", False),
                ("rootdir: /home/ci/app", False),
                ("configfile: pyproject.toml", False),
                (f"plugins: cov-5.0.0, xdist-3.6.{r.randrange(0, 3)}, anyio-4.4.0", False),
                (f"collected {r.randrange(300, 5000)} items", False),
                ("", False)]

    def noise(self, log, i):
        r = log.rng
        kind = r.random()
        f = f"tests/{r.choice(PY_MODULES)}/test_{r.choice(PY_MODULES)}.py"
        if kind < 0.6:
            dots = "." * r.randrange(5, 60)
            return f"{f} {GREEN}{dots}{RESET}{' ' * max(1, 70 - len(f) - len(dots))}{GREEN}[{r.randrange(0, 100):>3}%]{RESET}"
        if kind < 0.9:
            return f"{f}::test_{r.choice(['create', 'update', 'delete', 'list', 'error_response', 'retry'])}_{i} {GREEN}PASSED{RESET}{' ' * 10}[{r.randrange(0, 100):>3}%]"
        return f"{f}::test_slow_{i} {YELLOW}SKIPPED{RESET} (requires network) [{r.randrange(0, 100):>3}%]"

    def blocks(self, log, k):
        r = log.rng
        mod = r.choice(PY_MODULES)
        test = f"test_{mod}_{k}_{r.randrange(100, 999)}"
        a, b = r.randrange(0, 99), r.randrange(100, 999)
        if r.random() < 0.5:
            return [
                (f"{'_' * 25} {test} {'_' * 25}", True),
                ("", False),
                (f"    def {test}():", True),
                (f"        result = {mod}.compute(seed={a})", True),
                (f">       assert result.total == {b}", True),
                (f"E       AssertionError: assert {a} == {b}", True),
                (f"E        +  where {a} = Result(total={a}).total", True),
                ("", False),
                (f"tests/test_{mod}.py:{r.randrange(10, 400)}: AssertionError", True),
            ]
        return [
            ("Traceback (most recent call last):", True),
            (f'  File "/home/ci/app/{mod}/handlers.py", line {r.randrange(10, 500)}, in handle_{k}', True),
            (f"    payload = decode(request.body, strict={a % 2 == 0})", True),
            (f'  File "/home/ci/app/{mod}/codec.py", line {r.randrange(10, 500)}, in decode', True),
            (f"    return json.loads(raw)[\"items_{k}\"]", True),
            (f"KeyError: 'items_{k}_{b}'", True),
        ]

    def run(self, log):
        r = log.rng
        mod = r.choice(PY_MODULES)

        def ok(i):
            return f"tests/test_{mod}.py::test_param[case-{i:04d}] PASSED"

        def bad(i):
            return f"tests/test_{mod}.py::test_param[case-{i:04d}] FAILED"
        return ok, bad

    def footer(self, log, failed):
        r = log.rng
        p = r.randrange(300, 5000)
        if failed:
            n = r.randrange(1, 6)
            return [(f"{'=' * 30} short test summary info {'=' * 30}", False),
                    (f"FAILED tests/test_{r.choice(PY_MODULES)}.py::test_summary_{r.randrange(100, 999)} - AssertionError: assert {r.randrange(0, 9)} == {r.randrange(10, 99)}", True),
                    (f"{RED}{'=' * 20} {n} failed, {p} passed, {r.randrange(0, 9)} skipped in {dur(r, 5, 300)} {'=' * 20}{RESET}", True)]
        return [(f"{GREEN}{'=' * 25} {p} passed in {dur(r, 5, 300)} {'=' * 25}{RESET}", False)]


class PythonApp(Pytest):
    name = "python-app"

    def header(self, log):
        return [(f"{log.ts()} INFO  [main] starting worker pool (python 3.12.4, 8 workers)", False)]

    def noise(self, log, i):
        r = log.rng
        kind = r.random()
        if kind < 0.6:
            return (f"{log.ts()} INFO  [{r.choice(PY_MODULES)}] GET /api/v2/{r.choice(PY_MODULES)}/{uuid(r)} "
                    f"200 {ms(r)}")
        if kind < 0.85:
            return f"{log.ts()} DEBUG [celery.worker] task {uuid(r)} received args=({r.randrange(1, 99999)},)"
        return f"{log.ts()} WARNING [cache] slow lookup key=user:{r.randrange(1, 99999)} took {ms(r, 200, 2000)}"

    def run(self, log):
        r = log.rng
        mod = r.choice(PY_MODULES)

        def ok(i):
            return f"{log.ts()} INFO  [{mod}] job {i} state=SUCCESS in {ms(r)}"

        def bad(i):
            return f"{log.ts()} ERROR [{mod}] job {i} state=FAILURE in {ms(r)}"
        return ok, bad

    def footer(self, log, failed):
        if failed:
            return [(f"{log.ts()} CRITICAL [main] worker pool exiting with status 1", True)]
        return [(f"{log.ts()} INFO  [main] worker pool drained, exiting", False)]


class GoTest:
    name = "go-test"

    def header(self, log):
        return [("$ go test -v ./...", False)]

    def noise(self, log, i):
        r = log.rng
        kind = r.random()
        name = f"Test{r.choice(['Parse', 'Route', 'Store', 'Encode', 'Decode', 'ErrorPaths'])}{i}"
        if kind < 0.4:
            return f"=== RUN   {name}"
        if kind < 0.8:
            return f"--- PASS: {name} ({r.uniform(0, 2):.2f}s)"
        if kind < 0.9:
            return f"    {name.lower()}_test.go:{r.randrange(10, 300)}: seeded with {r.randrange(1, 1 << 31)}"
        return f"ok  \tgithub.com/acme/svc/{r.choice(GO_PKGS)}\t{dur(r, 0.01, 9)}"

    def blocks(self, log, k):
        r = log.rng
        pkg = r.choice(GO_PKGS)
        if r.random() < 0.55:
            name = f"TestHandles{k}Case{r.randrange(10, 99)}"
            return [
                (f"--- FAIL: {name} ({r.uniform(0, 2):.2f}s)", True),
                (f"    {pkg.split('/')[-1]}_test.go:{r.randrange(10, 300)}: got {r.randrange(0, 99)}, want {r.randrange(100, 999)}", True),
                (f"FAIL\tgithub.com/acme/svc/{pkg}\t{dur(r, 0.01, 9)}", True),
            ]
        return [
            (f"panic: runtime error: index out of range [{r.randrange(5, 99)}] with length {r.randrange(0, 5)}", True),
            ("", False),
            (f"goroutine {r.randrange(1, 400)} [running]:", True),
            (f"github.com/acme/svc/{pkg}.(*Store).Get(0xc000{hexid(r, 6)}, {{0xc000{hexid(r, 6)}, 0x{r.randrange(1, 64):x}}})", True),
            (f"\t/home/ci/svc/{pkg}/store.go:{r.randrange(10, 600)} +0x{hexid(r, 3)}", True),
            (f"github.com/acme/svc/{pkg}.TestGet{k}(0xc000{hexid(r, 6)})", True),
            (f"\t/home/ci/svc/{pkg}/store_test.go:{r.randrange(10, 600)} +0x{hexid(r, 2)}", True),
            (f"exit status 2", True),
            (f"FAIL\tgithub.com/acme/svc/{pkg}\t{dur(r, 0.01, 9)}", True),
        ]

    def run(self, log):
        r = log.rng

        def ok(i):
            return f"--- PASS: TestTable/row_{i:04d} (0.00s)"

        def bad(i):
            return f"--- FAIL: TestTable/row_{i:04d} (0.00s)"
        return ok, bad

    def footer(self, log, failed):
        if failed:
            return [("FAIL", True)]
        return [(f"ok  \tgithub.com/acme/svc\t{dur(log.rng, 1, 30)}", False)]


class GoBuild(GoTest):
    name = "go-build"

    def header(self, log):
        return [("$ go build -v ./...", False)]

    def noise(self, log, i):
        r = log.rng
        kind = r.random()
        if kind < 0.5:
            return f"github.com/acme/svc/{r.choice(GO_PKGS)}/v{r.randrange(1, 5)}"
        if kind < 0.8:
            return f"go: downloading github.com/{r.choice(['google', 'uber-go', 'spf13', 'golang'])}/{r.choice(['zap', 'cobra', 'uuid', 'protobuf', 'sync'])} v{version(r)}"
        return f"go: finding module for package github.com/acme/{r.choice(GO_PKGS)}/{hexid(r, 6)}"

    def blocks(self, log, k):
        r = log.rng
        pkg = r.choice(GO_PKGS)
        f = f"./{pkg.split('/')[-1]}_{k}.go"
        return [
            (f"# github.com/acme/svc/{pkg}", True),
            (f"{f}:{r.randrange(10, 500)}:{r.randrange(2, 40)}: undefined: handler{k}{r.randrange(10, 99)}", True),
            (f"{f}:{r.randrange(10, 500)}:{r.randrange(2, 40)}: cannot use x (variable of type int) as string value in argument to log.Print", True),
        ]

    def run(self, log):
        def ok(i):
            return f"github.com/acme/svc/gen/table_{i:04d}"

        def bad(i):
            return f"github.com/acme/svc/gen/table_{i:04d}: build failed: undefined: Row{i}"
        return ok, bad

    def footer(self, log, failed):
        return [] if not failed else [("make: *** [Makefile:14: build] Error 1", True)]


class Jest:
    name = "jest"

    def header(self, log):
        return [("$ npx jest --ci", False)]

    def noise(self, log, i):
        r = log.rng
        kind = r.random()
        f = f"{r.choice(JS_DIRS)}/{r.choice(['Button', 'useFetch', 'format', 'client', 'store', 'Table'])}{i}.test.tsx"
        if kind < 0.55:
            return f"{ESC}[42m{ESC}[30m PASS {RESET} {f} ({dur(r, 0.1, 9)})"
        if kind < 0.85:
            return f"  {GREEN}✓{RESET} renders {r.choice(['empty state', 'rows', 'error banner', 'loading spinner'])} #{i} ({r.randrange(1, 300)} ms)"
        return f"  ○ skipped handles offline mode #{i}"

    def blocks(self, log, k):
        r = log.rng
        f = f"{r.choice(JS_DIRS)}/cart{k}.test.ts"
        a, b = r.randrange(0, 99), r.randrange(100, 999)
        return [
            (f"{ESC}[41m{ESC}[30m FAIL {RESET} {f}", True),
            (f"  ● Cart › computes total for basket {k}", True),
            ("", False),
            ("    expect(received).toBe(expected) // Object.is equality", True),
            ("", False),
            (f"    Expected: {b}", True),
            (f"    Received: {a}", True),
            ("", False),
            (f"      at Object.<anonymous> ({f}:{r.randrange(10, 300)}:{r.randrange(5, 40)})", True),
            (f"      at processTicksAndRejections (node:internal/process/task_queues:{r.randrange(60, 99)}:5)", True),
        ]

    def run(self, log):
        def ok(i):
            return f"  ✓ formats currency for locale #{i:04d} (1 ms)"

        def bad(i):
            return f"  ✕ formats currency for locale #{i:04d} (1 ms)"
        return ok, bad

    def footer(self, log, failed):
        r = log.rng
        total = r.randrange(100, 3000)
        if failed:
            f = r.randrange(1, 6)
            return [(f"Test Suites: {RED}{f} failed{RESET}, {r.randrange(10, 200)} passed, {r.randrange(10, 200)} total", True),
                    (f"Tests:       {RED}{f} failed{RESET}, {total} passed, {total + f} total", True),
                    ("Snapshots:   0 total", False),
                    (f"Time:        {dur(r, 5, 120)}", False)]
        return [(f"Tests:       {total} passed, {total} total", False), (f"Time:        {dur(r, 5, 120)}", False)]


class Npm(Jest):
    name = "npm"

    def header(self, log):
        return [("$ npm ci && npm run build", False)]

    def noise(self, log, i):
        r = log.rng
        kind = r.random()
        if kind < 0.4:
            return f"npm http fetch GET 200 https://registry.npmjs.org/{r.choice(['react', 'lodash', 'typescript', 'vite', 'zod', 'axios'])}/-/pkg-{version(r)}.tgz {ms(r)} (cache miss)"
        if kind < 0.6:
            return progress(r, "⸨" + "#" * 8 + "⸩ reify:", 20)
        if kind < 0.8:
            return f"npm WARN deprecated {r.choice(['inflight', 'glob', 'rimraf', 'uuid'])}@{version(r)}: This module is not supported"
        return f"vite v5.{r.randrange(0, 4)}.{r.randrange(0, 9)} transforming ({r.randrange(1, 2000)}) src/{r.choice(['main', 'app', 'routes'])}/{hexid(r, 6)}.tsx"

    def blocks(self, log, k):
        r = log.rng
        return [
            (f"/home/ci/web/node_modules/vite/dist/node/chunks/dep-{hexid(r, 8)}.js:{r.randrange(1000, 60000)}", True),
            (f"          throw new Error(`Could not resolve \"./widget{k}\" from \"src/app.tsx\"`);", True),
            ("          ^", True),
            ("", False),
            (f"Error: Could not resolve \"./widget{k}\" from \"src/app.tsx\"", True),
            (f"    at file:///home/ci/web/node_modules/vite/dist/node/chunks/dep-{hexid(r, 8)}.js:{r.randrange(1000, 60000)}:{r.randrange(5, 60)}", True),
            ("    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)", True),
            ("", False),
            (f"Node.js v20.{r.randrange(0, 18)}.{r.randrange(0, 9)}", False),
        ]

    def run(self, log):
        def ok(i):
            return f"npm http fetch GET 200 https://registry.npmjs.org/pkg-{i:04d} 12ms (cache hit)"

        def bad(i):
            return f"npm http fetch GET 500 https://registry.npmjs.org/pkg-{i:04d} 12ms (cache hit)"
        return ok, bad

    def footer(self, log, failed):
        if failed:
            return [("npm ERR! code ELIFECYCLE", True), ("npm ERR! errno 1", True),
                    (f"npm ERR! web@{version(log.rng)} build: `vite build`", True),
                    ("npm ERR! Exit status 1", True)]
        return [(f"added {log.rng.randrange(200, 1500)} packages in {dur(log.rng, 5, 60)}", False)]


class Maven:
    name = "maven"

    def header(self, log):
        return [("[INFO] Scanning for projects...", False),
                ("[INFO] ------------------------< com.acme:platform >------------------------", False),
                (f"[INFO] Building platform {version(log.rng)}-SNAPSHOT", False)]

    def noise(self, log, i):
        r = log.rng
        kind = r.random()
        if kind < 0.4:
            return f"[INFO] Downloaded from central: https://repo.maven.apache.org/maven2/org/{r.choice(['apache', 'slf4j', 'junit'])}/{r.choice(['commons-lang3', 'slf4j-api', 'junit-jupiter'])}/{version(r)}/x-{version(r)}.jar ({r.randrange(10, 900)} kB at {r.uniform(0.5, 9):.1f} MB/s)"
        if kind < 0.7:
            return f"[INFO] Tests run: {r.randrange(1, 60)}, Failures: 0, Errors: 0, Skipped: {r.randrange(0, 3)}, Time elapsed: {r.uniform(0, 9):.3f} s - in {r.choice(JAVA_PKGS)}.{r.choice(['Order', 'Invoice', 'Token', 'Query'])}{i}Test"
        if kind < 0.85:
            return f"[INFO] Running {r.choice(JAVA_PKGS)}.{r.choice(['Order', 'Invoice', 'Token', 'Query'])}{i}Test"
        return f"[INFO] --- {r.choice(['maven-compiler-plugin:3.13.0:compile', 'maven-surefire-plugin:3.2.5:test', 'maven-resources-plugin:3.3.1:resources'])} (default) @ {r.choice(['core', 'api', 'web'])} ---"

    def blocks(self, log, k):
        r = log.rng
        pkg = r.choice(JAVA_PKGS)
        cls = f"{r.choice(['Order', 'Invoice', 'Token'])}Service{k}"
        if r.random() < 0.5:
            return [(f"[ERROR] /home/ci/platform/src/main/java/{pkg.replace('.', '/')}/{cls}.java:[{r.randrange(10, 400)},{r.randrange(5, 60)}] cannot find symbol", True),
                    (f"[ERROR]   symbol:   method total{k}()", True),
                    (f"[ERROR]   location: class {pkg}.{cls}", True)]
        lines = [(f"[ERROR] Tests run: {r.randrange(2, 40)}, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: {r.uniform(0, 9):.3f} s <<< FAILURE! - in {pkg}.{cls}Test", True),
                 (f"[ERROR] {pkg}.{cls}Test.computes{k}  Time elapsed: {r.uniform(0, 2):.3f} s  <<< FAILURE!", True),
                 (f"org.opentest4j.AssertionFailedError: expected: <{r.randrange(100, 999)}> but was: <{r.randrange(0, 99)}>", True)]
        for depth in range(r.randrange(3, 8)):
            lines.append((f"\tat {pkg}.{cls}Test.computes{k}({cls}Test.java:{r.randrange(10, 400) + depth})", True))
        lines.append((f"\tat java.base/java.lang.reflect.Method.invoke(Method.java:{r.randrange(500, 600)})", True))
        lines.append((f"Caused by: java.lang.IllegalStateException: ledger {uuid(r)} closed", True))
        lines.append((f"\tat {pkg}.Ledger.append(Ledger.java:{r.randrange(10, 400)})", True))
        lines.append((f"\t... {r.randrange(10, 60)} more", True))
        return lines

    def run(self, log):
        def ok(i):
            return f"[INFO] Tests run: 4, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.0{i % 10} s - in com.acme.gen.Row{i:04d}Test"

        def bad(i):
            return f"[ERROR] Tests run: 4, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.0{i % 10} s <<< FAILURE! - in com.acme.gen.Row{i:04d}Test"
        return ok, bad

    def footer(self, log, failed):
        if failed:
            return [("[INFO] ------------------------------------------------------------------------", False),
                    ("[INFO] BUILD FAILURE", True),
                    ("[INFO] ------------------------------------------------------------------------", False),
                    (f"[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:3.2.5:test (default-test) on project core-{log.rng.randrange(1, 99)}: There are test failures.", True)]
        return [("[INFO] BUILD SUCCESS", False), (f"[INFO] Total time:  {log.rng.uniform(10, 300):.3f} s", False)]


class Gradle(Maven):
    name = "gradle"

    def header(self, log):
        return [("$ ./gradlew build --console=plain", False),
                (f"Starting a Gradle Daemon (subsequent builds will be faster)", False)]

    def noise(self, log, i):
        r = log.rng
        kind = r.random()
        mod = r.choice(["core", "api", "web", "batch"])
        if kind < 0.5:
            return f"> Task :{mod}:{r.choice(['compileJava', 'processResources', 'classes', 'jar', 'compileTestJava', 'test'])}{r.choice(['', ' UP-TO-DATE', ' NO-SOURCE', ' FROM-CACHE'])}"
        if kind < 0.7:
            return progress(r, f"<{'=' * 5}{'-' * 8}> {r.randrange(1, 99)}% EXECUTING", 16)
        return f"{r.choice(JAVA_PKGS)}.Query{i}Test > returns{r.randrange(1, 40)}Rows() PASSED"

    def blocks(self, log, k):
        r = log.rng
        pkg = r.choice(JAVA_PKGS)
        lines = [(f"{pkg}.Ledger{k}Test > appends() FAILED", True),
                 (f"    java.lang.NullPointerException: Cannot invoke \"Entry.amount()\" because \"entry{k}\" is null", True)]
        for depth in range(r.randrange(2, 6)):
            lines.append((f"        at {pkg}.Ledger.append(Ledger.java:{r.randrange(10, 400) + depth})", True))
        return lines

    def run(self, log):
        def ok(i):
            return f"com.acme.gen.Row{i:04d}Test > parses() PASSED"

        def bad(i):
            return f"com.acme.gen.Row{i:04d}Test > parses() FAILED"
        return ok, bad

    def footer(self, log, failed):
        if failed:
            return [("", False), ("FAILURE: Build failed with an exception.", True), ("", False),
                    ("* What went wrong:", True),
                    (f"Execution failed for task ':core:test'.", True),
                    (f"> There were failing tests. See the report at: file:///home/ci/platform/core/build/reports/tests/test/index.html", True),
                    ("", False), (f"BUILD FAILED in {r_dur(log)}", True)]
        return [(f"BUILD SUCCESSFUL in {r_dur(log)}", False)]


def r_dur(log):
    return f"{log.rng.randrange(0, 9)}m {log.rng.randrange(0, 59)}s"


class Make:
    name = "make-gcc"
    cc = "gcc"

    def header(self, log):
        return [("$ make -j8", False)]

    def noise(self, log, i):
        r = log.rng
        kind = r.random()
        src = f"src/{r.choice(MODULES)}/{r.choice(MODULES)}_{i % 97}.c"
        if kind < 0.6:
            return f"{self.cc} -O2 -g -Wall -Wextra -Iinclude -I/usr/include/openssl -DVERSION=\\\"{version(r)}\\\" -c {src} -o build/{hexid(r, 8)}.o"
        if kind < 0.75:
            return f"make[{r.randrange(1, 4)}]: Entering directory '/home/ci/proj/{r.choice(MODULES)}'"
        if kind < 0.9:
            return f"[{r.randrange(0, 100):>3}%] Building C object CMakeFiles/core.dir/{src}.o"
        return f"{src}:{r.randrange(10, 900)}:{r.randrange(2, 40)}: warning: unused variable 'tmp{r.randrange(0, 9)}' [-Wunused-variable]"

    def blocks(self, log, k):
        r = log.rng
        src = f"src/{r.choice(MODULES)}/{r.choice(MODULES)}_{k}.c"
        line = r.randrange(10, 900)
        col = r.randrange(5, 40)
        return [
            (f"{src}: In function 'parse_{k}':", True),
            (f"{src}:{line}:{col}: {BOLD_RED}error:{RESET} 'count{k}' undeclared (first use in this function)", True),
            (f"  {line} |     total += count{k} * stride;", True),
            (f"      |              {'^' * (6 + len(str(k)))}", True),
            (f"make[{r.randrange(1, 3)}]: *** [Makefile:{r.randrange(10, 90)}: build/{hexid(r, 8)}.o] Error 1", True),
        ]

    def run(self, log):
        def ok(i):
            return f"{self.cc} -O2 -c src/gen/table_{i:04d}.c -o build/table_{i:04d}.o"

        def bad(i):
            return f"{self.cc} -O2 -c src/gen/table_{i:04d}.c -o build/table_{i:04d}.o: fatal error: table.h: No such file or directory"
        return ok, bad

    def footer(self, log, failed):
        if failed:
            return [("make: *** [Makefile:31: all] Error 2", True)]
        return [("make: Leaving directory '/home/ci/proj'", False)]


class Clang(Make):
    name = "clang"
    cc = "clang"

    def blocks(self, log, k):
        r = log.rng
        src = f"src/{r.choice(MODULES)}/{r.choice(MODULES)}_{k}.cpp"
        line = r.randrange(10, 900)
        return [
            (f"{src}:{line}:{r.randrange(2, 40)}: {BOLD_RED}error: {RESET}{ESC}[1mno matching function for call to 'encode{k}'{RESET}", True),
            (f"    auto out = encode{k}(buffer, len, Mode::Fast);", True),
            ("               ^~~~~~~", True),
            (f"include/codec.h:{r.randrange(10, 200)}:{r.randrange(2, 20)}: note: candidate function not viable: requires 2 arguments, but 3 were provided", True),
            (f"1 error generated.", True),
        ]


class Kubectl:
    name = "kubectl"

    def header(self, log):
        return [("$ kubectl get pods -A -w", False),
                ("NAMESPACE     NAME                                READY   STATUS    RESTARTS   AGE", False)]

    def noise(self, log, i):
        r = log.rng
        svc = r.choice(SERVICES)
        kind = r.random()
        if kind < 0.7:
            return f"{r.choice(['default', 'prod', 'staging']):<13} {svc}-{hexid(r, 10)}-{hexid(r, 5):<8} 1/1     Running   {r.randrange(0, 3)}          {r.randrange(1, 59)}m"
        if kind < 0.85:
            return f"{r.choice(['default', 'prod']):<13} {svc}-{hexid(r, 10)}-{hexid(r, 5):<8} 0/1     ContainerCreating   0          {r.randrange(1, 59)}s"
        return f"{r.choice(['default', 'prod']):<13} {svc}-{hexid(r, 10)}-{hexid(r, 5):<8} 1/1     Running   0          {r.randrange(1, 59)}s"

    def blocks(self, log, k):
        r = log.rng
        pod = f"{r.choice(SERVICES)}-{hexid(r, 10)}-{hexid(r, 5)}"
        return [
            (f"prod          {pod} 0/1     CrashLoopBackOff   {r.randrange(3, 40)}          {r.randrange(1, 59)}m", True),
            (f"  Warning  BackOff    {r.randrange(1, 59)}s (x{r.randrange(2, 90)} over {r.randrange(1, 59)}m)  kubelet  Back-off restarting failed container app in pod {pod}_prod({uuid(r)})", True),
            (f"  Warning  Failed     {r.randrange(1, 59)}s  kubelet  Error: failed to start container \"app\": exit code {r.choice([1, 137, 139])}", True),
        ]

    def run(self, log):
        r = log.rng
        svc = r.choice(SERVICES)

        def ok(i):
            return f"prod          {svc}-7d9f8c6b5-{i:05d} 1/1     Running            0          5m"

        def bad(i):
            return f"prod          {svc}-7d9f8c6b5-{i:05d} 0/1     ImagePullBackOff   0          5m"
        return ok, bad

    def footer(self, log, failed):
        return []


class Docker(Kubectl):
    name = "docker"

    def header(self, log):
        return [("$ docker build -t acme/api:ci .", False),
                ("#0 building with \"default\" instance using docker driver", False)]

    def noise(self, log, i):
        r = log.rng
        step = r.randrange(1, 30)
        kind = r.random()
        if kind < 0.3:
            return f"#{step} [{r.randrange(1, 9)}/{r.randrange(9, 14)}] RUN pip install --no-cache-dir -r requirements-{r.choice(PY_MODULES)}.txt"
        if kind < 0.6:
            return f"#{step} {r.uniform(0, 90):.3f} Collecting {r.choice(['django', 'requests', 'celery', 'redis', 'boto3'])}=={version(r)}"
        if kind < 0.8:
            return f"#{step} sha256:{hexid(r, 64)} {r.uniform(0, 90):.2f}MB / {r.uniform(90, 200):.2f}MB {r.uniform(0, 9):.1f}s"
        return f"#{step} DONE {r.uniform(0, 9):.1f}s"

    def blocks(self, log, k):
        r = log.rng
        step = r.randrange(1, 30)
        return [
            (f"#{step} {r.uniform(0, 90):.3f} ERROR: Could not find a version that satisfies the requirement acme-sdk{k}=={version(r)} (from versions: none)", True),
            (f"#{step} ERROR: process \"/bin/sh -c pip install -r requirements.txt\" did not complete successfully: exit code: 1", True),
            (f"ERROR: failed to solve: process \"/bin/sh -c pip install -r requirements.txt\" did not complete successfully: exit code: {k + 1}", True),
        ]

    def run(self, log):
        def ok(i):
            return f"#12 sha256:{i:064x} 4.19MB / 4.19MB 0.3s done"

        def bad(i):
            return f"#12 sha256:{i:064x} 4.19MB / 4.19MB 0.3s error: unexpected EOF"
        return ok, bad


class App:
    name = "app"

    def header(self, log):
        return [(f"{log.ts()} INFO  service={log.rng.choice(SERVICES)} version={version(log.rng)} host={log.rng.choice(HOSTS)} starting", False)]

    def noise(self, log, i):
        r = log.rng
        kind = r.random()
        svc = r.choice(SERVICES)
        if kind < 0.55:
            return (f"{log.ts()} INFO  [{svc}] request_id={uuid(r)} method={r.choice(['GET', 'POST', 'PUT'])} "
                    f"path=/v1/{r.choice(PY_MODULES)}/{r.randrange(1, 99999)} status=200 duration={ms(r)}")
        if kind < 0.75:
            return f"{log.ts()} DEBUG [{svc}] cache hit key=sess:{hexid(r, 24)} ttl={r.randrange(1, 3600)}s"
        if kind < 0.9:
            return f"{log.ts()} INFO  [{svc}] flushed {r.randrange(1, 5000)} events to kafka partition {r.randrange(0, 32)} offset {r.randrange(10**6, 10**9)}"
        return f"{log.ts()} WARN  [{svc}] retrying upstream {r.choice(HOSTS)}:8443 attempt {r.randrange(1, 4)}/3 after {ms(r)}"

    def blocks(self, log, k):
        r = log.rng
        svc = r.choice(SERVICES)
        kind = r.randrange(3)
        if kind == 0:
            return [(f"{log.ts()} ERROR [{svc}] request_id={uuid(r)} upstream {r.choice(HOSTS)}:8443 refused connection after 3 attempts", True)]
        if kind == 1:
            return [(f"{log.ts()} FATAL [{svc}] cannot open ledger /var/lib/{svc}/ledger-{k}.db: disk quota exceeded", True)]
        return [(f"panic: assignment to entry in nil map (worker {k}, shard {r.randrange(0, 64)})", True),
                ("", False),
                (f"goroutine {r.randrange(1, 999)} [running]:", True),
                (f"main.(*Ledger).Append(0xc000{hexid(r, 6)})", True),
                (f"\t/src/{svc}/ledger.go:{r.randrange(10, 500)} +0x{hexid(r, 3)}", True)]

    def run(self, log):
        r = log.rng
        svc = r.choice(SERVICES)

        def ok(i):
            return f"{log.ts()} INFO  [{svc}] worker-{i % 8} processed batch {i} status=ok in {ms(r)}"

        def bad(i):
            return f"{log.ts()} ERROR [{svc}] worker-{i % 8} processed batch {i} status=failed in {ms(r)}"
        return ok, bad

    def footer(self, log, failed):
        if failed:
            return [(f"{log.ts()} ERROR [main] shutting down after unrecoverable error (exit code 1)", True)]
        return [(f"{log.ts()} INFO  [main] shutdown complete", False)]


# ---------------------------------------------------------------------------------------------
# The corpus: (family, number of noise lines, placement).
# ---------------------------------------------------------------------------------------------

PLAN = [
    (Cargo, 900, "middle"), (Cargo, 250, "start"), (Cargo, 1600, "several"), (Cargo, 600, "template"),
    (CargoTest, 1800, "end"), (CargoTest, 4800, "several"), (CargoTest, 700, "template"),
    (CargoTest, 320, "start"),
    (Pytest, 800, "middle"), (Pytest, 1800, "several"), (Pytest, 650, "template"),
    (Pytest, 230, "end"),
    (PythonApp, 1000, "several"), (PythonApp, 600, "template"),
    (GoTest, 2000, "middle"), (GoTest, 700, "template"), (GoTest, 400, "start"),
    (GoBuild, 300, "several"),
    (Jest, 1400, "several"), (Jest, 600, "template"),
    (Npm, 700, "end"),
    (Maven, 1000, "several"), (Maven, 700, "template"),
    (Gradle, 800, "middle"),
    (Make, 1100, "several"), (Make, 560, "template"),
    (Clang, 600, "end"),
    (Kubectl, 800, "template"), (Kubectl, 400, "start"),
    (Docker, 1200, "several"),
    (App, 1500, "template"), (App, 1100, "several"), (App, 600, "start"), (App, 500, "end"),
]


def build(family, n, placement, rng):
    """One log: the family's frame around `n` noise lines with failures placed as asked.

    The layout is planned first and rendered in file order afterwards, so that timestamps only
    move forward whatever is inserted where."""
    log = Log(rng)
    fam = family()
    # Each slot renders to a list of (text, is_failure) when its turn comes.
    body = [lambda i=i: [(fam.noise(log, i), False)] for i in range(n)]
    blocks = iter(range(1, 100))

    def block():
        k = next(blocks)
        return lambda: fam.blocks(log, k)

    header = [lambda: fam.header(log)]
    if placement == "start":
        # Half the time before the header too: the very first line of the file.
        if rng.random() < 0.5:
            header.insert(0, block())
        else:
            body.insert(0, block())
    elif placement == "middle":
        body.insert(rng.randrange(int(n * 0.4), int(n * 0.6)), block())
    elif placement == "end":
        body.append(block())
    elif placement == "several":
        spots = sorted(rng.sample(range(1, n), rng.randrange(3, 7)))
        for at in reversed(spots):
            body.insert(at, block())
    elif placement == "template":
        ok, bad = fam.run(log)
        length = rng.randrange(300, 600)
        bad_at = rng.randrange(length // 4, length - length // 4)
        run = [lambda i=i: [(bad(i), True) if i == bad_at else (ok(i), False)]
               for i in range(length)]
        at = rng.randrange(0, n)
        body[at:at] = run
    footer = [lambda: fam.footer(log, True)]
    return [line for slot in header + body + footer for line in slot()]


def main():
    manifest_path = os.path.join(HERE, "failures.json")
    kept = {}
    if os.path.exists(manifest_path):
        with open(manifest_path, encoding="utf-8") as f:
            kept = {name: lines for name, lines in json.load(f).items() if name.startswith("real/")}
    for old in os.listdir(HERE):
        if old.endswith(".log"):
            os.remove(os.path.join(HERE, old))
    counts = {}
    failures = {}
    total = 0
    for index, (family, n, placement) in enumerate(PLAN):
        rng = random.Random(SEED * 1000 + index)
        name = family.name
        counts[name] = counts.get(name, 0) + 1
        file = f"{name}-{counts[name]:02d}.log"
        lines = build(family, n, placement, rng)
        for text, _ in lines:
            assert "\n" not in text, (file, text)
        text = "".join(t + "\n" for t, _ in lines)
        failures[file] = [i + 1 for i, (_, bad) in enumerate(lines) if bad]
        assert 200 <= len(lines) <= 5000, (file, len(lines))
        with open(os.path.join(HERE, file), "w", encoding="utf-8", newline="") as f:
            f.write(text)
        total += len(text.encode())
    assert total <= MAX_TOTAL_BYTES, f"corpus is {total} bytes"
    failures.update(kept)
    with open(manifest_path, "w", encoding="utf-8") as f:
        # One file a line: a diff of the ground truth shows which file changed.
        rows = [f" {json.dumps(name)}: {json.dumps(lines)}" for name, lines in sorted(failures.items())]
        f.write("{\n" + ",\n".join(rows) + "\n}\n")
    print(f"{len(PLAN)} logs, {total:,} bytes")


if __name__ == "__main__":
    main()
