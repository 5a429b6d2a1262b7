//! The layers of the crates, as code: a crate's `layers.txt` (the library's, the command's and
//! the Criterion drop-in's) orders its top-level modules, and every `crate::` path in its
//! sources must point to a lower layer. A cycle between top-level modules, or a new module
//! missing from the table, fails here. Below the top, in every crate of the workspace, no
//! module uses a sibling that uses it back, directly or through others (`super::peer`,
//! `crate::a::b::peer`): a circle between the files of a folder fails here too.
//!
//! Comments are left out (a doc link may point anywhere); `#[cfg(test)]` modules at the end of
//! a file, and those in a file of their own (`tests.rs`), are left out too (a unit test may
//! build its input with a higher layer's helpers).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Each module's layer, from `layers.txt`, and the modules written `name/*` there: those whose
/// own modules are peers (one command does not use another).
fn layers(krate: &Path) -> (BTreeMap<String, usize>, BTreeSet<String>) {
    let text = fs::read_to_string(krate.join("layers.txt")).expect("layers.txt");
    let mut layer = BTreeMap::new();
    let mut peers_inside = BTreeSet::new();
    for (i, line) in text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .enumerate()
    {
        for m in line.split_whitespace() {
            let name = match m.strip_suffix("/*") {
                Some(name) => {
                    peers_inside.insert(name.to_string());
                    name
                }
                None => m,
            };
            assert!(
                layer.insert(name.to_string(), i).is_none(),
                "{name} named twice"
            );
        }
    }
    (layer, peers_inside)
}

