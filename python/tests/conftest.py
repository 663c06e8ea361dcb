"""Fixtures of the Python package's tests: the repository's corpus, a project folder, the
command built from the same workspace (what the host is held to), a plugin package laid out from
the cdylib cargo builds, and a real redis-server on a free loopback port."""

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpus"
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
CARGO = os.environ.get("CARGO", "cargo")

sys.path.insert(0, str(Path(__file__).resolve().parent))


def corpus_files():
    """The corpus payloads: the repository's own, and the build log."""
    return sorted(
        path for path in CORPUS.iterdir() if path.suffix in (".json", ".txt") and path.is_file()
    )


def cargo_build(package):
    subprocess.run(
        [CARGO, "build", "--quiet", "-p", package], cwd=ROOT, check=True, timeout=1800
    )


@pytest.fixture(autouse=True)
def no_kill_switch(monkeypatch):
    """Every test starts with the kill switch off, whatever the environment says."""
    monkeypatch.delenv("PARROT_COMPRESSION_DISABLED", raising=False)
    monkeypatch.delenv("PARROT_PLUGIN_PATH", raising=False)


@pytest.fixture
def project(tmp_path):
    """An empty project folder: the core configuration, its tee store created on first use."""
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


@pytest.fixture(scope="session")
def command():
    """The `parrot-compress` command of this workspace (debug build)."""
    cargo_build("parrot-compress")
    return TARGET / "debug" / "parrot-compress"


@pytest.fixture(scope="session")
def line_dedup_package(tmp_path_factory):
    """The line_dedup plugin package, as a folder holding its compressors.toml and the cdylib
    cargo builds from plugins/line-dedup."""
    cargo_build("parrot-plugin-line-dedup")
    library = TARGET / "debug" / "libparrot_plugin_line_dedup.so"
    folder = tmp_path_factory.mktemp("plugins") / "line-dedup"
    folder.mkdir()
    shutil.copy(ROOT / "plugins" / "line-dedup" / "compressors.toml", folder)
    shutil.copy(library, folder)
    return folder


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory):
    """A real redis-server on a free loopback port, for the Redis tee store."""
    server = shutil.which("redis-server")
    if server is None:
        pytest.fail("redis-server is not on PATH (cargo xtask test installs it: apt-get install redis-server)")
    port = free_port()
    folder = tmp_path_factory.mktemp("redis")
    process = subprocess.Popen(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", str(folder)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            if time.monotonic() > deadline or process.poll() is not None:
                process.kill()
                pytest.fail(f"redis-server did not start on port {port}")
            time.sleep(0.05)
    yield f"redis://127.0.0.1:{port}/0"
    process.terminate()
    process.wait(timeout=10)
