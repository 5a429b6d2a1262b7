//! The layers of both crates, as code: each crate's `layers.txt` orders its top-level modules,
//! and every `crate::` path in its sources must point to a lower layer. A cycle between
//! top-level modules, or a new module missing from the table, fails here.
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
/// two tiers (and the helpers they share): a Rust file directly under `tests/`, or a folder
/// there with a `main.rs`, would be a binary of its own, in neither tier.
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
                ["mod common;", "mod deterministic;", "mod measuring;"].contains(&line),
                "{krate}/tests/suite/main.rs: `{line}` is not a tier; a test module goes in \
                 `deterministic/` or `measuring/`"
            );
        }
    }
}