pub(super) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The source without comments and without a trailing `#[cfg(test)] mod tests`.
pub(super) fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => text,
    };
    text.lines()
        .map(|l| match l.find("//") {
            // A `//` inside a string literal ("http://…") is rare in this code and harmless:
            // cutting there only hides a path from the check, never invents one.
            Some(at) => &l[..at],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first segment of every `crate::` path in `code`, with its line: `crate::a::b` gives
/// `a`, `crate::{a::x, b}` gives `a` and `b`.
fn crate_paths(code: &str) -> Vec<(String, usize)> {
    paths_after(code, "crate::")
}

/// The first segment after every `prefix` in `code` (a path that starts there: not preceded by
/// a name or by `::`), with its line; a group `prefix{a::x, b}` gives `a` and `b`.
fn paths_after(code: &str, prefix: &str) -> Vec<(String, usize)> {
    let mut found = Vec::new();
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    for (at, _) in code.match_indices(prefix) {
        // `vernier_crate::` or `$crate::` are not this crate's paths, nor is the second
        // `super::` of `super::super::` a path of its own.
        if code[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$' || c == ':')
        {
            continue;
        }
        let line = code[..at].matches('\n').count() + 1;
        let rest = &code[at + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // The items of the group at depth one.
            let (mut depth, mut start) = (1, 0);
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 1 => {
                        found.push((ident(&group[start..i]), line));
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 1 => {
                        found.push((ident(&group[start..i]), line));
                        start = i + 1;
                    }
                    _ => {}
                }
            }
        } else {
            found.push((ident(rest), line));
        }
    }
    found.retain(|(m, _)| !m.is_empty() && m != "super" && m != "self");
    found
}

/// The uses, in a file of `module` whose peers are its own modules, of a peer other than the
/// file's own (`own`): `crate::module::peer`, or `super::peer` from `module/own.rs` and
/// `module/own/mod.rs`, `super::super::peer` from `module/own/x.rs`.
fn peer_uses(code: &str, module: &str, own: &str, depth: usize) -> Vec<(String, usize)> {
    let mut uses = paths_after(code, &format!("crate::{module}::"));
    if depth > 0 {
        uses.extend(paths_after(code, &"super::".repeat(depth)));
    }
    uses.retain(|(m, _)| m != own);
    uses
}

/// Every use of a module at the same or a higher layer, and of a peer inside a module whose
/// own modules are peers, as `file:line: a -> b`.
fn violations(krate: &Path) -> Vec<String> {
    let (layer, peers_inside) = layers(krate);
    let src = krate.join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut bad = Vec::new();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap();
        let parts: Vec<String> = rel
            .components()
            .map(|c| {
                c.as_os_str()
                    .to_string_lossy()
                    .trim_end_matches(".rs")
                    .to_string()
            })
            .collect();
        let module = parts[0].clone();
        if module == "lib" || module == "main" || parts.last().is_some_and(|p| p == "tests") {
            continue;
        }
        let Some(&from) = layer.get(&module) else {
            bad.push(format!(
                "{}: module `{module}` is not in layers.txt: give it its layer",
                rel.display()
            ));
            continue;
        };
        let code = code(&fs::read_to_string(&f).unwrap());
        for (target, line) in crate_paths(&code) {
            if target == module {
                continue;
            }
            let why = match layer.get(&target) {
                Some(&to) if to < from => continue,
                Some(&to) if to == from => "a peer on the same layer",
                Some(_) => "a higher layer",
                None => "the crate root (name the module that defines it)",
            };
            bad.push(format!(
                "{}:{line}: `{module}` uses `crate::{target}`, {why}",
                rel.display()
            ));
        }
        // `module/own.rs` (depth 1 to `module`), `module/own/mod.rs` (1), `module/own/x.rs` (2).
        if peers_inside.contains(&module) && parts.len() > 1 && parts[1] != "mod" {
            let own = &parts[1];
            let depth = match parts.len() {
                2 => 1,
                _ if parts.last().is_some_and(|p| p == "mod") => parts.len() - 2,
                _ => parts.len() - 1,
            };
            for (peer, line) in peer_uses(&code, &module, own, depth) {
                bad.push(format!(
                    "{}:{line}: `{module}::{own}` uses `{module}::{peer}`, a peer",
                    rel.display()
                ));
            }
        }
    }
    bad
}

fn check(krate: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(krate);
    let bad = violations(&dir);
    assert!(
        bad.is_empty(),
        "{krate}: {} use(s) against layers.txt:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn the_library_uses_only_lower_layers() {
    check("vernier");
}

#[test]
fn the_command_uses_only_lower_layers() {
    check("vernier-cli");
}

#[test]
fn the_criterion_layer_uses_only_lower_layers() {
    check("vernier-criterion");
}

#[test]
fn the_parser_finds_grouped_and_plain_paths() {
    let c = code("use crate::{a::x, b::{y, z}, c};\nlet v = crate::d::f(); // crate::e\n");
    let names: Vec<String> = crate_paths(&c).into_iter().map(|(m, _)| m).collect();
    assert_eq!(names, ["a", "b", "c", "d"]);
}

#[test]
fn a_peer_is_found_by_its_crate_path_and_by_super() {
    let c = code("use crate::commands::run::X;\nuse super::compare::Y;\nuse super::super::z;\n");
    let names = |depth| -> Vec<String> {
        peer_uses(&c, "commands", "compare", depth)
            .into_iter()
            .map(|(m, _)| m)
            .collect()
    };
    assert_eq!(names(1), ["run"]);
    assert_eq!(names(2), ["run", "z"]);
}

/// Each crate's integration tests are one test binary, `tests/suite/`, whose modules are the
/// tiers (and the helpers they share): a Rust file directly under `tests/`, or a folder there
/// with a `main.rs`, would be a binary of its own, in no tier.
#[test]
fn each_crate_has_one_test_binary_of_two_tiers() {
    for krate in ["vernier", "vernier-cli"] {
        let tests = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(krate)
            .join("tests");
        let mut binaries: Vec<String> = fs::read_dir(&tests)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "rs") || p.join("main.rs").is_file())
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        binaries.sort();
        assert_eq!(binaries, ["suite"], "{krate}/tests: one binary, `suite/`");
        let main = fs::read_to_string(tests.join("suite/main.rs")).unwrap();
        for line in main.lines().filter(|l| l.starts_with("mod ")) {
            assert!(
                [
                    "mod common;",
                    "mod deterministic;",
                    "mod measuring;",
                    "mod registry;"
                ]
                .contains(&line),
                "{krate}/tests/suite/main.rs: `{line}` is not a tier; a test module goes in \
                 `deterministic/`, `measuring/` or `registry/`"
            );
        }
    }
}

