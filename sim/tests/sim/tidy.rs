//! Tidy checks of the source tree (rust-analyzer keeps the same kind in `xtask/tests/tidy.rs`):
//! the boundaries ARCHITECTURE.md states, checked rather than hoped for. A failure names the file
//! and what to change.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace")
        .to_path_buf()
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).expect("readable source dir") {
            let p = entry.expect("a dir entry").path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|e| e == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The text of a file before its unit tests (`#[cfg(test)]` at the start of a line).
fn non_test(text: &str) -> &str {
    match text.find("\n#[cfg(test)]") {
        Some(i) => &text[..i],
        None => text,
    }
}

/// `text` without comment lines (doc links name modules without importing them).
fn without_comments(text: &str) -> String {
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The module path of a source file of a crate rooted at `src` (`display::check`; the root is
/// the empty path).
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).expect("under src");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

fn ident_end(s: &str) -> usize {
    s.find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len())
}

/// The module paths a file names through `crate::` and `super::` (grouped imports included),
/// resolved to absolute paths.
fn referenced_paths(module: &[String], is_mod_rs: bool, text: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for (at, _) in text
        .match_indices("crate::")
        .chain(text.match_indices("super::"))
    {
        let before = text[..at].chars().last();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let mut base: Vec<String> = module.to_vec();
        let mut rest = &text[at..];
        if rest.starts_with("crate::") {
            base.clear();
            rest = &rest["crate::".len()..];
        } else {
            // `super` of `a/b.rs` is `a`; of `a/b/mod.rs` (module `a::b`) it is `a` too.
            let _ = is_mod_rs;
            base.pop();
            rest = &rest["super::".len()..];
            while let Some(r) = rest.strip_prefix("super::") {
                base.pop();
                rest = r;
            }
        }
        collect_paths(base, rest, &mut out);
    }
    out
}

/// `rest` follows `base::`: a path (`a::b::C`) or a group (`{a::B, c}`).
fn collect_paths(base: Vec<String>, rest: &str, out: &mut Vec<Vec<String>>) {
    if let Some(group) = rest.strip_prefix('{') {
        let mut depth = 0;
        let mut start = 0;
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    collect_paths(base.clone(), group[start..i].trim(), out);
                    return;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    collect_paths(base.clone(), group[start..i].trim(), out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        return;
    }
    let mut path = base;
    let mut rest = rest;
    loop {
        let n = ident_end(rest);
        if n == 0 {
            break;
        }
        path.push(rest[..n].to_string());
        rest = &rest[n..];
        match rest.strip_prefix("::") {
            Some(r) if r.starts_with('{') => return collect_paths(path, r, out),
            Some(r) => rest = r,
            None => break,
        }
    }
    out.push(path);
}

/// Module -> the modules it depends on, among `modules`, leaving out its own ancestors (a child
/// naming what its parent re-exports is not a cycle) and itself.
fn module_graph(src: &Path) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let files = rust_files(src);
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(src, f)).collect();
    let mut graph = BTreeMap::new();
    for f in &files {
        let module = module_of(src, f);
        let text = std::fs::read_to_string(f).expect("readable source");
        let is_mod = f.file_name().is_some_and(|n| n == "mod.rs");
        let mut deps = BTreeSet::new();
        for path in referenced_paths(&module, is_mod, &without_comments(non_test(&text))) {
            // The longest prefix of the path that is a module file.
            let target = (1..=path.len())
                .rev()
                .map(|n| path[..n].to_vec())
                .find(|p| modules.contains(p));
            if let Some(t) = target {
                if t != module && !module.starts_with(&t) {
                    deps.insert(t);
                }
            }
        }
        graph.insert(module, deps);
    }
    graph
}

