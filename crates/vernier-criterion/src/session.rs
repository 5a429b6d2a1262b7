//! The passes over a program's group functions: a listing pass that records each
//! benchmark's name without running it, then running passes in which only the benchmark the
//! [`Driver`] wants is entered, its `iter…` call handing the routine to the driver, which
//! measures it until it wants another. The state lives in a thread-local [`Session`] while
//! the group functions run.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Mutex;
use vernier::workload::routine::Routine;

/// What runs the benchmarks the passes reach: the runner's protocol, the standalone suite, or
/// the test mode.
pub trait Driver {
    /// The first benchmark wanted, or the next one when none is current (`None`: done).
    fn next(&mut self) -> Option<usize>;
    /// Benchmark `index`'s routine, alive for this call: measure it while it is wanted, then
    /// say which benchmark is wanted next (`None`: done).
    fn serve(&mut self, index: usize, routine: &mut dyn Routine) -> Option<usize>;
    /// Benchmark `index` cannot run (`why`); the next wanted.
    fn fail(&mut self, index: usize, why: String) -> Option<usize>;
}

/// A benchmark as the listing pass found it.
#[derive(Clone, Debug)]
pub struct Listed {
    pub name: String,
    pub throughput: Option<vernier::Throughput>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Pass {
    List,
    Run,
}

struct Session {
    pass: Pass,
    listed: Vec<Listed>,
    /// Per target function (in call order over the groups), its benchmarks' indices.
    targets: Vec<(usize, usize)>,
    next_index: usize,
    next_target: usize,
    want: Option<usize>,
    /// The wanted benchmark was reached in this pass.
    reached: bool,
    /// Why the last target function panicked, for the benchmark it did not reach.
    panicked: Option<String>,
    /// Registration errors of the listing pass (a benchmark registered twice…).
    errors: Vec<String>,
    driver: Option<Box<dyn Driver>>,
}

thread_local! {
    static SESSION: RefCell<Option<Session>> = const { RefCell::new(None) };
}

impl Session {
    /// A pass at its start: over the benchmarks `listing` holds (none yet for the listing
    /// pass), measuring with `driver` in a running pass.
    fn start(pass: Pass, listing: Listing, driver: Option<Box<dyn Driver>>) -> Session {
        Session {
            pass,
            listed: listing.listed,
            targets: listing.targets,
            next_index: 0,
            next_target: 0,
            want: None,
            reached: false,
            panicked: None,
            errors: Vec::new(),
            driver,
        }
    }
}

fn take() -> Option<Session> {
    SESSION.with(|s| s.borrow_mut().take())
}

fn put(s: Session) {
    SESSION.with(|c| *c.borrow_mut() = Some(s));
}

/// The settings met in the listing pass that mean nothing here, each with why.
static NOTED: Mutex<Vec<(String, &'static str)>> = Mutex::new(Vec::new());

/// Record that `setting` is ignored, and why: said once on standard error after the listing.
pub fn note(setting: &str, why: &'static str) {
    let listing = SESSION.with(|s| {
        s.try_borrow()
            .ok()
            .and_then(|s| s.as_ref().map(|s| s.pass == Pass::List))
            .unwrap_or(false)
    });
    if let (true, Ok(mut n)) = (listing, NOTED.lock()) {
        if !n.iter().any(|(s, _)| s == setting) {
            n.push((setting.to_string(), why));
        }
    }
}

/// Say the ignored settings, one line per reason.
pub fn say_notes() {
    let Ok(n) = NOTED.lock() else { return };
    let mut said = BTreeSet::new();
    for (_, why) in n.iter() {
        if !said.insert(*why) {
            continue;
        }
        let settings: Vec<&str> = n
            .iter()
            .filter(|(_, w)| w == why)
            .map(|(s, _)| s.as_str())
            .collect();
        eprintln!("vernier-criterion: ignored: {}: {why}", settings.join(", "));
    }
}

/// A registration the program cannot have: recorded in the listing pass (the program then
/// stops with it), said on standard error outside a session.
pub fn refuse(msg: &str) {
    let recorded = SESSION.with(|s| match s.try_borrow_mut() {
        Ok(mut s) => match s.as_mut() {
            Some(s) if s.pass == Pass::List => {
                s.errors.push(msg.to_string());
                true
            }
            Some(_) => true,
            None => false,
        },
        Err(_) => false,
    });
    if !recorded {
        eprintln!("vernier-criterion: {msg}");
    }
}

/// The `iter…` call's link to the driver, in the [`Bencher`](crate::Bencher) of the
/// benchmark entered.
pub struct Slot<'a> {
    driver: &'a mut dyn Driver,
    index: usize,
    /// After the first `iter…` call: the benchmark wanted next (kept by [`visit`], which
    /// reads it even when the closure panicked after that call).
    outcome: &'a mut Option<Option<usize>>,
}

impl Slot<'_> {
    pub fn serve(&mut self, routine: &mut dyn Routine) {
        // A second `iter…` in the same closure call: the benchmark was measured already.
        if self.outcome.is_none() {
            *self.outcome = Some(self.driver.serve(self.index, routine));
        }
    }
}

