//! `cargo xtask test`: the README's test command. The integration tests drive real components
//! (a `redis-server`, the npm packages of `tests/mcp` and `tests/claude`, the Python SDKs of
//! `tests/llm`), so on a fresh machine it first makes each of them ready, saying on stderr what
//! it installs and why, and then runs `cargo test --workspace` with the arguments it was given.
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
        ("tests/llm/.venv", venv(root)),
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
    std::process::exit(status.code().unwrap_or(1));
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

/// The serve tests drive the official LLM SDKs (every package pinned in
/// `tests/llm/requirements.txt`) from a venv of their own; it is made again when its
/// `installed.txt` (a copy of the requirements it was installed from) differs.
fn venv(root: &Path) -> Result<()> {
    let llm = root.join("tests/llm");
    let requirements = llm.join("requirements.txt");
    let wanted = std::fs::read_to_string(&requirements)
        .with_context(|| format!("{}", requirements.display()))?;
    let venv = llm.join(".venv");
    let installed = venv.join("installed.txt");
    let reason = match std::fs::read_to_string(&installed) {
        Ok(text) if text == wanted => return Ok(()),
        Ok(_) => "its installed.txt differs from requirements.txt",
        Err(_) => "it has no installed.txt",
    };
    if !runs("python3") {
        bail!("{reason}, and python3 is not on PATH to make it");
    }
    eprintln!(
        "xtask test: making tests/llm/.venv and installing tests/llm/requirements.txt in it \
         (the serve tests drive the official LLM SDKs; {reason})"
    );
    status_of(Command::new("python3").args(["-m", "venv"]).arg(&venv))?;
    status_of(
        Command::new(venv.join("bin/python"))
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "-r",
            ])
            .arg(&requirements),
    )?;
    std::fs::write(&installed, &wanted).with_context(|| format!("{}", installed.display()))
}
