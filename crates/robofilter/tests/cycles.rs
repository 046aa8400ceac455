//! Finding an import cycle in a module graph: the engine's module-graph
//! test and the CLI's workspace test (which includes this file by path)
//! share it.

use std::collections::{BTreeMap, BTreeSet};

/// The first import cycle of `graph`, if any.
pub fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<String> {
    fn visit<'a>(
        n: &'a str,
        g: &'a BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<&'a str, u8>,
        path: &mut Vec<&'a str>,
    ) -> Option<String> {
        match state.get(n) {
            Some(2) => return None,
            Some(1) => {
                let from = path.iter().position(|m| *m == n).unwrap();
                return Some(format!("{} -> {n}", path[from..].join(" -> ")));
            }
            _ => {}
        }
        state.insert(n, 1);
        path.push(n);
        for m in g.get(n).into_iter().flatten() {
            if let Some(c) = visit(m, g, state, path) {
                return Some(c);
            }
        }
        path.pop();
        state.insert(n, 2);
        None
    }
    let mut state = BTreeMap::new();
    graph.keys().find_map(|n| visit(n, graph, &mut state, &mut Vec::new()))
}
