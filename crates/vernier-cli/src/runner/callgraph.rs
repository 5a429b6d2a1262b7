//! Callgrind's output read per function: each function's own costs (self) and the costs of the
//! calls it makes (inclusive of the callee), for every event of the `events:` line. The exact
//! profile (`vernier profile`) takes two of these, at N1 and N2 iterations of a benchmark's
//! measured loop, and differences them, as `--instructions` does with the totals.
//!
//! The format (callgrind's "Callgrind Format Specification"): `fn=` names the function the cost
//! lines below belong to; `cfn=` and `calls=` announce a call, and the one cost line after
//! `calls=` is that call's inclusive cost (not the caller's own). Names may be compressed:
//! `(id) name` defines an id, `(id)` alone refers to it, one id space for `fn`/`cfn`. A cost
//! line is its positions (as many as the `positions:` line names, `line` by default; `+n`,
//! `-n` and `*` are relative) followed by the event counts, trailing zeros left out. A cost
//! line's `line` position, with the file named by the last `fl=` (or `fi=`/`fe=`, for code
//! inlined from another file), places its own costs on a source line; file names are
//! compressed in an id space of their own.

use crate::files::profile::brief;
use anyhow::{anyhow, bail, Context as _, Result};
use std::collections::BTreeMap;

/// One function's costs in one callgrind dump.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FnCost {
    /// Its own costs, per event.
    pub own: Vec<u64>,
    /// Per callee: the inclusive costs of its calls from this function, per event.
    pub calls: BTreeMap<String, Vec<u64>>,
    /// Its own costs per source line (file, line), per event.
    pub lines: BTreeMap<(String, u64), Vec<u64>>,
}

/// Every function of one callgrind dump.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CallGraph {
    /// The events, as the `events:` line names them (`Ir`, `Dr`, …).
    pub events: Vec<String>,
    pub functions: BTreeMap<String, FnCost>,
}

fn add(into: &mut Vec<u64>, costs: &[u64]) {
    if into.len() < costs.len() {
        into.resize(costs.len(), 0);
    }
    for (a, c) in into.iter_mut().zip(costs) {
        *a += c;
    }
}

/// Resolves `(id) name` / `(id)` / `name`, remembering definitions.
fn name(rest: &str, ids: &mut BTreeMap<String, String>) -> Result<String> {
    let rest = rest.trim();
    let Some(tail) = rest.strip_prefix('(') else {
        return Ok(rest.to_string());
    };
    let (id, name) = tail
        .split_once(')')
        .ok_or_else(|| anyhow!("bad compressed name `{rest}`"))?;
    let name = name.trim();
    if name.is_empty() {
        ids.get(id)
            .cloned()
            .ok_or_else(|| anyhow!("compressed name ({id}) used before it was defined"))
    } else {
        ids.insert(id.to_string(), name.to_string());
        Ok(name.to_string())
    }
}

/// The event counts of a cost line (after its `positions` position columns).
fn costs(line: &str, positions: usize) -> Result<Vec<u64>> {
    line.split_whitespace()
        .skip(positions)
        .map(|v| {
            v.parse::<u64>()
                .with_context(|| format!("bad count `{v}` in the cost line `{line}`"))
        })
        .collect()
}

/// A cost line's positions, each absolute (decimal or `0x` hex), relative to the same column
/// of the previous cost line (`+n`, `-n`) or equal to it (`*`); `last` is updated.
fn positions_of(line: &str, last: &mut [u64]) -> Result<()> {
    for (k, t) in line.split_whitespace().take(last.len()).enumerate() {
        let bad = || anyhow!("bad position `{t}` in the cost line `{line}`");
        let number = |s: &str| match s.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16).map_err(|_| bad()),
            None => s.parse::<u64>().map_err(|_| bad()),
        };
        last[k] = if t == "*" {
            last[k]
        } else if let Some(d) = t.strip_prefix('+') {
            last[k].saturating_add(number(d)?)
        } else if let Some(d) = t.strip_prefix('-') {
            last[k].saturating_sub(number(d)?)
        } else {
            number(t)?
        };
    }
    Ok(())
}