/// The module a source file defines, as its path from the crate root: `a/b.rs` and
/// `a/b/mod.rs` are `a::b`; `lib.rs` and `main.rs` the root.
fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| {
            c.as_os_str()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_string()
        })
        .collect();
    if parts.len() == 1 && (parts[0] == "lib" || parts[0] == "main")
        || parts.last().is_some_and(|p| p == "mod")
    {
        parts.pop();
    }
    parts
}

/// Every path in `code` that starts at `crate::`, `self::` or `super::` (repeated), as the
/// module path it names from the crate root (`module` is the file's own), with its line: the
/// segments up to the first that is not a name; a group gives one path per item.
fn module_paths(code: &str, module: &[String]) -> Vec<(Vec<String>, usize)> {
    let mut found = Vec::new();
    let mut at = 0;
    while at < code.len() {
        let rest = &code[at..];
        let starts = ["crate::", "self::", "super::"]
            .iter()
            .find(|p| rest.starts_with(**p));
        let before = code[..at].chars().next_back();
        let Some(prefix) = starts.filter(|_| {
            !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$' || c == ':')
        }) else {
            at += code[at..].chars().next().map_or(1, char::len_utf8);
            continue;
        };
        let line = code[..at].matches('\n').count() + 1;
        let mut base: Vec<String> = match *prefix {
            "crate::" => Vec::new(),
            _ => module.to_vec(),
        };
        let mut i = at + prefix.len();
        if *prefix == "super::" {
            base.pop();
            while code[i..].starts_with("super::") {
                base.pop();
                i += "super::".len();
            }
        }
        let mut paths = Vec::new();
        let end = segments(code, i, base, &mut paths);
        found.extend(paths.into_iter().map(|p| (p, line)));
        at = end.max(at + 1);
    }
    found
}

/// `i` moved past the white space at `code[i..]`.
fn skip_space(code: &str, i: usize) -> usize {
    code.len() - code[i..].trim_start().len()
}

/// The paths from `code[i..]` on, each `base` followed by its names; a group `{a::x, b}` gives
/// one per item. Returns where the path ends.
fn segments(code: &str, mut i: usize, mut base: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
    loop {
        i = skip_space(code, i);
        if code[i..].starts_with('{') {
            i += 1;
            loop {
                i = skip_space(code, segments(code, i, base.clone(), out));
                match code[i..].chars().next() {
                    Some(',') if code[skip_space(code, i + 1)..].starts_with('}') => {
                        return skip_space(code, i + 1) + 1
                    }
                    Some(',') => i += 1,
                    Some('}') => return i + 1,
                    _ => return i,
                }
            }
        }
        let name: String = code[i..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        i += name.len();
        if !name.is_empty() && name != "self" {
            base.push(name);
        }
        if code[i..].starts_with("::") {
            i += 2;
        } else {
            out.push(base);
            return i;
        }
    }
}

/// The circles among the modules of the crate at `krate`: for each module, the uses of one of
/// its children by another (a file of `a/x.rs` naming `a::y`), and a chain of such uses that
/// comes back to where it started, as `parent: x -> y -> x (file:line, ...)`.
fn circles(krate: &Path) -> Vec<String> {
    let src = krate.join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.retain(|f| f.file_name().is_some_and(|n| n != "tests.rs"));
    let modules: BTreeSet<Vec<String>> = files
        .iter()
        .map(|f| module_of(f.strip_prefix(&src).unwrap()))
        .collect();
    // parent -> child -> (used child -> where)
    let mut edges: BTreeMap<Vec<String>, BTreeMap<String, BTreeMap<String, String>>> =
        BTreeMap::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap();
        let from = module_of(rel);
        let code = code(&fs::read_to_string(f).unwrap());
        for (path, line) in module_paths(&code, &from) {
            // The longest module the path names.
            let Some(to) = (0..=path.len())
                .rev()
                .map(|n| path[..n].to_vec())
                .find(|p| modules.contains(p))
            else {
                continue;
            };
            let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if common == from.len() || common == to.len() {
                // A module and its own descendants or ancestors: the tree, not a circle.
                continue;
            }
            edges
                .entry(from[..common].to_vec())
                .or_default()
                .entry(from[common].clone())
                .or_default()
                .entry(to[common].clone())
                .or_insert_with(|| format!("{}:{line}", rel.display()));
        }
    }
    let mut found = Vec::new();
    for (parent, uses) in &edges {
        let mut seen = BTreeSet::new();
        for start in uses.keys() {
            if let Some(chain) = back_to(start, start, uses, &mut vec![start.clone()]) {
                let mut key: Vec<String> = chain.clone();
                key.sort();
                if seen.insert(key) {
                    let wheres: Vec<&str> = chain
                        .iter()
                        .zip(chain.iter().cycle().skip(1))
                        .map(|(a, b)| uses[a][b].as_str())
                        .collect();
                    let mut ring = chain.clone();
                    ring.push(start.clone());
                    let name = if parent.is_empty() {
                        "crate".to_string()
                    } else {
                        parent.join("::")
                    };
                    found.push(format!(
                        "{name}: {} ({})",
                        ring.join(" -> "),
                        wheres.join(", ")
                    ));
                }
            }
        }
    }
    found
}

