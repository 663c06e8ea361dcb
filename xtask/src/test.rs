//! `cargo xtask test`: the README's test command. The integration tests drive real components
//! (a `redis-server`, the npm packages of `tests/mcp` and `tests/claude`, the Python SDKs of
//! `tests/llm`), so on a fresh machine it first makes each of them ready, saying on stderr what
//! it installs and why, and then runs `cargo test --workspace` with the arguments it was given.
//! Then the Python package's tests: the package is installed from `python/` into a venv of its
//! own, `python/.venv` (with the pinned packages of `python/tests/requirements.txt`), and
//! `pytest python/tests` runs there. The run fails if either fails.
//!
//! A component it cannot make ready (not root, no network, no Node.js) does not stop the run:
//! it says why on stderr, the tests that need the component fail naming it, and every other test
//! still runs.

use std::path::Path;
use std::process::Command;
use std::time::SystemTime;

use anyhow::{Context, Result, bail};

/// The `redis-server` the tests were written against: the version Debian 12 (bookworm-security)
/// gives. A security update withdraws a superseded version from the mirror, so then the current
/// package of the same release is installed instead, and its version is printed.
const REDIS_PIN: &str = "redis-server=5:7.0.15-1~deb12u10";

/// Makes the components ready, then runs the tests; exits with cargo's status.
pub fn run(root: &Path, args: &[String]) -> Result<()> {
    let steps = [
        ("redis-server", redis_server()),
        ("python3", python3()),
        ("tests/mcp", npm_packages(root, "tests/mcp", MCP_WHY)),
        (
            "tests/claude",
            npm_packages(root, "tests/claude", CLAUDE_WHY),
        ),
        ("tests/llm/.venv", venv(root, &LLM_VENV)),
    ];
    for (component, ready) in steps {
        if let Err(err) = ready {
            eprintln!("xtask test: {component} is not ready: {err:#}; the tests that need it fail");
        }
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(root)
        .args(["test", "--workspace"])
        .args(args)
        .status()
        .context("running cargo test")?;
    let python = python_tests(root);
    if let Err(err) = &python {
        eprintln!("xtask test: the Python package's tests failed: {err:#}");
    }
    if !status.success() {
        std::process::exit(status.code().unwrap_or(1));
    }
    std::process::exit(if python.is_ok() { 0 } else { 1 });
}

/// The Python package installed into `python/.venv`, then `pytest python/tests` there.
fn python_tests(root: &Path) -> Result<()> {
    let python = python_package(root)?;
    eprintln!("xtask test: pytest python/tests (the Python package's tests)");
    status_of(Command::new(python).current_dir(root).args([
        "-m",
        "pytest",
        "python/tests",
        "-q",
        "-p",
        "no:cacheprovider",
    ]))
}

/// Makes `python/.venv` ready and installs the package built from `python/` into it (a release
/// build of the extension, as `pip install ./python` makes it; the venv already holds the
/// build backend, so nothing is fetched); returns the venv's interpreter.
pub fn python_package(root: &Path) -> Result<std::path::PathBuf> {
    venv(root, &PACKAGE_VENV)?;
    let bin = root.join(PACKAGE_VENV.dir).join(".venv/bin");
    let python = bin.join("python");
    eprintln!("xtask test: installing the Python package from python/ into python/.venv");
    // The build backend runs `maturin` from PATH, as an activated venv has it.
    let mut path = std::ffi::OsString::from(&bin);
    if let Some(rest) = std::env::var_os("PATH") {
        path.push(":");
        path.push(rest);
    }
    status_of(
        pip_install(&python)
            .current_dir(root)
            .env("PATH", path)
            .args([
                "--no-deps",
                "--no-build-isolation",
                "--force-reinstall",
                "./python",
            ]),
    )?;
    Ok(python)
}

const MCP_WHY: &str = "the mcp-proxy tests run the real filesystem MCP server and the official \
                       SDK's client";
const CLAUDE_WHY: &str = "the claude_code test runs the real Claude Code through serve";

/// Whether `program --version` runs and succeeds.
fn runs(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success())
}

fn status_of(command: &mut Command) -> Result<()> {
    let status = command
        .status()
        .with_context(|| format!("cannot run {command:?}"))?;
    if !status.success() {
        bail!("{command:?} failed ({status})");
    }
    Ok(())
}