/// Reads one callgrind dump.
pub fn parse(text: &str) -> Result<CallGraph> {
    let mut g = CallGraph::default();
    let mut positions = 1;
    // The column of the `line` position (the only one by default).
    let mut line_at = Some(0);
    let mut last: Vec<u64> = vec![0];
    let mut ids: BTreeMap<String, String> = BTreeMap::new();
    let mut file_ids: BTreeMap<String, String> = BTreeMap::new();
    let mut current: Option<String> = None;
    let mut callee: Option<String> = None;
    // The function's file (`fl=`), and the file of inlined code when it differs (`fi=`/`fe=`).
    let mut file = String::from("???");
    let mut inlined: Option<String> = None;
    let mut call_cost_next = false;
    for line in text.lines() {
        let line = line.trim_end();
        let first = line.chars().next();
        if matches!(first, Some(c) if c.is_ascii_digit() || c == '+' || c == '-' || c == '*') {
            // A position that cannot be read costs the lines, never the functions' costs.
            if positions_of(line, &mut last).is_err() {
                line_at = None;
            }
            let c = costs(line, positions)?;
            let f = current
                .clone()
                .ok_or_else(|| anyhow!("a cost line before any `fn=` line"))?;
            let entry = g.functions.entry(f).or_default();
            if call_cost_next {
                let to = callee
                    .clone()
                    .ok_or_else(|| anyhow!("a `calls=` line without `cfn=`"))?;
                add(entry.calls.entry(to).or_default(), &c);
                call_cost_next = false;
            } else {
                add(&mut entry.own, &c);
                if let Some(k) = line_at {
                    let at = (inlined.clone().unwrap_or_else(|| file.clone()), last[k]);
                    add(entry.lines.entry(at).or_default(), &c);
                }
            }
        } else if let Some(rest) = line.strip_prefix("fn=") {
            current = Some(name(rest, &mut ids)?);
            g.functions.entry(current.clone().unwrap()).or_default();
            inlined = None;
        } else if let Some(rest) = line.strip_prefix("cfn=") {
            callee = Some(name(rest, &mut ids)?);
        } else if line.starts_with("calls=") {
            call_cost_next = true;
        } else if let Some(rest) = line.strip_prefix("fl=") {
            file = name(rest, &mut file_ids)?;
            inlined = None;
        } else if let Some(rest) = line
            .strip_prefix("fi=")
            .or_else(|| line.strip_prefix("fe="))
        {
            let f = name(rest, &mut file_ids)?;
            inlined = (f != file).then_some(f);
        } else if let Some(rest) = line
            .strip_prefix("cfi=")
            .or_else(|| line.strip_prefix("cfl="))
        {
            // The callee's file: only its compressed name is kept, for later `fl=(id)` lines.
            name(rest, &mut file_ids)?;
        } else if let Some(rest) = line.strip_prefix("events:") {
            g.events = rest.split_whitespace().map(String::from).collect();
        } else if let Some(rest) = line.strip_prefix("positions:") {
            let names: Vec<&str> = rest.split_whitespace().collect();
            positions = names.len().max(1);
            line_at = if names.is_empty() {
                Some(0)
            } else {
                names.iter().position(|n| *n == "line")
            };
            last = vec![0; positions];
        }
    }
    if g.events.is_empty() {
        bail!("callgrind output has no `events:` line");
    }
    Ok(g)
}

