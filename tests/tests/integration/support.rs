//! Test support: builds the workspace's plugin libraries and the command once per test run,
//! and lays out plugin packages in temporary folders (with `parrot-codec-test`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, OnceLock, PoisonError};

use parrot_codec_test::{Cargo, Package};

/// The workspace's root folder.
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The target directory of this profile (`target/debug`), derived from the test executable.
pub fn profile_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| parrot_codec_test::profile_dir().expect("target/<profile> above the test"))
}

/// The fixture plugin that must be built with `panic = "abort"`.
const ABORT_FIXTURE: &str = "parrot_plugin_fault_abort";

/// The nested build: every library of the workspace and the command. `--test integration`
/// (this binary, already built) makes cargo resolve features as `cargo test --workspace` did,
/// with dev-dependencies: without it the libraries' features differ (the host's `tokio`,
/// syn's, regex-syntax's) and cargo builds most of the dependency tree a second time.
fn workspace_build() -> Cargo {
    let mut cargo = Cargo::build(workspace());
    cargo.args([
        "--workspace",
        "--lib",
        "--bin",
        "parrot-compress",
        "--test",
        "integration",
    ]);
    cargo
}

/// Builds every library of the workspace and the command, once.
pub fn build_artifacts() {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        workspace_build()
            .args(["--quiet"])
            .run_once()
            .unwrap_or_else(|err| panic!("{err}"));
    });
}

/// Builds the `panic = "abort"` fixture's cdylib, once, with rustc directly: a profile cannot
/// set `panic` per package, and `cargo rustc -p` would resolve the fixture's features alone
/// and build the plugin interface's dependencies a second time (a minute of CPU). rustc links
/// it against the plugin interface the workspace build made, with `-C panic=abort` for this
/// one crate.
fn build_abort_fixture() {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        build_artifacts();
        let codec_api = built_rlib("parrot_codec_api");
        let deps = profile_dir().join("deps");
        let mut rustc = Command::new(rustc());
        rustc
            .args(["--crate-name", ABORT_FIXTURE, "--crate-type", "cdylib"])
            // The workspace's edition.
            .args(["--edition=2024", "-C", "panic=abort"])
            .arg(workspace().join("plugins/fault-abort/src/lib.rs"))
            .arg("-L")
            .arg(format!("dependency={}", deps.display()))
            .arg("--extern")
            .arg(format!("parrot_codec_api={}", codec_api.display()))
            .arg("--out-dir")
            .arg(&deps);
        let status = rustc
            .status()
            .unwrap_or_else(|err| panic!("{rustc:?}: {err}"));
        assert!(status.success(), "{rustc:?} failed: {status}");
    });
}

/// The rustc beside the cargo that runs the tests (same toolchain), else the one on `PATH`.
fn rustc() -> PathBuf {
    std::env::var_os("CARGO")
        .map(|cargo| {
            PathBuf::from(cargo).with_file_name(format!("rustc{}", std::env::consts::EXE_SUFFIX))
        })
        .filter(|rustc| rustc.is_file())
        .unwrap_or_else(|| PathBuf::from("rustc"))
}

/// The rlib of `crate_name` that the nested build made, as cargo reports it (the build is
/// fresh by then: this only reads its artifacts).
fn built_rlib(crate_name: &str) -> PathBuf {
    let mut command = workspace_build()
        .args(["--message-format=json-render-diagnostics"])
        .command()
        .unwrap_or_else(|err| panic!("{err}"));
    let out = command
        .output()
        .unwrap_or_else(|err| panic!("{command:?}: {err}"));
    assert!(out.status.success(), "{command:?} failed: {}", out.status);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|message| {
            message["reason"] == "compiler-artifact" && message["target"]["name"] == crate_name
        })
        .flat_map(|message| message["filenames"].as_array().cloned().unwrap_or_default())
        .filter_map(|file| file.as_str().map(PathBuf::from))
        .find(|file| file.extension().is_some_and(|ext| ext == "rlib"))
        .unwrap_or_else(|| panic!("{command:?} reported no rlib of {crate_name}"))
}

/// The path of a built plugin library, by crate name (`parrot_plugin_line_dedup`).
pub fn library(crate_name: &str) -> PathBuf {
    if crate_name == ABORT_FIXTURE {
        build_abort_fixture();
    } else {
        build_artifacts();
    }
    parrot_codec_test::cdylib(crate_name).unwrap_or_else(|err| panic!("{err}"))
}

/// The `parrot-compress` binary.
pub fn binary() -> PathBuf {
    build_artifacts();
    let path = profile_dir().join(format!("parrot-compress{}", std::env::consts::EXE_SUFFIX));
    assert!(path.is_file(), "{} was not built", path.display());
    path
}

