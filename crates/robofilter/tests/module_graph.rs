//! The library's module graph: no cycles, and the bottom layer imports
//! nothing of ours (issue 11, part A).
//!
//! Every `crate::a::b` path in a library file (in `use` lines and in code)
//! is an edge from that file's module to module `a` (or `a::b` when that is
//! a file of its own). Re-exports from the crate root do not count as a
//! way around it: a path through the root (`crate::Verdict`) is an edge to
//! the root, which imports everything, so it would show up as a cycle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Module name (`rules`, `dfa::build`, `crate` for lib.rs) -> file.
fn modules() -> BTreeMap<String, PathBuf> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = BTreeMap::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if !path.ends_with("bin") {
                    stack.push(path);
                }
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(&src).unwrap().with_extension("");
            let mut parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if parts.last().is_some_and(|p| p == "mod") {
                parts.pop();
            }
            let name = if parts == ["lib"] {
                "crate".to_string()
            } else {
                parts.join("::")
            };
            out.insert(name, path);
        }
    }
    out
}

/// The modules `text` (module `me`) refers to through `crate::` paths,
/// grouped `use crate::{a, b::c}` lists included.
fn edges(me: &str, text: &str, known: &BTreeSet<String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    // Only code: drop comments (doc links are not imports).
    let code: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut rest = &code[..];
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        let names: Vec<String> = if let Some(list) = rest.strip_prefix('{') {
            let end = list.find('}').unwrap_or(list.len());
            list[..end]
                .split(',')
                .map(|s| s.trim().split("::").next().unwrap_or("").to_string())
                .collect()
        } else {
            let seg: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            let mut it = seg.split("::");
            let first = it.next().unwrap_or("").to_string();
            match it.next() {
                Some(second)
                    if known.contains(&format!("{first}::{second}")) =>
                {
                    vec![format!("{first}::{second}")]
                }
                _ => vec![first],
            }
        };
        for n in names {
            let target =
                if known.contains(&n) { n } else { "crate".to_string() };
            if target != me && !me.starts_with(&format!("{target}::")) {
                out.insert(target);
            }
        }
    }
    out
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let mods = modules();
    let known: BTreeSet<String> = mods.keys().cloned().collect();
    mods.iter()
        .map(|(name, path)| {
            let text = std::fs::read_to_string(path).unwrap();
            (name.clone(), edges(name, &text, &known))
        })
        .collect()
}

#[test]
fn the_library_module_graph_has_no_cycles() {
    let g = graph();
    assert!(g.len() > 10, "found only {:?}", g.keys());
    if let Some(cycle) = crate::cycles::cycle(&g) {
        panic!("import cycle: {cycle}");
    }
}

#[test]
fn the_bottom_layer_imports_nothing_of_ours() {
    let g = graph();
    for m in ["kind", "dialect", "verdict"] {
        assert_eq!(g[m], BTreeSet::new(), "{m} imports {:?}", g[m]);
    }
    // The errors name only what an input was (a refused kind).
    assert_eq!(g["error"], BTreeSet::from(["kind".to_string()]));
    // The format's one home depends only on the errors it reports and on
    // the magic octets, which `kind` holds for every format.
    assert_eq!(
        g["wire"],
        BTreeSet::from(["error".to_string(), "kind".to_string()])
    );
    // The bundle reader does not build, and the access policy of fetch outcomes is apart from it.
    for (m, never) in [
        ("bundle", "bundle_build"),
        ("bundle", "compile"),
        ("access", "bundle"),
    ] {
        assert!(!g[m].contains(never), "{m} imports {never}");
    }
}

#[test]
fn the_graph_reader_sees_a_cycle_when_there_is_one() {
    // The checker itself, on a made-up pair: a -> b -> a.
    let known: BTreeSet<String> =
        ["a", "b"].iter().map(|s| s.to_string()).collect();
    assert!(edges("a", "use crate::b::X;", &known).contains("b"));
    assert!(edges("b", "use crate::{a, c};", &known).contains("a"));
    assert!(
        edges("b", "fn f() { crate::Verdict::Allow }", &known)
            .contains("crate")
    );
    assert!(edges("b", "// use crate::a;", &known).is_empty());
}
