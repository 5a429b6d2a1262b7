//! No C++ function over the workspace's limit (clippy.toml's `too-many-lines-threshold`, 150
//! lines), as clippy's `too_many_lines` keeps Rust's: every function
//! body in the repository's C and C++ sources (the header `include/vernier.hpp`, the Google
//! Benchmark layer `include/gbench/`, `examples/`, `cmake/` and the tests' fixtures) is
//! measured by a small scanner, and one over the limit fails here with its file, line and
//! length.
//!
//! The scanner blanks comments, string and character literals and preprocessor lines (keeping
//! the line breaks), then matches braces. A block is a function body when the code before it
//! (since the last `;`, `{` or `}`) has parentheses and does not start with a control keyword:
//! a function, a member function, a constructor or a lambda at namespace or class scope. A
//! body's lines are counted as clippy counts them: from its `{` to its `}`, blank lines (and
//! lines of comments alone) left out. Blocks inside a body are part of it.

use std::fs;
use std::path::{Path, PathBuf};

/// The workspace's `too-many-lines-threshold` (clippy.toml), which Rust's functions are held to.
fn max_lines() -> usize {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let text = fs::read_to_string(root.join("clippy.toml")).expect("clippy.toml");
    text.lines()
        .find_map(|l| l.strip_prefix("too-many-lines-threshold"))
        .and_then(|v| v.trim().trim_start_matches('=').trim().parse().ok())
        .expect("too-many-lines-threshold = N in clippy.toml")
}

/// A function body found by the scanner.
#[derive(Debug, PartialEq)]
struct Body {
    name: String,
    /// 1-based line of its `{`.
    line: usize,
    /// Its lines that hold code.
    lines: usize,
}

/// `text` with comments, string and character literals and preprocessor lines replaced by
/// spaces; line breaks kept.
fn blank(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    // Only blanks since the line began: a `#` here opens a preprocessor line.
    let mut line_start = true;
    while i < c.len() {
        let next = c.get(i + 1).copied().unwrap_or('\0');
        let end = match c[i] {
            '#' if line_start => line_end(&c, i, true),
            '/' if next == '/' => line_end(&c, i, false),
            '/' if next == '*' => {
                let mut j = i + 2;
                while j + 1 < c.len() && !(c[j] == '*' && c[j + 1] == '/') {
                    j += 1;
                }
                (j + 2).min(c.len())
            }
            quote @ ('"' | '\'') => {
                let mut j = i + 1;
                while j < c.len() && c[j] != quote && c[j] != '\n' {
                    j += if c[j] == '\\' { 2 } else { 1 };
                }
                (j + 1).min(c.len())
            }
            ch => {
                line_start = ch == '\n' || (line_start && ch.is_whitespace());
                out.push(ch);
                i += 1;
                continue;
            }
        };
        out.extend(
            c[i..end]
                .iter()
                .map(|&ch| if ch == '\n' { '\n' } else { ' ' }),
        );
        line_start = false;
        i = end;
    }
    out
}

/// The index of the line break that ends the line at `i` (the end of the text when none); with
/// `continued`, a break after a backslash continues the line.
fn line_end(c: &[char], i: usize, continued: bool) -> usize {
    let mut j = i;
    while j < c.len() && !(c[j] == '\n' && !(continued && c[j - 1] == '\\')) {
        j += 1;
    }
    j
}

/// The words that open a block which is not a function's body.
const CONTROL: &[&str] = &[
    "if", "else", "for", "while", "do", "switch", "catch", "try", "return",
];

/// Whether the code before a `{` makes it a function's body, and the function's name.
fn function_head(head: &str) -> Option<String> {
    let head = head.trim();
    let first = head
        .split(|ch: char| !(ch.is_alphanumeric() || ch == '_'))
        .next()
        .unwrap_or("");
    if CONTROL.contains(&first) || !head.contains('(') || head.ends_with('=') {
        return None;
    }
    let before = head[..head.find('(')?].trim_end();
    let name: String = before
        .chars()
        .rev()
        .take_while(|ch| ch.is_alphanumeric() || ch == &'_' || ch == &':' || ch == &'~')
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    Some(if name.is_empty() {
        "(lambda)".to_string()
    } else {
        name
    })
}

