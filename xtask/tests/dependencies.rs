//! The workspace's dependency graph, as `cargo metadata` resolves it: which crate may depend on
//! which. A store is built on the tee interface alone, so a program that keeps its originals in
//! SQLite or Redis compiles no codec; the command depends on no test support.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// The workspace's resolved graph: each package's name by id, each id's normal (not dev, not
/// build) dependencies, and each package's dev-dependencies as its manifest declares them.
struct Graph {
    names: HashMap<String, String>,
    normal: HashMap<String, Vec<String>>,
    dev: HashMap<String, BTreeSet<String>>,
}

impl Graph {
    fn read() -> Graph {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let out = Command::new(cargo)
            .current_dir(&root)
            .args(["metadata", "--format-version", "1"])
            .output()
            .expect("cargo metadata runs");
        assert!(
            out.status.success(),
            "cargo metadata: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let metadata: Value = serde_json::from_slice(&out.stdout).expect("cargo metadata's JSON");
        let names = metadata["packages"]
            .as_array()
            .expect("packages")
            .iter()
            .map(|package| {
                let id = package["id"].as_str().expect("an id").to_owned();
                (id, package["name"].as_str().expect("a name").to_owned())
            })
            .collect();
        let dev = metadata["packages"]
            .as_array()
            .expect("packages")
            .iter()
            .map(|package| {
                let declared = package["dependencies"]
                    .as_array()
                    .expect("dependencies")
                    .iter()
                    .filter(|dep| dep["kind"] == "dev")
                    .map(|dep| dep["name"].as_str().expect("a name").to_owned())
                    .collect();
                (
                    package["name"].as_str().expect("a name").to_owned(),
                    declared,
                )
            })
            .collect();
        let normal = metadata["resolve"]["nodes"]
            .as_array()
            .expect("the resolved nodes")
            .iter()
            .map(|node| {
                let deps = node["deps"]
                    .as_array()
                    .expect("deps")
                    .iter()
                    .filter(|dep| {
                        dep["dep_kinds"]
                            .as_array()
                            .is_some_and(|kinds| kinds.iter().any(|kind| kind["kind"].is_null()))
                    })
                    .map(|dep| dep["pkg"].as_str().expect("a package id").to_owned())
                    .collect();
                (node["id"].as_str().expect("an id").to_owned(), deps)
            })
            .collect();
        Graph { names, normal, dev }
    }

    fn id(&self, name: &str) -> &str {
        self.names
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(id, _)| id.as_str())
            .unwrap_or_else(|| panic!("no package {name} in the workspace"))
    }

    /// The names of the packages `name` depends on directly, normal dependencies only.
    fn direct(&self, name: &str) -> BTreeSet<&str> {
        self.normal[self.id(name)]
            .iter()
            .map(|id| self.names[id].as_str())
            .collect()
    }

    /// The names of every package `name` pulls in through normal dependencies, itself included.
    fn reached(&self, name: &str) -> BTreeSet<&str> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![self.id(name)];
        while let Some(id) = stack.pop() {
            if seen.insert(self.names[id].as_str()) {
                stack.extend(self.normal[id].iter().map(String::as_str));
            }
        }
        seen
    }
}

#[test]
fn the_persistent_stores_depend_on_the_tee_interface_and_no_codec() {
    let graph = Graph::read();
    for store in ["parrot-tee-sqlite", "parrot-tee-redis", "parrot-tee"] {
        let reached = graph.reached(store);
        let parrot: Vec<&str> = reached
            .iter()
            .copied()
            .filter(|name| name.starts_with("parrot-"))
            .collect();
        for core in [
            "parrot-host",
            "parrot-codecs",
            "parrot-codec-api",
            "parrot-bpe",
        ] {
            assert!(
                !reached.contains(core),
                "{store} pulls in {core}: {parrot:?}"
            );
        }
        assert!(
            !reached.contains("abi_stable"),
            "{store} pulls in abi_stable"
        );
    }
    assert!(graph.direct("parrot-tee-sqlite").contains("parrot-tee"));
    assert!(graph.direct("parrot-tee-redis").contains("parrot-tee"));
}

#[test]
fn the_command_depends_on_no_test_support_and_no_store_it_does_not_use() {
    let graph = Graph::read();
    let direct = graph.direct("parrot-compress");
    for unused in ["parrot-codec-test", "parrot-tee-sqlite", "tracing"] {
        assert!(
            !direct.contains(unused),
            "parrot-compress depends on {unused}: {direct:?}"
        );
    }
    assert!(
        !graph
            .reached("parrot-compress")
            .contains("parrot-codec-test"),
        "parrot-compress pulls in the codec test support"
    );
}

#[test]
fn the_hosts_benchmarks_do_not_reach_up_into_the_stores() {
    let graph = Graph::read();
    let dev = &graph.dev["parrot-host"];
    assert!(dev.contains("criterion"), "the host's benchmarks: {dev:?}");
    for store in ["parrot-tee-sqlite", "parrot-tee-redis"] {
        assert!(!dev.contains(store), "parrot-host's benchmarks use {store}");
    }
}