/// The Redis tee store's tests start a real `redis-server`; installed with apt-get when it is
/// missing and this runs as root.
fn redis_server() -> Result<()> {
    if runs("redis-server") {
        return Ok(());
    }
    let uid = Command::new("id")
        .arg("-u")
        .output()
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned())
        .unwrap_or_default();
    if uid != "0" {
        bail!(
            "it is not on PATH and only root installs it here (sudo apt-get install redis-server)"
        );
    }
    if !runs("apt-get") {
        bail!("it is not on PATH and there is no apt-get to install it with");
    }
    eprintln!(
        "xtask test: installing {REDIS_PIN} with apt-get: the Redis tee store's tests start a \
         real redis-server and none is on PATH"
    );
    status_of(Command::new("apt-get").arg("update"))?;
    let install = |package: &str| {
        status_of(Command::new("apt-get").args([
            "install",
            "-y",
            "--no-install-recommends",
            package,
        ]))
    };
    if install(REDIS_PIN).is_err() {
        eprintln!("xtask test: {REDIS_PIN} is gone from the mirror; installing the current one");
        install("redis-server")?;
    }
    status_of(Command::new("redis-server").arg("--version"))
}

/// The mcp-proxy tests' scripted server is a Python script, and the serve tests' venv is made
/// with python3; nothing installs it here, so its absence is said once, up front.
fn python3() -> Result<()> {
    if !runs("python3") {
        bail!(
            "it is not on PATH (Debian: apt-get install python3 python3-venv); the mcp-proxy \
             and serve tests need it"
        );
    }
    Ok(())
}

/// `npm ci` in `dir` when its `node_modules` is missing or older than its `package-lock.json`
/// (npm writes `node_modules/.package-lock.json` at the end of an install, so its time is the
/// install's).
fn npm_packages(root: &Path, dir: &str, why: &str) -> Result<()> {
    let folder = root.join(dir);
    let lock = folder.join("package-lock.json");
    let locked = modified(&lock).with_context(|| format!("{}", lock.display()))?;
    let reason = match modified(&folder.join("node_modules/.package-lock.json")) {
        Err(_) => "its node_modules is missing",
        Ok(installed) if installed < locked => {
            "its node_modules is older than its package-lock.json"
        }
        Ok(_) => return Ok(()),
    };
    if !runs("npm") {
        bail!("{reason}, and npm is not on PATH to install it (it comes with Node.js)");
    }
    eprintln!("xtask test: npm ci in {dir} ({why}; {reason})");
    status_of(
        Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&folder),
    )
}

fn modified(path: &Path) -> std::io::Result<SystemTime> {
    std::fs::metadata(path)?.modified()
}

/// `python -m pip install`, quietly.
fn pip_install(python: &Path) -> Command {
    let mut pip = Command::new(python);
    pip.args([
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
    ]);
    pip
}

/// A venv of the tests: `<dir>/.venv`, from a requirements file, for a reason.
struct Venv {
    /// The folder that holds `.venv`.
    dir: &'static str,
    /// The requirements file, from the workspace root.
    requirements: &'static str,
    /// Installed with `--no-deps`: the file pins every package, dependencies included.
    no_deps: bool,
    why: &'static str,
}

/// The serve tests drive the official LLM SDKs (every package pinned in
/// `tests/llm/requirements.txt`).
const LLM_VENV: Venv = Venv {
    dir: "tests/llm",
    requirements: "tests/llm/requirements.txt",
    no_deps: false,
    why: "the serve tests drive the official LLM SDKs",
};

/// The Python package's tests: the build backend, pytest, and ai-parrot's columnar codec with
/// the few packages it imports (its whole dependency set is far too heavy).
const PACKAGE_VENV: Venv = Venv {
    dir: "python",
    requirements: "python/tests/requirements.txt",
    no_deps: true,
    why: "the Python package is built and tested there",
};

/// Makes `venv` ready; it is made again when its `installed.txt` (a copy of the requirements
/// it was installed from) differs.
fn venv(root: &Path, venv: &Venv) -> Result<()> {
    let requirements = root.join(venv.requirements);
    let wanted = std::fs::read_to_string(&requirements)
        .with_context(|| format!("{}", requirements.display()))?;
    let folder = root.join(venv.dir).join(".venv");
    let installed = folder.join("installed.txt");
    let reason = match std::fs::read_to_string(&installed) {
        Ok(text) if text == wanted => return Ok(()),
        Ok(_) => "its installed.txt differs from requirements.txt",
        Err(_) => "it has no installed.txt",
    };
    if !runs("python3") {
        bail!("{reason}, and python3 is not on PATH to make it");
    }
    eprintln!(
        "xtask test: making {}/.venv and installing {} in it ({}; {reason})",
        venv.dir, venv.requirements, venv.why
    );
    status_of(Command::new("python3").args(["-m", "venv"]).arg(&folder))?;
    let mut pip = pip_install(&folder.join("bin/python"));
    if venv.no_deps {
        pip.arg("--no-deps");
    }
    status_of(pip.arg("-r").arg(&requirements))?;
    std::fs::write(&installed, &wanted).with_context(|| format!("{}", installed.display()))
}
