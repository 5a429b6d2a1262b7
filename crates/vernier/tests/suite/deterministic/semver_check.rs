//! The semver check of the user API (`scripts/semver_check.py`, run by `scripts/public-api.sh`
//! in the test command): each kind of change to a listing is classed as Cargo's SemVer rules
//! class it, and the version it needs is the one asked for. Listings written here, in the shape
//! `scripts/public_api.py` prints.

use std::path::Path;
use std::process::Command;

const BASE: &str = "# version 0.1.0
enum vernier::Throughput
#[non_exhaustive] enum vernier::Event
fn vernier::Suite::bench(&mut self, name: impl Into<String>) -> &mut Self
fn vernier::Executor::block_on<T>(&self, future: impl Future<Output = T>) -> T
fn vernier::Executor::name(&self) -> String { .. }
field vernier::Usage::cpu_ns: u64
impl Send for vernier::Suite
struct vernier::Suite { .. }
struct vernier::Usage
trait vernier::Executor
variant vernier::Throughput::BytesPerIter(u64)
variant vernier::Event::Start
";

/// `scripts/semver_check.py` run on the listings `base` and `now` at `version`: its exit code
/// and what it printed (standard output and error).
fn run(base: &str, now: &str, version: &str) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let (b, n) = (dir.path().join("base"), dir.path().join("now"));
    std::fs::write(&b, base).unwrap();
    std::fs::write(&n, now).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/semver_check.py");
    let out = Command::new("python3")
        .arg(script)
        .args([&b, &n])
        .arg(version)
        .output()
        .expect("python3 runs");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

/// The check of BASE against BASE with `edit` applied (listed as public_api.py prints it: no
/// version line) at `version`.
fn check(edit: impl Fn(&str) -> String, version: &str) -> (i32, String) {
    let listed: String = edit(BASE)
        .lines()
        .skip(1)
        .map(|l| format!("{l}\n"))
        .collect();
    run(BASE, &listed, version)
}

/// BASE with `line` added.
fn with(line: &'static str) -> impl Fn(&str) -> String + Copy {
    move |b| format!("{b}{line}\n")
}

/// BASE without `line`.
fn without(line: &'static str) -> impl Fn(&str) -> String + Copy {
    move |b| {
        b.lines()
            .filter(|l| *l != line)
            .map(|l| format!("{l}\n"))
            .collect()
    }
}

/// Asserts the change is classed `class` and needs `need`: refused at the version before it,
/// taken at `need`.
fn needs(edit: impl Fn(&str) -> String + Copy, class: &str, below: &str, need: &str) {
    let (code, text) = check(edit, below);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains(&format!("a {class} change from 0.1.0 needs version {need}")),
        "{text}"
    );
    let (code, text) = check(edit, need);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains(&format!("covers it (needs {need})")),
        "{text}"
    );
}

#[test]
fn the_same_api_needs_no_new_version() {
    let (code, text) = check(|b| b.to_string(), "0.1.0");
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("the user API is that of 0.1.0"), "{text}");
}

#[test]
fn an_item_removed_or_changed_is_breaking() {
    let gone = "fn vernier::Suite::bench(&mut self, name: impl Into<String>) -> &mut Self";
    needs(without(gone), "breaking", "0.1.9", "0.2.0");
    let changed = |b: &str| b.replace("name: impl Into<String>", "name: &str");
    needs(changed, "breaking", "0.1.1", "0.2.0");
    let (_, text) = check(changed, "0.1.1");
    assert!(
        text.contains("changed: fn vernier::Suite::bench")
            && text.contains("now: fn vernier::Suite::bench(&mut self, name: &str)"),
        "{text}"
    );
    // An auto trait lost is a removed implementation.
    needs(
        without("impl Send for vernier::Suite"),
        "breaking",
        "0.1.1",
        "0.2.0",
    );
}

#[test]
fn an_item_added_is_additive() {
    needs(
        with("fn vernier::Suite::bench_x(&mut self)"),
        "additive",
        "0.1.0",
        "0.1.1",
    );
    // After 1.0 the minor version moves for an addition, the major for a break.
    let (code, text) = check(with("fn vernier::black_box2<T>(x: T) -> T"), "1.0.0");
    assert_eq!(
        code, 0,
        "a 0.x baseline moved to 1.0.0 covers any change: {text}"
    );
}

#[test]
fn what_users_match_build_or_implement_breaks_when_it_grows() {
    // A variant of an exhaustive enum, and of a #[non_exhaustive] one.
    needs(
        with("variant vernier::Throughput::ElementsPerIter(u64)"),
        "breaking",
        "0.1.1",
        "0.2.0",
    );
    needs(
        with("variant vernier::Event::Stop"),
        "additive",
        "0.1.0",
        "0.1.1",
    );
    // A public field of a struct built with all its fields, and of one with hidden fields.
    needs(
        with("field vernier::Usage::page_faults: u64"),
        "breaking",
        "0.1.1",
        "0.2.0",
    );
    needs(
        with("field vernier::Suite::name: String"),
        "additive",
        "0.1.0",
        "0.1.1",
    );
    // A trait method without a default, and with one.
    needs(
        with("fn vernier::Executor::shutdown(&self)"),
        "breaking",
        "0.1.1",
        "0.2.0",
    );
    needs(
        with("fn vernier::Executor::threads(&self) -> usize { .. }"),
        "additive",
        "0.1.0",
        "0.1.1",
    );
    // A new enum's variants and a new struct's fields are part of the new item.
    let new_enum = |b: &str| format!("{b}enum vernier::Mode\nvariant vernier::Mode::Fast\n");
    needs(new_enum, "additive", "0.1.0", "0.1.1");
}

#[test]
fn a_listing_without_its_version_is_named() {
    let listed = "fn vernier::black_box<T>(x: T) -> T\n";
    let (code, text) = run(listed, listed, "0.1.0");
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("has no '# version X.Y.Z' line"), "{text}");
    let (code, text) = run(BASE, listed, "0.1");
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("'0.1' is not a version X.Y.Z"), "{text}");
}