/// The source folder of a shipped plugin (`plugins/line-dedup`).
/// Runs the command with `--project project` and `args`, `input` on its stdin, without the
/// environment variables that would change what it does (the plugin path, the kill switch, the
/// Redis store's password).
pub fn run_in(project: &Path, args: &[&str], input: &[u8]) -> Output {
    run_in_with(project, args, input, &[])
}

/// [`run_in`] with the environment variables `envs` set.
pub fn run_in_with(project: &Path, args: &[&str], input: &[u8], envs: &[(&str, &str)]) -> Output {
    use std::io::Write;
    let mut child = Command::new(binary())
        .arg("--project")
        .arg(project)
        .args(args)
        .env_remove("PARROT_PLUGIN_PATH")
        .env_remove("PARROT_COMPRESSION_DISABLED")
        .env_remove("PARROT_TEE_REDIS_PASSWORD")
        .envs(envs.iter().copied())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("parrot-compress runs");
    // A command that does not read stdin may close it first.
    let _ = child.stdin.take().expect("a piped stdin").write_all(input);
    child.wait_with_output().expect("parrot-compress ends")
}

pub fn plugin_source(dir: &str) -> PathBuf {
    workspace().join("plugins").join(dir)
}

/// Lays out a package folder `parent/name` holding `manifest` as `compressors.toml` and, when
/// given, a copy of the library `crate_name` under its usual file name.
pub fn package(parent: &Path, name: &str, crate_name: Option<&str>, manifest: &str) -> PathBuf {
    let mut package = Package::new(parent, name);
    package.manifest(manifest);
    if let Some(crate_name) = crate_name {
        package.library(library(crate_name));
    }
    package.create().unwrap_or_else(|err| panic!("{err}"))
}

/// A shipped plugin's package (`plugins/<dir>`): its real `compressors.toml` and its library,
/// laid out as `parent/<dir>`.
pub fn shipped_package(parent: &Path, dir: &str, crate_name: &str) -> PathBuf {
    shipped_package_as(parent, dir, dir, crate_name)
}

/// [`shipped_package`], laid out under another folder name.
pub fn shipped_package_as(parent: &Path, dir: &str, name: &str, crate_name: &str) -> PathBuf {
    Package::new(parent, name)
        .library(library(crate_name))
        .manifest_file(plugin_source(dir).join("compressors.toml"))
        .create()
        .unwrap_or_else(|err| panic!("{err}"))
}

pub use parrot_codec_test::plugin_manifest;

/// A host with a memory tee store whose only plugin source is one package `plugins/<name>` in a
/// fresh project: the library `crate_name`, declared with `entries` (manifest text).
pub fn one_package_host(
    crate_name: &str,
    name: &str,
    entries: &str,
) -> Result<(tempfile::TempDir, parrot_host::Host), parrot_host::BuildError> {
    let dir = tempfile::tempdir().expect("temp dir");
    let plugins = dir.path().join("plugins");
    package(
        &plugins,
        name,
        Some(crate_name),
        &plugin_manifest(crate_name, entries),
    );
    let host = parrot_host::Host::builder()
        .project(dir.path())
        .plugin_path(None)
        .plugin_dir(&plugins)
        .tee_store(std::sync::Arc::new(parrot_host::MemoryTeeStore::default()))
        .build()?;
    Ok((dir, host))
}

/// `len` bytes that no compressor would guess, the same for the same seed.
pub fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut state = seed | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}

/// A program a group of tests drives, and how a person gets it.
pub struct Component {
    /// The program, run as `program --version` to see that it is there.
    pub program: &'static str,
    /// The tests that need it, as the failure names them.
    pub needed_by: &'static str,
    /// How to install it by hand where `cargo xtask test` cannot.
    pub by_hand: &'static str,
}

/// `redis-server`, which the Redis tee store's tests start on a free loopback port.
pub const REDIS_SERVER: Component = Component {
    program: "redis-server",
    needed_by: "the Redis tee store's tests",
    by_hand: "apt-get install redis-server (Debian, as root)",
};

/// `python3`, which runs the mcp-proxy tests' scripted server and makes the serve tests' venv.
pub const PYTHON3: Component = Component {
    program: "python3",
    needed_by: "the mcp-proxy and serve tests",
    by_hand: "apt-get install python3 python3-venv (Debian)",
};

/// `node`, which runs the real MCP server and client.
pub const NODE: Component = Component {
    program: "node",
    needed_by: "the mcp-proxy tests with the real MCP server and client",
    by_hand: "Node.js 20 with npm, from nodejs.org or the system's packages",
};

/// `npm`, which installs the pinned packages of `tests/mcp` and `tests/claude`.
pub const NPM: Component = Component {
    program: "npm",
    needed_by: "the mcp-proxy and claude_code tests",
    by_hand: "Node.js 20 with npm, from nodejs.org or the system's packages",
};

