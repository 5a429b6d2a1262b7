//! A suite's registered comparisons ([`Suite::compare`], [`Suite::compare_benches`]), measured
//! in this process by the pair engine, one after the other, into a comparison file.

use super::suite::{PairEntry, PairSide, Suite};
use super::Event;
use crate::measure::compare::{measure_pair, PairPlan};
use crate::measure::in_process::InProcess;
use crate::measure::{MonotonicClock, INTERRUPTED};
use crate::result::comparison::{ComparisonFile, Failure};
use crate::stats::compare::Mode;
use crate::timer::Timer;
use crate::workload::routine::Routine;
use crate::workload::Entry;
use std::sync::atomic::Ordering;

fn routine_by_name<'a>(
    entries: &'a mut [Entry],
    name: &str,
) -> Result<&'a mut (dyn Routine + 'static), String> {
    let known: Vec<String> = entries.iter().map(|e| e.name.clone()).collect();
    entries
        .iter_mut()
        .find(|e| e.name == name)
        .map(|e| e.routine.as_mut())
        .ok_or_else(|| {
            format!(
                "no benchmark named '{name}' in the suite (it has: {})",
                known.join(", ")
            )
        })
}

fn two_by_name<'a>(
    entries: &'a mut [Entry],
    a: &str,
    b: &str,
) -> Result<
    (
        &'a mut (dyn Routine + 'static),
        &'a mut (dyn Routine + 'static),
    ),
    String,
> {
    let ia = entries.iter().position(|e| e.name == a);
    let ib = entries.iter().position(|e| e.name == b);
    match (ia, ib) {
        (Some(i), Some(j)) if i == j => Err(format!(
            "OLD and NEW are the same benchmark '{a}': register the code twice to compare it \
             with itself"
        )),
        (Some(i), Some(j)) => {
            let (lo, hi) = (i.min(j), i.max(j));
            let (x, y) = entries.split_at_mut(hi);
            let (p, q) = (x[lo].routine.as_mut(), y[0].routine.as_mut());
            Ok(if i < j { (p, q) } else { (q, p) })
        }
        (None, _) => routine_by_name(entries, a).map(|_| unreachable!()),
        (_, None) => routine_by_name(entries, b).map(|_| unreachable!()),
    }
}

/// Run every registered comparison of `suite` whose name its filter selects, in this process.
pub fn run_suite_pairs(
    suite: &mut Suite,
    threshold: f64,
    on_event: &mut dyn FnMut(Event<ComparisonFile>),
) -> ComparisonFile {
    let timer = Timer::detect();
    let plan = PairPlan::in_process(&suite.options().plan, threshold);
    let mut file = ComparisonFile::new(Mode::Paired, threshold);
    file.old = "in-process".into();
    file.new = "in-process".into();
    let selected: Vec<bool> = suite
        .pairs
        .iter()
        .map(|p| suite.options().selects(&p.name))
        .collect();
    let (entries, pairs) = (&mut suite.entries, &mut suite.pairs);
    for (pair, _) in pairs.iter_mut().zip(selected).filter(|(_, s)| *s) {
        if INTERRUPTED.load(Ordering::Relaxed) {
            break;
        }
        let PairEntry { name, old, new } = pair;
        on_event(Event::Start { name });
        type Both<'a> = (
            &'a mut (dyn Routine + 'static),
            &'a mut (dyn Routine + 'static),
        );
        let sides: Result<Both, String> = match (old, new) {
            (PairSide::Routine(a), PairSide::Routine(b)) => Ok((a.as_mut(), b.as_mut())),
            (PairSide::Routine(a), PairSide::Bench(b)) => {
                routine_by_name(entries, b).map(|b| (a.as_mut(), b))
            }
            (PairSide::Bench(a), PairSide::Routine(b)) => {
                routine_by_name(entries, a).map(|a| (a, b.as_mut()))
            }
            (PairSide::Bench(a), PairSide::Bench(b)) => two_by_name(entries, a, b),
        };
        match sides {
            Err(error) => {
                file.failed.push(Failure {
                    name: name.clone(),
                    error,
                });
                file.finalize();
            }
            Ok((a, b)) => {
                let mut ta = InProcess {
                    routine: a,
                    timer: &timer,
                };
                let mut tb = InProcess {
                    routine: b,
                    timer: &timer,
                };
                let m = measure_pair(
                    &mut ta,
                    &mut tb,
                    &MonotonicClock,
                    &plan,
                    &timer.info(),
                    &mut |p| on_event(Event::Progress { name, progress: p }),
                );
                file.push_paired(name, &m, true);
            }
        }
        on_event(Event::Done {
            name,
            result: &file,
        });
    }
    file
}