/// A benchmark named `name`: recorded in the listing pass; entered in a running pass when
/// it is the one wanted (`enter` then hands its slot to the benchmark's `Bencher`, one of
/// whose `iter…` methods serves the routine through it), skipped otherwise.
pub fn visit(
    name: String,
    throughput: Option<vernier::Throughput>,
    enter: &mut dyn FnMut(Slot<'_>),
) {
    let Some(mut s) = take() else {
        eprintln!(
            "vernier-criterion: benchmark '{name}' is registered outside criterion_main!'s groups \
             (or inside another benchmark's closure): skipped"
        );
        return;
    };
    let index = s.next_index;
    s.next_index += 1;
    match s.pass {
        Pass::List => {
            if s.listed.iter().any(|l| l.name == name) {
                s.errors.push(format!(
                    "benchmark '{name}' is registered twice; give each benchmark its own name"
                ));
            }
            s.listed.push(Listed { name, throughput });
        }
        Pass::Run if s.want == Some(index) => {
            s.reached = true;
            let listed = s.listed.get(index).map(|l| l.name.clone());
            let driver = s
                .driver
                .as_deref_mut()
                .expect("a running pass has a driver");
            let next = if listed.as_deref() != Some(name.as_str()) {
                driver.fail(
                    index,
                    format!(
                        "registered as '{name}' where '{}' was listed: a group function must \
                         register the same benchmarks, in the same order, each time it runs",
                        listed.unwrap_or_default()
                    ),
                )
            } else {
                let mut outcome = None;
                let r = panic::catch_unwind(AssertUnwindSafe(|| {
                    enter(Slot {
                        driver: &mut *driver,
                        index,
                        outcome: &mut outcome,
                    })
                }));
                match (outcome, r) {
                    (Some(next), _) => next,
                    (None, Err(p)) => driver.fail(
                        index,
                        format!("its closure panicked: {}", panic_message(&p)),
                    ),
                    (None, Ok(())) => driver.fail(
                        index,
                        "its closure called none of Bencher's iter methods".to_string(),
                    ),
                }
            };
            s.want = next;
        }
        Pass::Run => {}
    }
    put(s);
}

/// One target function of a `criterion_group!`, on the group's `Criterion` `c`: run in the
/// listing pass, recording which benchmarks it registers; in a running pass, run only when it
/// registers the one wanted.
pub fn target<C>(c: &mut C, f: fn(&mut C)) {
    let Some(mut s) = take() else {
        f(c);
        return;
    };
    let (start, end) = match s.pass {
        Pass::List => (s.next_index, None),
        Pass::Run => {
            let k = s.next_target;
            s.next_target += 1;
            let (a, b) = s
                .targets
                .get(k)
                .copied()
                .unwrap_or((usize::MAX, usize::MAX));
            if !s.want.is_some_and(|w| (a..b).contains(&w)) {
                s.next_index = b;
                put(s);
                return;
            }
            s.next_index = a;
            (a, Some(b))
        }
    };
    put(s);
    let r = panic::catch_unwind(AssertUnwindSafe(|| f(c)));
    let Some(mut s) = take() else { return };
    if let Err(p) = r {
        let why = format!("its group function panicked: {}", panic_message(&p));
        if s.pass == Pass::List {
            s.errors.push(why.clone());
        }
        s.panicked = Some(why);
    }
    match end {
        None => {
            let stop = s.next_index;
            s.targets.push((start, stop));
        }
        Some(b) => s.next_index = b,
    }
    put(s);
}

pub fn panic_message(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(non-string panic)".into())
}

/// What the listing pass found.
#[derive(Clone, Debug, Default)]
pub struct Listing {
    pub listed: Vec<Listed>,
    pub targets: Vec<(usize, usize)>,
}

/// The listing pass: every group function runs, no benchmark's closure does.
pub fn list(groups: &[fn()]) -> Result<Listing, Vec<String>> {
    put(Session::start(Pass::List, Listing::default(), None));
    for g in groups {
        g();
    }
    let s = take().expect("the listing session is put back after each benchmark");
    if s.errors.is_empty() {
        Ok(Listing {
            listed: s.listed,
            targets: s.targets,
        })
    } else {
        Err(s.errors)
    }
}

/// The running passes: the group functions run again until the driver wants nothing more,
/// each pass entering the benchmarks wanted in order.
pub fn run_passes(groups: &[fn()], listing: &Listing, driver: Box<dyn Driver>) {
    put(Session::start(Pass::Run, listing.clone(), Some(driver)));
    let with = |f: &mut dyn FnMut(&mut Session)| {
        let mut s = take().expect("the running session is put back after each benchmark");
        f(&mut s);
        put(s);
    };
    with(&mut |s| s.want = s.driver.as_deref_mut().and_then(|d| d.next()));
    let count = listing.listed.len();
    loop {
        let mut want = None;
        with(&mut |s| {
            // A benchmark the listing does not have: the driver answers for it.
            while let Some(w) = s.want.filter(|&w| w >= count) {
                let d = s
                    .driver
                    .as_deref_mut()
                    .expect("a running pass has a driver");
                s.want = d.fail(w, format!("no benchmark {w} (there are {count})"));
            }
            want = s.want;
            s.next_index = 0;
            s.next_target = 0;
            s.reached = false;
            s.panicked = None;
        });
        let Some(w) = want else { break };
        for g in groups {
            g();
        }
        with(&mut |s| {
            if s.want == Some(w) && !s.reached {
                let why = s.panicked.take().unwrap_or_else(|| {
                    "not registered when its group function ran again: a group function must \
                     register the same benchmarks, in the same order, each time it runs"
                        .to_string()
                });
                let d = s
                    .driver
                    .as_deref_mut()
                    .expect("a running pass has a driver");
                s.want = d.fail(w, why);
            }
        });
    }
    take();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Criterion;
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    use vernier::timer::Timer;

    static FIRST_RUNS: AtomicUsize = AtomicUsize::new(0);
    static SECOND_RUNS: AtomicUsize = AtomicUsize::new(0);
    static BODY_CALLS: AtomicUsize = AtomicUsize::new(0);

    fn first(c: &mut Criterion) {
        FIRST_RUNS.fetch_add(1, Relaxed);
        let local = [1u64, 2, 3];
        c.bench_function("a", |b| b.iter(|| local.iter().sum::<u64>()));
        let mut g = c.benchmark_group("g");
        g.throughput(crate::Throughput::Elements(3));
        g.bench_function("b", |b| {
            b.iter(|| {
                BODY_CALLS.fetch_add(1, Relaxed);
            })
        });
        g.finish();
    }

    fn second(c: &mut Criterion) {
        SECOND_RUNS.fetch_add(1, Relaxed);
        c.bench_function("c", |_b| {});
    }

    crate::criterion_group!(benches, first, second);

    /// Wants the benchmarks of `script` in turn, sampling each once.
    struct Scripted {
        script: Vec<usize>,
        served: Vec<usize>,
        failed: Vec<(usize, String)>,
    }

    impl Driver for Scripted {
        fn next(&mut self) -> Option<usize> {
            (!self.script.is_empty()).then(|| self.script.remove(0))
        }
        fn serve(&mut self, index: usize, routine: &mut dyn Routine) -> Option<usize> {
            routine.sample(&Timer::monotonic(), 10);
            self.served.push(index);
            self.next()
        }
        fn fail(&mut self, index: usize, why: String) -> Option<usize> {
            self.failed.push((index, why));
            self.next()
        }
    }

    impl Driver for std::rc::Rc<RefCell<Scripted>> {
        fn next(&mut self) -> Option<usize> {
            self.borrow_mut().next()
        }
        fn serve(&mut self, index: usize, routine: &mut dyn Routine) -> Option<usize> {
            self.borrow_mut().serve(index, routine)
        }
        fn fail(&mut self, index: usize, why: String) -> Option<usize> {
            self.borrow_mut().fail(index, why)
        }
    }

    #[test]
    fn the_passes_list_then_enter_only_the_benchmark_wanted() {
        let groups: Vec<fn()> = vec![benches];
        let listing = list(&groups).unwrap();
        let names: Vec<&str> = listing.listed.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["a", "g/b", "c"]);
        assert_eq!(
            listing.listed[1].throughput,
            Some(vernier::Throughput::ItemsPerIter(3))
        );
        assert_eq!(listing.targets, [(0, 2), (2, 3)]);
        assert_eq!(BODY_CALLS.load(Relaxed), 0, "the listing runs no body");
        let (first_before, second_before) = (FIRST_RUNS.load(Relaxed), SECOND_RUNS.load(Relaxed));
        // Backwards, a benchmark twice, one that calls no iter method, one that does not exist.
        let driver = std::rc::Rc::new(RefCell::new(Scripted {
            script: vec![1, 0, 1, 2, 7],
            served: Vec::new(),
            failed: Vec::new(),
        }));
        run_passes(&groups, &listing, Box::new(driver.clone()));
        let d = driver.borrow();
        assert_eq!(d.served, [1, 0, 1]);
        assert_eq!(BODY_CALLS.load(Relaxed), 20);
        let failed: Vec<usize> = d.failed.iter().map(|(i, _)| *i).collect();
        assert_eq!(failed, [2, 7]);
        assert!(d.failed[0].1.contains("none of Bencher's iter methods"));
        assert!(d.failed[1].1.contains("no benchmark 7 (there are 3)"));
        // A pass goes on forward while the benchmarks wanted come later in it: `first` ran
        // twice (1; then 0 in a new pass, and 1 again in the same), `second` only for `c`.
        assert_eq!(FIRST_RUNS.load(Relaxed) - first_before, 2);
        assert_eq!(SECOND_RUNS.load(Relaxed) - second_before, 1);
    }
}
