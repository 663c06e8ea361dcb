"""README's "From Python": its two-line install, in a new venv, then its example, run as
written from a folder holding the corpus file it reads; it prints what the README shows."""

import re
import shutil
import subprocess

from conftest import CORPUS, ROOT

README = (ROOT / "README.md").read_text()


def section():
    start = README.index("## From Python")
    return README[start : README.index("\n## ", start + 1)]


def blocks(kind):
    return re.findall(rf"```{kind}\n(.*?)```", section(), re.S)


def test_the_readme_install_and_example_run_as_written(tmp_path):
    # Shown as `sh manual`: the workspace's own README test does not run it (a release build,
    # and the build backend from PyPI); this test does.
    [install] = blocks("sh manual")
    [example] = blocks("python")
    [shown] = blocks("text")
    venv = tmp_path / "venv"
    # The install's two lines, with the venv made in the test's folder instead of the clone.
    script = install.replace(".venv", str(venv))
    subprocess.run(["bash", "-euc", script], cwd=ROOT, check=True, timeout=1800)
    here = tmp_path / "clone"
    (here / "corpus").mkdir(parents=True)
    shutil.copy(CORPUS / "build-log.txt", here / "corpus")
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-c", example],
        cwd=here, capture_output=True, text=True, check=True, timeout=300,
    )
    assert done.stdout.rstrip("\n") == shown.rstrip("\n"), done.stdout
    assert (here / ".parrot" / "tee.db").exists()
    assert len([line for line in example.splitlines() if line.strip()]) == 5