impl CallGraph {
    /// Adds `other`'s costs (another dump of the same run) to these.
    pub fn merge(&mut self, other: CallGraph) {
        if self.events.is_empty() {
            self.events = other.events;
        }
        for (name, f) in other.functions {
            let e = self.functions.entry(name).or_default();
            add(&mut e.own, &f.own);
            for (to, c) in f.calls {
                add(e.calls.entry(to).or_default(), &c);
            }
            for (at, c) in f.lines {
                add(e.lines.entry(at).or_default(), &c);
            }
        }
    }
}

impl FnCost {
    /// Own costs plus those of every call it makes.
    pub fn inclusive(&self) -> Vec<u64> {
        let mut t = self.own.clone();
        for c in self.calls.values() {
            add(&mut t, c);
        }
        t
    }
}

/// One function's costs per iteration of a benchmark's loop.
#[derive(Clone, Debug, PartialEq)]
pub struct FnPerIter {
    pub name: String,
    /// Own costs per iteration, per event.
    pub own: Vec<f64>,
    /// Inclusive costs per iteration, per event.
    pub inclusive: Vec<f64>,
    /// Per callee, the inclusive costs of its calls from this function, for every
    /// `N2 − N1` iterations (whole counts, what a flame graph is drawn from).
    pub calls: BTreeMap<String, u64>,
    /// Own instructions for every `N2 − N1` iterations.
    pub own_ir: u64,
    /// Its own costs per iteration on each source line (file, line), per event; lines whose
    /// costs cancel are left out.
    pub lines: Vec<(String, u64, Vec<f64>)>,
}

/// `at_n2 − at_n1` per function, per iteration (`n2 − n1` of them): what one iteration of the
/// loop costs in each function, the costs paid once per call of the loop cancelled. Functions
/// whose costs cancel entirely are left out.
pub fn per_iteration(
    n1: u64,
    at_n1: &CallGraph,
    n2: u64,
    at_n2: &CallGraph,
) -> Result<Vec<FnPerIter>> {
    if at_n1.events != at_n2.events {
        bail!("the two callgrind runs counted different events");
    }
    if n2 <= n1 {
        bail!("per-iteration costs need N1 < N2, got {n1} and {n2}");
    }
    let d = (n2 - n1) as f64;
    let ir = at_n2.events.iter().position(|e| e == "Ir");
    let empty = FnCost::default();
    let diff = |a: &[u64], b: &[u64], k: usize| {
        b.get(k).copied().unwrap_or(0) as f64 - a.get(k).copied().unwrap_or(0) as f64
    };
    let mut out = Vec::new();
    for (name, f2) in &at_n2.functions {
        let f1 = at_n1.functions.get(name).unwrap_or(&empty);
        let (i1, i2) = (f1.inclusive(), f2.inclusive());
        let n = at_n2.events.len();
        let own: Vec<f64> = (0..n).map(|k| diff(&f1.own, &f2.own, k) / d).collect();
        let inclusive: Vec<f64> = (0..n).map(|k| diff(&i1, &i2, k) / d).collect();
        if inclusive.iter().all(|v| v.abs() < 1e-9) {
            continue;
        }
        let ir_of = |c: &[u64]| ir.and_then(|k| c.get(k).copied()).unwrap_or(0);
        let calls = f2
            .calls
            .iter()
            .map(|(to, c2)| {
                let c1 = f1.calls.get(to).map(|c| ir_of(c)).unwrap_or(0);
                (to.clone(), ir_of(c2).saturating_sub(c1))
            })
            .filter(|(_, v)| *v > 0)
            .collect();
        let own_ir = ir_of(&f2.own).saturating_sub(ir_of(&f1.own));
        let no_line = Vec::new();
        let lines = f2
            .lines
            .iter()
            .map(|(at, c2)| {
                let c1 = f1.lines.get(at).unwrap_or(&no_line);
                let v: Vec<f64> = (0..n).map(|k| diff(c1, c2, k) / d).collect();
                (at.0.clone(), at.1, v)
            })
            .filter(|(_, _, v)| v.iter().any(|x| x.abs() >= 1e-9))
            .collect();
        out.push(FnPerIter {
            name: name.clone(),
            own,
            inclusive,
            calls,
            own_ir,
            lines,
        });
    }
    Ok(out)
}

