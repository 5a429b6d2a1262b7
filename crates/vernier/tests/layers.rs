//! The layers of both crates, as code: each crate's `layers.txt` orders its top-level modules,
//! and every `crate::` path in its sources must point to a lower layer. A cycle between
//! top-level modules, or a new module missing from the table, fails here.
//!
//! Comments are left out (a doc link may point anywhere); `#[cfg(test)]` modules at the end of
//! a file are left out too (a unit test may build its input with a higher layer's helpers).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// Each module's layer, from `layers.txt`.
fn layers(krate: &Path) -> BTreeMap<String, usize> {
    let text = fs::read_to_string(krate.join("layers.txt")).expect("layers.txt");
    let mut layer = BTreeMap::new();
    for (i, line) in text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .enumerate()
    {
        for m in line.split_whitespace() {
            assert!(layer.insert(m.to_string(), i).is_none(), "{m} named twice");
        }
    }
    layer
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
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
fn code(text: &str) -> String {
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
    let mut found = Vec::new();
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    for (at, _) in code.match_indices("crate::") {
        // `vernier_crate::` or `$crate::` are not this crate's paths.
        if code[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$')
        {
            continue;
        }
        let line = code[..at].matches('\n').count() + 1;
        let rest = &code[at + "crate::".len()..];
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
    found.retain(|(m, _)| !m.is_empty());
    found
}

/// Every use of a module at the same or a higher layer, as `file:line: a -> b`.
fn violations(krate: &Path) -> Vec<String> {
    let layer = layers(krate);
    let src = krate.join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut bad = Vec::new();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let module = first.trim_end_matches(".rs").to_string();
        if module == "lib" || module == "main" {
            continue;
        }
        let Some(&from) = layer.get(&module) else {
            bad.push(format!(
                "{}: module `{module}` is not in layers.txt: give it its layer",
                rel.display()
            ));
            continue;
        };
        for (target, line) in crate_paths(&code(&fs::read_to_string(&f).unwrap())) {
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