/// A chain of uses from `at` back to `start` (the modules on it, from `start`), if one exists.
fn back_to(
    start: &str,
    at: &str,
    uses: &BTreeMap<String, BTreeMap<String, String>>,
    chain: &mut Vec<String>,
) -> Option<Vec<String>> {
    for next in uses.get(at).into_iter().flat_map(|u| u.keys()) {
        if next == start {
            return Some(chain.clone());
        }
        if chain.contains(next) {
            continue;
        }
        chain.push(next.clone());
        if let Some(c) = back_to(start, next, uses, chain) {
            return Some(c);
        }
        chain.pop();
    }
    None
}

/// Every crate of the workspace, by its folder from the workspace root.
fn workspace_crates() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut crates: Vec<PathBuf> = fs::read_dir(root.join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .collect();
    crates.push(root.join("python"));
    crates.sort();
    crates
}

#[test]
fn no_crate_has_a_circle_between_its_modules() {
    let mut all = Vec::new();
    let crates = workspace_crates();
    assert!(crates.len() >= 4, "{crates:?}");
    for krate in crates {
        let name = krate.file_name().unwrap().to_string_lossy().into_owned();
        all.extend(circles(&krate).into_iter().map(|c| format!("{name}: {c}")));
    }
    assert!(all.is_empty(), "module circles:\n{}", all.join("\n"));
}

#[test]
fn a_circle_between_two_files_of_a_folder_is_found() {
    let dir = tempfile_dir("circle");
    let write = |rel: &str, text: &str| {
        let p = dir.join("src").join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    };
    write("lib.rs", "mod commands;\n");
    write("commands/mod.rs", "mod compare;\n");
    write(
        "commands/compare/mod.rs",
        "mod profile;\nmod programs;\npub struct Args;\n",
    );
    write(
        "commands/compare/profile.rs",
        "use super::Args;\nfn p() { super::programs::parse_env(); }\n",
    );
    write(
        "commands/compare/programs.rs",
        "use crate::commands::compare::{profile::{self}};\npub fn parse_env() {}\n",
    );
    assert_eq!(
        circles(&dir),
        ["commands::compare: profile -> programs -> profile (commands/compare/profile.rs:2, commands/compare/programs.rs:1)"]
    );
    // The circle undone: the shared function in the folder's own module.
    write("commands/compare/programs.rs", "use super::Args;\n");
    assert!(circles(&dir).is_empty());
}

/// A fresh directory for a test of its own, under the target's temporary directory.
fn tempfile_dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("layers")
        .join(name);
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn a_circle_through_super_and_crate_paths_is_found() {
    let module = ["commands".to_string(), "compare".into(), "profile".into()];
    let c = code("use super::programs::parse_env;\nlet x = crate::runner::{compare::{self, P}, link};\nsuper::super::run::go();\n");
    let paths: Vec<String> = module_paths(&c, &module)
        .into_iter()
        .map(|(p, _)| p.join("::"))
        .collect();
    assert_eq!(
        paths,
        [
            "commands::compare::programs::parse_env",
            "runner::compare",
            "runner::compare::P",
            "runner::link",
            "commands::run::go",
        ]
    );
}
