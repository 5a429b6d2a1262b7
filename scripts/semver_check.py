#!/usr/bin/env python3
"""The semver check of a crate's user API: the listing committed at a release of the crate
(scripts/public_api.py's lines, under a first line `# version X.Y.Z`) against the listing of the
tree now, and the version the tree's Cargo.toml gives. Each difference is classed by Cargo's
SemVer rules (the Cargo book, "SemVer Compatibility"):

- breaking: an item removed or its signature changed (a trait implementation, auto traits
  included, is an item); a variant added to an enum, or a public field to a struct, that users
  can match or build exhaustively (no `#[non_exhaustive]`, nothing hidden: ` { .. }` in the
  listing); a method without a default added to a trait, or a type without one;
- additive: anything else added.

A breaking change needs the major version moved (the minor one before 1.0: 0.y.z -> 0.(y+1).0);
an additive one the minor (the patch before 1.0). The check says every difference with its
class, the version the change needs and whether Cargo.toml's has it.

What it does not see (cargo-semver-checks does): a change of behaviour behind an unchanged
signature, a generic bound tightened in a where clause it prints but does not compare apart,
a trait made unimplementable outside the crate (sealed) by a private supertrait.

Usage: semver_check.py BASELINE NOW VERSION   (exit 0: the version covers the change;
       1: it does not; 2: bad input)
"""
import re
import sys

def bad(message):
    print("semver_check: " + message, file=sys.stderr)
    sys.exit(2)


PATH = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z0-9_]+)*")
MARKS = ("#[non_exhaustive] ", "unsafe ", "const ")


def version(text, where):
    m = re.fullmatch(r"\s*(\d+)\.(\d+)\.(\d+)(?:[-+].*)?\s*", text)
    if not m:
        bad(f"{where}: '{text}' is not a version X.Y.Z")
    return tuple(int(x) for x in m.groups())


def read(path):
    """The listing's version (None when it has no `# version` line) and its items."""
    try:
        lines = open(path).read().splitlines()
    except OSError as e:
        bad(f"cannot read {path}: {e.strerror}")
    ver = None
    items = []
    for line in lines:
        if line.startswith("# version "):
            ver = version(line[len("# version "):], path)
        elif line and not line.startswith("#"):
            items.append(line)
    return ver, items


def key(line):
    """What an item is, apart from its signature: its kind and path (`fn a::b`). An
    implementation has no name: the whole line is its key."""
    rest = line
    for m in MARKS:
        if rest.startswith(m):
            rest = rest[len(m):]
    kind, _, rest = rest.partition(" ")
    if kind.startswith("impl"):
        return line
    m = PATH.match(rest)
    return kind + " " + (m.group(0) if m else rest)


def owner(k):
    """`a::B` for the key `variant a::B::C`."""
    return k.split(" ", 1)[1].rsplit("::", 1)[0]


def classify(base, now):
    """The differences, each (class, text), class 'breaking' or 'additive'."""
    b = {key(x): x for x in base}
    n = {key(x): x for x in now}
    # The lines of the enums, structs and traits, by path, as they are now and were.
    shapes_now = {k.split(" ", 1)[1]: v for k, v in n.items() if k.split(" ")[0] in ("enum", "struct", "trait")}
    shapes_base = {k.split(" ", 1)[1] for k in b if k.split(" ")[0] in ("enum", "struct", "trait")}
    out = []
    for k in sorted(b.keys() - n.keys()):
        out.append(("breaking", "removed: " + b[k]))
    for k in sorted(b.keys() & n.keys()):
        if b[k] != n[k]:
            out.append(("breaking", f"changed: {b[k]}\n      now: {n[k]}"))
    for k in sorted(n.keys() - b.keys()):
        line = n[k]
        kind = k.split(" ")[0]
        parent = owner(k) if "::" in k else None
        shape = shapes_now.get(parent, "")
        old_parent = parent in shapes_base
        open_shape = not shape.startswith("#[non_exhaustive]") and not shape.endswith("{ .. }")
        if kind == "variant" and old_parent and open_shape:
            why = "a variant added to an enum users can match exhaustively"
        elif kind == "field" and old_parent and shape.startswith("struct") and open_shape:
            why = "a public field added to a struct users can build with all its fields"
        elif kind == "fn" and old_parent and shape.removeprefix("unsafe ").startswith("trait") and not line.endswith("{ .. }"):
            why = "a method without a default added to a trait users implement"
        elif kind == "type" and old_parent and shape.removeprefix("unsafe ").startswith("trait") and not line.endswith("= .."):
            why = "an associated type without a default added to a trait users implement"
        else:
            out.append(("additive", "added: " + line))
            continue
        out.append(("breaking", f"added: {line}\n      ({why})"))
    return out


def needed(base_ver, breaking):
    """The lowest version that covers a change from base_ver."""
    major, minor, patch = base_ver
    if breaking:
        return (major + 1, 0, 0) if major else (0, minor + 1, 0)
    return (major, minor + 1, 0) if major else (0, minor, patch + 1)


def show(v):
    return ".".join(map(str, v))


def main(argv):
    if len(argv) != 4:
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    base_ver, base = read(argv[1])
    _, now = read(argv[2])
    ver = version(argv[3], "the crate's version")
    if base_ver is None:
        bad(f"{argv[1]} has no '# version X.Y.Z' line: write the listing anew (scripts/public-api.sh --bless)")
    diffs = classify(base, now)
    if not diffs:
        print(f"semver: the user API is that of {show(base_ver)}")
        return 0
    breaking = any(c == "breaking" for c, _ in diffs)
    for c, text in diffs:
        print(f"  {c:<8}  {text}")
    need = needed(base_ver, breaking)
    what = "breaking" if breaking else "additive"
    if ver >= need:
        print(f"semver: a {what} change from {show(base_ver)}; version {show(ver)} covers it (needs {show(need)})")
        return 0
    print(
        f"semver: a {what} change from {show(base_ver)} needs version {show(need)}, and the crate's is "
        f"{show(ver)}: move the workspace version in Cargo.toml to {show(need)}"
        + ", or undo the change",
        file=sys.stderr,
    )
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
