//! The linearity ladder: the sample time fitted against the iteration count, on the rungs
//! measured in the headline's state of the core.

use crate::measure::Measurement;
use crate::samples::Phase;
use crate::stats::{self, LinearFit};
use std::collections::BTreeMap;

/// The linearity test on the steady ladder: T = a + b·N fitted to the median sample
/// time at each iteration count (medians, so interrupts cannot bend the line), each sample's
/// time in units of `unit(i)` ns (1: in ns; the cycle time around it: in cycles).
///
/// The ladder is read where the headline was: the samples at the main count in `head`, and
/// each rung at another count only when the main-count sample nearest before it in its part
/// (after it, at the part's start) is in `head`. A round run wholly while a busy neighbour
/// slowed the core holds rungs a third slower than the headline's state; pooled with the
/// headline's they bend the line by what the machine did, not by what the code does.
pub(super) fn linearity(
    m: &Measurement,
    head: &[usize],
    skip: &dyn Fn(usize) -> bool,
    unit: &dyn Fn(usize) -> f64,
) -> Option<LinearFit> {
    let s = &m.samples.samples;
    let mut in_head = vec![false; s.len()];
    for &i in head {
        in_head[i] = true;
    }
    let mut by_n: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    for i in ladder_in_state(m, &in_head) {
        if !skip(i) {
            by_n.entry(s[i].iters)
                .or_default()
                .push(s[i].ns as f64 / unit(i));
        }
    }
    if by_n.len() < 2 {
        return None;
    }
    let xs: Vec<f64> = by_n.keys().map(|&k| k as f64).collect();
    let ys: Vec<f64> = by_n.values().map(|v| stats::median(v)).collect();
    stats::linear_fit(&xs, &ys)
}

/// The measured samples of the ladder in the headline's state (`in_head`, per sample): the
/// headline's own at the main count, and the rungs at other counts whose nearest main-count
/// sample in their part (process and round) is a headline one.
fn ladder_in_state(m: &Measurement, in_head: &[bool]) -> Vec<usize> {
    let s = &m.samples.samples;
    let at_main = |i: usize| s[i].iters == m.iters_per_sample && s[i].phase != Phase::Calibration;
    let mut last: BTreeMap<(u32, u32), bool> = BTreeMap::new();
    let mut waiting: BTreeMap<(u32, u32), Vec<usize>> = BTreeMap::new();
    let mut out = Vec::new();
    for i in 0..s.len() {
        let part = (s[i].process, s[i].round);
        if at_main(i) {
            // Rungs before the part's first main-count sample take its state.
            for j in waiting.remove(&part).unwrap_or_default() {
                if in_head[i] {
                    out.push(j);
                }
            }
            last.insert(part, in_head[i]);
            if in_head[i] {
                out.push(i);
            }
        } else if s[i].phase == Phase::Measure {
            match last.get(&part) {
                Some(&state) => {
                    if state {
                        out.push(i);
                    }
                }
                None => waiting.entry(part).or_default().push(i),
            }
        }
    }
    out.sort_unstable();
    out
}
