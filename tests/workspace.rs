//! The workspace's shape: the crates depend on each other bottom-up (the
//! engine on none of them, the CLI and the wheel on top), each crate's
//! modules import each other without cycles, and the engine's default
//! dependency tree holds no CLI or network crate.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::cycles::cycle;
use crate::util::workspace_dir;

/// The workspace's crates, bottom-up: each may depend only on crates
/// before it.
const LAYERS: &[&str] = &[
    "robofilter-scan",
    "robofilter",
    "robofilter-io",
    "robofilter-sources",
    "robofilter-frontier",
    "robofilter-arrow",
    "robofilter-columnar",
    "robofilter-fetch",
    "robofilter-audit",
    "robofilter-cli",
    "robofilter-python",
];

/// `cargo metadata` of the workspace, without dependencies' own.
fn metadata() -> serde_json::Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline"])
        .current_dir(workspace_dir())
        .output()
        .expect("cargo metadata runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Each workspace crate's name -> (its directory, the workspace crates
/// it depends on, dev-dependencies left out).
fn crates() -> BTreeMap<String, (PathBuf, BTreeSet<String>)> {
    let meta = metadata();
    let packages = meta["packages"].as_array().unwrap();
    let names: BTreeSet<String> = packages
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect();
    packages
        .iter()
        .map(|p| {
            let name = p["name"].as_str().unwrap().to_string();
            let manifest = PathBuf::from(p["manifest_path"].as_str().unwrap());
            let deps = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["kind"].is_null())
                .map(|d| d["name"].as_str().unwrap().to_string())
                .filter(|d| names.contains(d))
                .collect();
            (name, (manifest.parent().unwrap().to_path_buf(), deps))
        })
        .collect()
}

#[test]
fn crates_depend_on_each_other_bottom_up() {
    let crates = crates();
    let found: BTreeSet<&str> = crates.keys().map(String::as_str).collect();
    let want: BTreeSet<&str> = LAYERS.iter().copied().collect();
    assert_eq!(
        found, want,
        "a crate was added or renamed: place it in LAYERS"
    );
    for (name, (_, deps)) in &crates {
        let at = LAYERS.iter().position(|l| l == name).unwrap();
        for dep in deps {
            let dep_at = LAYERS.iter().position(|l| l == dep).unwrap();
            assert!(
                dep_at < at,
                "{name} depends on {dep}, which sits above it"
            );
        }
    }
    // The engine stands alone: only the line classifier is below it.
    let engine = &crates["robofilter"].1;
    assert_eq!(engine, &BTreeSet::from(["robofilter-scan".to_string()]));
    // The wheel is glue over the crates the CLI uses, never the CLI.
    assert!(!crates["robofilter-python"].1.contains("robofilter-cli"));
}

/// The `crate::` paths of a crate's modules, by module (`crate` for the
/// root): an edge to every module named.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    let module = |path: &Path| -> String {
        let rel = path.strip_prefix(src).unwrap().with_extension("");
        let mut parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if parts.last().is_some_and(|p| p == "mod") {
            parts.pop();
        }
        match parts.as_slice() {
            [one] if one == "lib" || one == "main" => "crate".to_string(),
            _ => parts.join("::"),
        }
    };
    let known: BTreeSet<String> = files.iter().map(|f| module(f)).collect();
    let mut graph = BTreeMap::new();
    for file in &files {
        let me = module(file);
        let text = std::fs::read_to_string(file).unwrap();
        let mut out = BTreeSet::new();
        for line in text.lines().filter(|l| !l.trim_start().starts_with("//"))
        {
            let mut rest = line;
            while let Some(at) = rest.find("crate::") {
                rest = &rest[at + "crate::".len()..];
                let names: Vec<&str> = match rest.strip_prefix('{') {
                    Some(list) => list
                        .split(['}', ','])
                        .map(|s| s.trim().split("::").next().unwrap_or(""))
                        .collect(),
                    None => vec![
                        rest.split(|c: char| {
                            !(c.is_alphanumeric() || c == '_')
                        })
                        .next()
                        .unwrap_or(""),
                    ],
                };
                for n in names {
                    if known.contains(n) && n != me && n != "crate" {
                        out.insert(n.to_string());
                    }
                }
            }
        }
        graph.insert(me, out);
    }
    graph
}

#[test]
fn every_crate_s_modules_import_without_cycles() {
    for (name, (dir, _)) in crates() {
        let graph = module_graph(&dir.join("src"));
        assert!(!graph.is_empty(), "{name}: no modules found");
        if let Some(c) = cycle(&graph) {
            panic!("{name}: import cycle {c}");
        }
    }
}

#[test]
fn the_cycle_finder_finds_a_cycle() {
    let g = BTreeMap::from([
        ("a".to_string(), BTreeSet::from(["b".to_string()])),
        ("b".to_string(), BTreeSet::from(["a".to_string()])),
    ]);
    assert_eq!(cycle(&g).as_deref(), Some("a -> b -> a"));
}

/// The crates a package's normal dependency tree holds, with its default
/// features.
fn dependency_tree(package: &str) -> BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["tree", "-p", package, "-e", "normal", "--prefix", "none"])
        .args(["--format", "{p}", "--offline"])
        .current_dir(workspace_dir())
        .output()
        .expect("cargo tree runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.split(' ').next())
        .map(str::to_string)
        .collect()
}

/// What a crawler that embeds the engine must not pull in.
const NOT_IN_THE_ENGINE: &[&str] =
    &["tokio", "reqwest", "hyper", "clap", "indicatif"];

#[test]
fn the_engine_default_tree_has_no_cli_or_network_crate() {
    let tree = dependency_tree("robofilter");
    for bad in NOT_IN_THE_ENGINE {
        assert!(
            !tree.contains(*bad),
            "the engine's tree holds {bad}: {tree:?}"
        );
    }
    // The same check finds them where they are.
    let fetch = dependency_tree("robofilter-fetch");
    for crate_ in ["tokio", "reqwest", "hyper", "indicatif"] {
        assert!(fetch.contains(crate_), "robofilter-fetch without {crate_}?");
    }
}

/// No source file is over 1,500 lines (tests aside): a file that long
/// holds more than one concept.
#[test]
fn no_source_file_is_over_1500_lines() {
    let root = workspace_dir();
    let mut dirs: Vec<PathBuf> =
        crates().into_values().map(|(dir, _)| dir.join("src")).collect();
    dirs.push(root.join("tools/compare/src"));
    let mut long = Vec::new();
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs")
                && !path.ends_with("tests.rs")
            {
                let n =
                    std::fs::read_to_string(&path).unwrap().lines().count();
                if n > 1500 {
                    long.push(format!("{} ({n} lines)", path.display()));
                }
            }
        }
    }
    assert!(long.is_empty(), "split these: {long:?}");
}