/// One cycle of `graph`, if it has any.
fn find_cycle(graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Option<Vec<String>> {
    fn visit(
        node: &Vec<String>,
        graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        state: &mut BTreeMap<Vec<String>, u8>,
        stack: &mut Vec<Vec<String>>,
    ) -> Option<Vec<String>> {
        state.insert(node.clone(), 1);
        stack.push(node.clone());
        for next in graph.get(node).into_iter().flatten() {
            match state.get(next).copied() {
                Some(1) => {
                    let from = stack.iter().position(|n| n == next).unwrap_or(0);
                    let mut cycle: Vec<String> =
                        stack[from..].iter().map(|m| m.join("::")).collect();
                    cycle.push(next.join("::"));
                    return Some(cycle);
                }
                Some(_) => {}
                None => {
                    if let Some(c) = visit(next, graph, state, stack) {
                        return Some(c);
                    }
                }
            }
        }
        stack.pop();
        state.insert(node.clone(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for node in graph.keys() {
        if !state.contains_key(node) {
            if let Some(c) = visit(node, graph, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn no_module_import_cycle_in_sim_history_or_model() {
    for krate in ["sim", "history", "model"] {
        let graph = module_graph(&workspace().join(krate).join("src"));
        assert!(graph.len() > 10, "{krate}: the module graph was not read");
        if let Some(cycle) = find_cycle(&graph) {
            panic!(
                "{krate}: modules import each other in a cycle: {}; move what both need into a third module",
                cycle.join(" -> ")
            );
        }
    }
}

#[test]
fn the_cycle_finder_finds_a_planted_cycle() {
    let m = |s: &str| vec![s.to_string()];
    let mut graph = BTreeMap::new();
    graph.insert(m("a"), BTreeSet::from([m("b")]));
    graph.insert(m("b"), BTreeSet::from([m("c")]));
    graph.insert(m("c"), BTreeSet::from([m("a")]));
    assert_eq!(
        find_cycle(&graph),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
    graph.insert(m("c"), BTreeSet::new());
    assert_eq!(find_cycle(&graph), None);
}

#[test]
fn grouped_and_relative_imports_resolve_to_modules() {
    let module = vec!["display".to_string(), "check".to_string()];
    let paths = referenced_paths(
        &module,
        false,
        "use super::{faults::FaultPlan, world::{Read, Emitted}};\nuse crate::outcome::Violation;",
    );
    let joined: Vec<String> = paths.iter().map(|p| p.join("::")).collect();
    assert!(
        joined.contains(&"display::faults::FaultPlan".to_string()),
        "{joined:?}"
    );
    assert!(
        joined.contains(&"display::world::Read".to_string()),
        "{joined:?}"
    );
    assert!(
        joined.contains(&"outcome::Violation".to_string()),
        "{joined:?}"
    );
}

/// Lines of each function in `text` (a line `fn ...` to the `}` at its indentation).
fn function_lengths(text: &str) -> Vec<(String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let sig = trimmed
            .trim_start_matches("pub(crate) ")
            .trim_start_matches("pub(super) ")
            .trim_start_matches("pub ")
            .trim_start_matches("const ")
            .trim_start_matches("async ")
            .trim_start_matches("unsafe ");
        let Some(rest) = sig.strip_prefix("fn ") else {
            continue;
        };
        let name = rest[..ident_end(rest)].to_string();
        let close = format!("{}}}", " ".repeat(indent));
        if let Some(end) = lines[i..].iter().position(|l| *l == close) {
            out.push((name, end + 1));
        }
    }
    out
}

/// What breaks the size rules in the folder `dir`: a file over 600 lines of non-test code, a
/// function over 70 lines. Problems name the file from the workspace root.
fn size_problems(dir: &Path) -> Vec<String> {
    let root = workspace();
    let mut problems = Vec::new();
    for f in rust_files(dir) {
        let text = std::fs::read_to_string(&f).expect("readable");
        let code = non_test(&text);
        let rel = f
            .strip_prefix(&root)
            .expect("under the workspace")
            .display()
            .to_string();
        let lines = code.lines().count();
        if lines > 600 {
            problems.push(format!(
                "{rel}: {lines} lines of non-test code (at most 600: split it by concept)"
            ));
        }
        for (name, n) in function_lengths(code) {
            if n > 70 {
                problems.push(format!(
                    "{rel}: fn {name} has {n} lines (at most 70: split it into named steps)"
                ));
            }
        }
    }
    problems
}

/// The folders the size rules cover: the code of sim, history and model (`src/`), their
/// benches and examples, and the fuzz targets. Test code (`tests/` folders, `#[cfg(test)]`
/// modules) stays out, as it may hold long tables of cases.
fn sized_folders() -> Vec<PathBuf> {
    let root = workspace();
    let mut folders = Vec::new();
    for krate in ["sim", "history", "model"] {
        folders.push(root.join(krate).join("src"));
        for optional in ["benches", "examples"] {
            let dir = root.join(krate).join(optional);
            if dir.is_dir() {
                folders.push(dir);
            }
        }
    }
    for optional in ["fuzz_targets", "src"] {
        let dir = root.join("fuzz").join(optional);
        if dir.is_dir() {
            folders.push(dir);
        }
    }
    folders
}

#[test]
fn files_and_functions_stay_small_in_sim_history_and_model() {
    let folders = sized_folders();
    for must in [
        "sim/benches",
        "history/benches",
        "history/examples",
        "fuzz/fuzz_targets",
    ] {
        assert!(
            folders.contains(&workspace().join(must)),
            "{must} is not read by the size rules"
        );
    }
    let problems: Vec<String> = folders.iter().flat_map(|d| size_problems(d)).collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn model_depends_on_nothing_of_ours_and_history_neither_on_sim_nor_model() {
    // A crate cannot name another that is not in its [dependencies], so the manifests decide.
    let manifest = |k: &str| {
        std::fs::read_to_string(workspace().join(k).join("Cargo.toml")).expect("manifest")
    };
    let deps = |m: &str| {
        let start = m.find("[dependencies]").map_or(m.len(), |i| i);
        let section = &m[start..];
        let end = section[1..].find("\n[").map_or(section.len(), |i| i + 1);
        section[..end].to_string()
    };
    let model = deps(&manifest("model"));
    for ours in ["history", "sim"] {
        assert!(
            !model.contains(&format!("\n{ours}")),
            "model depends on {ours}"
        );
    }
    let history = deps(&manifest("history"));
    for ours in ["sim", "model"] {
        assert!(
            !history.contains(&format!("\n{ours}")),
            "history depends on {ours}"
        );
    }
}

/// The modules of `graph` inside `from` that depend on a module inside `to`.
fn crossings(
    graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
    from: &[&str],
    to: &[&str],
) -> Vec<String> {
    let inside = |m: &[String], dir: &[&str]| m.len() >= dir.len() && m[..dir.len()] == *dir;
    graph
        .iter()
        .filter(|(m, _)| inside(m, from))
        .flat_map(|(m, deps)| {
            deps.iter()
                .filter(|d| inside(d, to))
                .map(move |d| format!("{} -> {}", m.join("::"), d.join("::")))
        })
        .collect()
}

#[test]
fn the_runs_phases_stay_apart() {
    let graph = module_graph(&workspace().join("sim").join("src"));
    for phase in ["generate", "play", "check"] {
        assert!(
            graph
                .keys()
                .any(|m| m.len() > 2 && m[..2] == ["runs", phase]),
            "runs::{phase} has no module: the graph was not read"
        );
    }
    // Play appends observations and check reads them: neither names the other, and the
    // generator names neither (what all three share sits at the top of `runs/`).
    let mut problems = Vec::new();
    for (from, to) in [
        ("play", "check"),
        ("check", "play"),
        ("generate", "play"),
        ("generate", "check"),
    ] {
        problems.extend(crossings(&graph, &["runs", from], &["runs", to]));
    }
    assert!(
        problems.is_empty(),
        "a phase of the runs workload imports another (move what both need to the top of sim/src/runs/): {}",
        problems.join(", ")
    );
}

#[test]
fn the_workloads_import_each_other_nowhere() {
    // Each workload's folder holds its own world, model and checks; what two share (a strip
    // of journal bytes, a transport, a store kind) sits in a module of its own outside both,
    // so a workload can change without reading another.
    let graph = module_graph(&workspace().join("sim").join("src"));
    let workloads = ["display", "journal", "merge", "runs", "spool"];
    for w in workloads {
        assert!(
            graph.keys().any(|m| m.len() > 1 && m[0] == w),
            "{w} has no module: the graph was not read"
        );
    }
    let mut problems = Vec::new();
    for from in workloads {
        for to in workloads.iter().filter(|&&to| to != from) {
            problems.extend(crossings(&graph, &[from], &[to]));
        }
    }
    assert!(
        problems.is_empty(),
        "a workload imports another (move what both need out of both folders, e.g. into sim/src/picture/ or a module at the top of sim/src/): {}",
        problems.join(", ")
    );
}

#[test]
fn a_crossing_between_phases_is_found() {
    let m = |s: &str| s.split("::").map(str::to_string).collect::<Vec<_>>();
    let mut graph = BTreeMap::new();
    graph.insert(m("runs::play::tap"), BTreeSet::from([m("runs::record")]));
    assert!(crossings(&graph, &["runs", "play"], &["runs", "check"]).is_empty());
    graph.insert(
        m("runs::play::client"),
        BTreeSet::from([m("runs::check::truth")]),
    );
    assert_eq!(
        crossings(&graph, &["runs", "play"], &["runs", "check"]),
        ["runs::play::client -> runs::check::truth"]
    );
}

#[test]
fn the_sut_transport_imports_no_workload() {
    // `sut` is the transport every workload's boundary uses: a workload imports it, never the
    // other way (a workload's served system lives in its own folder; what the client and the
    // workloads share, such as `StoreKind`, in a module of its own).
    let graph = module_graph(&workspace().join("sim").join("src"));
    let sut: Vec<(&Vec<String>, &BTreeSet<Vec<String>>)> = graph
        .iter()
        .filter(|(module, _)| module.first().is_some_and(|m| m == "sut"))
        .collect();
    assert!(sut.len() > 5, "the sut modules were not read");
    let workloads = [
        "display",
        "runs",
        "journal",
        "merge",
        "spool",
        "live",
        "run",
        "workload",
        "workload_items",
        "registry",
    ];
    let wrong: Vec<String> = sut
        .iter()
        .flat_map(|(module, deps)| {
            deps.iter()
                .filter(|dep| workloads.contains(&dep[0].as_str()))
                .map(move |dep| format!("{} imports {}", module.join("::"), dep.join("::")))
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