/// Every outermost function body of `text` (a C or C++ source).
fn bodies(text: &str) -> Vec<Body> {
    let code = blank(text);
    let chars: Vec<char> = code.chars().collect();
    let mut found = Vec::new();
    let mut head_start = 0;
    let mut line = 1;
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\n' => line += 1,
            ';' | '}' => head_start = i + 1,
            '{' => {
                let head: String = chars[head_start..i].iter().collect();
                head_start = i + 1;
                if let Some(name) = function_head(&head) {
                    let (end, lines) = body_end(&chars, i);
                    found.push(Body { name, line, lines });
                    line += chars[i..end].iter().filter(|c| **c == '\n').count();
                    i = end;
                    head_start = end;
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    found
}

/// The index past the `}` that closes the `{` at `open`, and the lines of code from one to
/// the other (blank lines left out).
fn body_end(chars: &[char], open: usize) -> (usize, usize) {
    let mut depth = 0usize;
    let mut j = open;
    while j < chars.len() {
        match chars[j] {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            _ => {}
        }
        j += 1;
    }
    let end = (j + 1).min(chars.len());
    let text: String = chars[open..end].iter().collect();
    let lines = text.lines().filter(|l| !l.trim().is_empty()).count();
    (end, lines)
}

fn cpp_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap_or_default().to_string_lossy();
        if p.is_dir() {
            if name != "target" && !name.starts_with('.') {
                cpp_files(&p, out);
            }
        } else if ["cpp", "cc", "hpp", "h"]
            .iter()
            .any(|x| p.extension().is_some_and(|e| e == *x))
        {
            out.push(p);
        }
    }
}

/// `n` lines of `x += 1;` inside braces.
fn function_of(name: &str, n: usize) -> String {
    let mut s = format!("inline int {name}(int x) {{\n");
    for _ in 0..n - 2 {
        s += "    x += 1;\n";
    }
    s + "}\n"
}

#[test]
fn the_scanner_finds_bodies_and_counts_their_lines() {
    // 151 lines from `{` to `}`, and 150.
    let long = function_of("too_long", 151);
    let fits = function_of("fits", 150);
    let sample = format!(
        "namespace a {{\n\
         // a comment with a brace {{\n\
         struct S {{\n    int m{{0}};\n    void f() const {{ if (m) {{ m; }} }}\n}};\n\
         {long}\n\
         /* a block comment }} */\n\
         {fits}\n\
         inline const char* s() {{ return \"}}{{\" ; }}\n\
         inline char c() {{ return '{{'; }}\n\
         #define OPEN {{\n\
         auto lambda = [](int v) {{\n    return v;\n}};\n\
         }}  // namespace a\n"
    );
    let found = bodies(&sample);
    let summary: Vec<(&str, usize)> = found.iter().map(|b| (b.name.as_str(), b.lines)).collect();
    assert_eq!(
        summary,
        [
            ("f", 1),
            ("too_long", 151),
            ("fits", 150),
            ("s", 1),
            ("c", 1),
            ("(lambda)", 3)
        ]
    );
    assert_eq!(found[1].line, 7, "{found:?}");
    // Held to a limit of 150, the sample's long function alone is over.
    let over: Vec<&str> = found
        .iter()
        .filter(|b| b.lines > 150)
        .map(|b| b.name.as_str())
        .collect();
    assert_eq!(over, ["too_long"]);
    // Blank lines and lines of comments alone do not count.
    let spaced = function_of("spaced", 150).replacen("x += 1;\n", "x += 1;\n\n    // why\n", 1);
    assert_eq!(bodies(&spaced)[0].lines, 150);
}

#[test]
fn no_cpp_function_is_over_the_line_limit() {
    let max = max_lines();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for dir in ["include", "examples", "cmake", "crates"] {
        cpp_files(&root.join(dir), &mut files);
    }
    files.sort();
    assert!(
        files.iter().any(|f| f.ends_with("include/vernier.hpp")),
        "{files:?}"
    );
    let mut over = Vec::new();
    let mut scanned = 0;
    for f in &files {
        let text = fs::read_to_string(f).unwrap();
        for b in bodies(&text) {
            scanned += 1;
            if b.lines > max {
                let at = f.strip_prefix(&root).unwrap_or(f).display();
                over.push(format!("{at}:{} {}: {} lines", b.line, b.name, b.lines));
            }
        }
    }
    assert!(scanned > 100, "only {scanned} function bodies found");
    assert!(
        over.is_empty(),
        "C++ functions over {max} lines (split them into named steps):\n{}",
        over.join("\n")
    );
}