/// Fails the test at once, naming `component` and how to get it, when `component.program
/// --version` does not run: a missing program would otherwise show as a timeout or a proxy's
/// error far from its cause. Checked once per program per test binary.
pub fn require(component: &Component) {
    static CHECKED: Mutex<BTreeMap<&str, Result<(), String>>> = Mutex::new(BTreeMap::new());
    let found = CHECKED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(component.program)
        .or_insert_with(
            || match Command::new(component.program).arg("--version").output() {
                Ok(out) if out.status.success() => Ok(()),
                Ok(out) => Err(format!(
                    "`{} --version` failed ({})",
                    component.program, out.status
                )),
                Err(err) => Err(format!("cannot run {}: {err}", component.program)),
            },
        )
        .clone();
    if let Err(why) = found {
        panic!(
            "{} is missing ({why}): {} need it. `cargo xtask test` installs what the tests need \
             where it can and then runs them; otherwise install it: {}",
            component.program, component.needed_by, component.by_hand
        );
    }
}

/// A pointed payload read back, in either form (CONTRACT §5): a JSON object's `_tee` member
/// (`{"result": …, "_tee": …}` or an object's last member), or a text's last line.
#[derive(Debug)]
pub struct Pointed {
    /// What the model reads besides the pointer: the `result` string of a wrapper, the text
    /// before the pointer line, or the JSON text of anything else.
    pub text: String,
    /// The key the pointer names.
    pub key: String,
    /// `lossy`, `lossless` or `cut`.
    pub reason: String,
}

/// The pointer of `payload` and what it points from, or `None` when it carries none.
pub fn pointed(payload: &str) -> Option<Pointed> {
    if let Some((text, key)) = parrot_host::split_text_pointer(payload) {
        let line = &payload[text.len() + 1..];
        let reason = line
            .split(" returns the original of this ")
            .nth(1)?
            .split(' ')
            .next()?
            .to_owned();
        return Some(Pointed {
            text: text.to_owned(),
            key,
            reason,
        });
    }
    let value: serde_json::Value = serde_json::from_str(payload).ok()?;
    let tee = value.get("_tee")?;
    let text = match value.get("result") {
        Some(serde_json::Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
        None => payload.to_owned(),
    };
    Some(Pointed {
        text,
        key: tee["key"].as_str()?.to_owned(),
        reason: tee["reason"].as_str()?.to_owned(),
    })
}

/// The built-in codecs' names, in name order, as the registry of built-ins holds them: the
/// tests that list every built-in build the list from here, so that a built-in added needs no
/// test edited.
pub fn builtin_names() -> Vec<&'static str> {
    parrot_codecs::builtins()
        .into_iter()
        .map(|builtin| builtin.meta.name())
        .collect()
}

/// What a message about an unknown codec in a manifest lists as known with the built-ins
/// alone: `auto`, then every built-in.
pub fn known_codecs() -> String {
    std::iter::once("auto")
        .chain(builtin_names())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The candidate list `key` (`rows`, `object`, `text`, `log`, `file`) of the core manifest's
/// `"*"` entry, parsed from the manifest the host compiles in: the one place the routing
/// defaults are written.
pub fn core_list(key: &str) -> Vec<String> {
    let (core, errors) = parrot_host::manifest::validate(
        parrot_host::manifest::CORE_MANIFEST_NAME,
        parrot_host::manifest::SourceKind::Core,
        parrot_host::manifest::CORE_MANIFEST,
    );
    assert!(errors.is_empty(), "{errors:?}");
    let core = core.expect("the core manifest parses");
    let entry = core
        .entries
        .iter()
        .find(|entry| entry.key == "*")
        .expect("the core entry \"*\"");
    entry.params[key]
        .as_array()
        .unwrap_or_else(|| panic!("core.toml: no list \"{key}\""))
        .iter()
        .map(|name| name.as_str().expect("a codec name").to_owned())
        .collect()
}

/// The lines `explain`, `check` and `plugins` print for the core entry's routes (each under
/// `indent`): the candidate lists read from the core manifest, the rest as the router writes it.
pub fn core_routes(indent: &str) -> String {
    let list = |key: &str| {
        let names = core_list(key);
        if names.is_empty() {
            "none (passes through)".to_owned()
        } else {
            names.join(", ")
        }
    };
    [
        format!("rows:   {} (at minimal, lossless)", list("rows")),
        format!("object: {} (at minimal, lossless)", list("object")),
        format!(
            "text:   {} (listings, search hits, tables, VCS output, text with no log signal; \
             at minimal, lossless)",
            list("text")
        ),
        format!("log:    {} (logs, at the call's level)", list("log")),
        format!(
            "file:   {} (file contents: numbered reads, source, configuration, structured text; \
             at minimal, lossless)",
            list("file")
        ),
        "mcp:    each text block routed as above; isError results pass through".to_owned(),
        "fewest tokens wins; from 65,536 bytes on, rows are chosen on a sample of 32 rows, \
         16,384 bytes at most"
            .to_owned(),
    ]
    .iter()
    .map(|line| format!("{indent}{line}\n"))
    .collect()
}