/// Folded stacks (`root;child;grandchild count`, in instructions for every `N2 − N1`
/// iterations) from the functions' call graph, from `root` down. Callgrind keeps one cost per
/// caller and callee, not per stack: a function called from several places has its own calls
/// shared out in proportion to each caller's calls of it (exact where each function has one
/// caller, as in most measured loops). A recursion is cut where a function appears again.
pub fn folded(functions: &[FnPerIter], root: &str) -> Vec<String> {
    let by_name: BTreeMap<&str, &FnPerIter> =
        functions.iter().map(|f| (f.name.as_str(), f)).collect();
    let mut out = Vec::new();
    let mut path: Vec<&str> = Vec::new();
    fn walk<'a>(
        by_name: &BTreeMap<&'a str, &'a FnPerIter>,
        name: &'a str,
        weight: f64,
        path: &mut Vec<&'a str>,
        out: &mut Vec<String>,
    ) {
        let Some(f) = by_name.get(name) else {
            return;
        };
        if path.contains(&name) || weight < 0.5 {
            return;
        }
        path.push(name);
        let shown: Vec<String> = path.iter().map(|n| brief(n)).collect();
        let total = f.own_ir + f.calls.values().sum::<u64>();
        let scale = if total == 0 {
            0.0
        } else {
            weight / total as f64
        };
        let own = (f.own_ir as f64 * scale).round() as u64;
        if own > 0 {
            out.push(format!("{} {own}", shown.join(";")));
        }
        for (to, &c) in &f.calls {
            walk(by_name, to, c as f64 * scale, path, out);
        }
        path.pop();
    }
    if let Some(r) = by_name.get(root) {
        let total = r.own_ir + r.calls.values().sum::<u64>();
        walk(&by_name, root, total as f64, &mut path, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A dump as callgrind writes one: compressed names, a call with its inclusive cost, a
    /// relative position, trailing zero counts left out.
    const DUMP: &str = "version: 1
creator: callgrind-3.19.0
positions: line
events: Ir Dr Dw
summary: 1000

fl=(1) loop.cpp
fn=(1) vernier_measured_loop<Body>
10 5 1
+1 3
cfn=(2) heavy(int)
calls=100 20
11 900 300 0
cfn=(3) light(int)
calls=100 30
12 300 100
fn=(2)
20 900 300
fn=(3)
30 300 100
";

    #[test]
    fn own_and_call_costs_are_told_apart() {
        let g = parse(DUMP).unwrap();
        assert_eq!(g.events, ["Ir", "Dr", "Dw"]);
        let root = &g.functions["vernier_measured_loop<Body>"];
        assert_eq!(root.own, vec![8, 1]);
        assert_eq!(root.calls["heavy(int)"], vec![900, 300, 0]);
        assert_eq!(root.inclusive(), vec![1208, 401, 0]);
        assert_eq!(g.functions["heavy(int)"].own, vec![900, 300]);
        assert_eq!(g.functions["light(int)"].inclusive(), vec![300, 100]);
    }

    #[test]
    fn per_iteration_differences_cancel_what_is_paid_once() {
        let at = |k: u64| {
            let mut g = parse(DUMP).unwrap();
            for f in g.functions.values_mut() {
                for v in f.own.iter_mut() {
                    *v *= k;
                }
                for c in f.calls.values_mut() {
                    for v in c.iter_mut() {
                        *v *= k;
                    }
                }
            }
            // A cost paid once per call of the loop: the same at both counts.
            g.functions.entry("clock_gettime".into()).or_default().own = vec![50, 0, 0];
            g
        };
        let p = per_iteration(100, &at(1), 200, &at(2)).unwrap();
        let f = |n: &str| p.iter().find(|f| f.name == n).unwrap();
        assert!(p.iter().all(|f| f.name != "clock_gettime"));
        assert_eq!(f("heavy(int)").own[0], 9.0);
        assert_eq!(f("light(int)").own[0], 3.0);
        assert_eq!(f("vernier_measured_loop<Body>").inclusive[0], 12.08);
        let stacks = folded(&p, "vernier_measured_loop<Body>");
        assert_eq!(
            stacks,
            [
                "vernier_measured_loop<Body> 8",
                "vernier_measured_loop<Body>;heavy(int) 900",
                "vernier_measured_loop<Body>;light(int) 300",
            ]
        );
    }

    #[test]
    fn damaged_dumps_are_named() {
        assert!(parse("fn=(1) f\n1 2\n")
            .unwrap_err()
            .to_string()
            .contains("events"));
        let e = parse("events: Ir\n1 2\n").unwrap_err().to_string();
        assert!(e.contains("before any `fn=`"), "{e}");
        let e = parse("events: Ir\nfn=(7)\n").unwrap_err().to_string();
        assert!(e.contains("(7) used before"), "{e}");
        let e = parse("events: Ir\nfn=f\n1 x\n").unwrap_err().to_string();
        assert!(e.contains("bad count `x`"), "{e}");
    }

    #[test]
    fn own_costs_are_placed_on_their_source_lines() {
        // Compressed positions (`+n`, `-n`, `*`), a call's cost line moving the position too,
        // inlined code from a header (`fi=`), compressed file names, two position columns.
        let dump = "\
positions: instr line
events: Ir
fl=(1) /src/mix.cpp
fn=(1) heavy(int)
0x10 12 5
+4 +1 7
* * 1
fi=(2) /src/util.h
+2 40 3
fe=(1)
+2 -27 2
cfi=(3) /src/light.cpp
cfn=(2) light(int)
calls=1 0x50 3
+4 +2 30
+1 * 4
fl=(3)
fn=(2)
0x50 3 30
";
        let g = parse(dump).unwrap();
        let heavy = &g.functions["heavy(int)"];
        let at = |f: &str, l: u64| heavy.lines.get(&(f.to_string(), l)).cloned();
        assert_eq!(at("/src/mix.cpp", 12), Some(vec![5]));
        // 7 and 1 at 13, then 2 more after the header's line 40 (40 − 27 = 13, back in
        // mix.cpp).
        assert_eq!(at("/src/mix.cpp", 13), Some(vec![10]));
        assert_eq!(at("/src/util.h", 40), Some(vec![3]));
        // The call's cost line at 15 is the call's, and the next own cost is at 15 (`*`).
        assert_eq!(at("/src/mix.cpp", 15), Some(vec![4]));
        assert_eq!(heavy.own, vec![5 + 7 + 1 + 3 + 2 + 4]);
        assert_eq!(heavy.calls["light(int)"], vec![30]);
        let light = &g.functions["light(int)"];
        assert_eq!(
            light.lines.get(&("/src/light.cpp".into(), 3)),
            Some(&vec![30])
        );
        // Per iteration, per line.
        let mut twice = g.clone();
        twice.merge(g.clone());
        let p = per_iteration(1, &g, 2, &twice).unwrap();
        let heavy = p.iter().find(|f| f.name == "heavy(int)").unwrap();
        assert!(heavy
            .lines
            .contains(&("/src/mix.cpp".to_string(), 13, vec![10.0])));
    }

    #[test]
    fn a_position_that_cannot_be_read_costs_the_lines_only() {
        let g =
            parse("positions: instr line\nevents: Ir\nfl=a.c\nfn=f\n0x10 3 5\n0xZZ 4 2\n").unwrap();
        assert_eq!(g.functions["f"].own, vec![7]);
        assert_eq!(
            g.functions["f"].lines.len(),
            1,
            "{:?}",
            g.functions["f"].lines
        );
    }
}
