use super::*;
use crate::diagnostic::Diagnostic;
use crate::result::ResultFile;

/// `vernier demo` on a 2-vCPU Intel KVM guest with other work running (`system.failing` holds
/// `load`), its raw samples left out (so read as it is, not loaded: the loader checks them):
/// 12 of its 18 ordinary benchmarks carry a machine code.
fn noisy_demo() -> ResultFile {
    let bytes = include_bytes!("../../../tests/fixtures/results/demo-noisy-vm.json");
    serde_json::from_slice(bytes).unwrap()
}

/// Ordinary benchmarks whose diagnostics hold a machine code not marked as the machine's.
fn own_machine_codes(file: &ResultFile) -> usize {
    file.benchmarks
        .iter()
        .filter(|b| ordinary(b))
        .filter(|b| {
            b.diagnostics
                .iter()
                .any(|d| machine_code(d.code) && d.explained_by.is_none())
        })
        .count()
}

#[test]
fn the_noisy_demo_is_disturbed_by_its_machine_and_every_row_keeps_only_its_own_codes() {
    let mut f = noisy_demo();
    let t = Tally::of(&f.benchmarks);
    assert_eq!((t.disturbed, t.ordinary), (12, 18));
    assert!(explain_run(&mut f.benchmarks));
    assert_eq!(own_machine_codes(&f), 0);
    // Nothing is lost: every code is still there, and the others are the rows' own.
    let codes = |f: &ResultFile| -> Vec<Vec<Code>> {
        f.benchmarks
            .iter()
            .map(|b| b.diagnostics.iter().map(|d| d.code).collect())
            .collect()
    };
    assert_eq!(codes(&f), codes(&noisy_demo()));
    for b in &f.benchmarks {
        for d in &b.diagnostics {
            let explained = d.explained_by == Some(ExplainedBy::Machine);
            assert_eq!(
                explained,
                machine_code(d.code) && !b.removed(),
                "{}: {}",
                b.name,
                d.code
            );
        }
    }
    let d = disturbance(&f.benchmarks, &f.harness, &f.system).unwrap();
    assert_eq!((d.disturbed, d.ordinary), (12, 18));
    assert_eq!(d.audit, ["load"]);
    assert_eq!(d.hypervisor.as_deref(), Some("KVM"));
    let share = d.reference_far_share.unwrap();
    assert!((share - 0.023593).abs() < 1e-6, "{share}");
    let n = |code: Code| d.codes.iter().find(|(c, _)| *c == code).map(|(_, n)| *n);
    assert_eq!(n(Code::NoSteadyState), Some(5));
    assert_eq!(n(Code::Unstable), Some(5));
    assert_eq!(n(Code::Outliers), Some(3));
    assert_eq!(n(Code::CoreSlowed), Some(4));
    assert_eq!(n(Code::Nonlinear), None);
    assert!(d.clock_ghz.is_some());
}

#[test]
fn rows_printed_as_they_come_show_at_most_a_quarter_of_the_codes_the_machine_explains() {
    // As `vernier run` and the demo print them: each row marked by the run so far.
    let all = noisy_demo().benchmarks;
    let mut so_far = Vec::new();
    let mut shown_with_machine_codes = 0;
    for b in all {
        so_far.push(b);
        explain_run(&mut so_far);
        let row = so_far.last().unwrap();
        if ordinary(row)
            && row
                .diagnostics
                .iter()
                .any(|d| machine_code(d.code) && d.explained_by.is_none())
        {
            shown_with_machine_codes += 1;
        }
    }
    // add and mul, before the run had four ordinary rows.
    assert_eq!(shown_with_machine_codes, 2);
    assert!(shown_with_machine_codes * 4 <= 18);
}

#[test]
fn a_quiet_run_keeps_every_code_its_rows_own() {
    let mut f = noisy_demo();
    // Only three of the eighteen keep their machine codes.
    let mut kept = 0;
    for b in f.benchmarks.iter_mut().filter(|b| ordinary(b)) {
        let has = b.diagnostics.iter().any(|d| machine_code(d.code));
        if has && kept < 3 {
            kept += 1;
        } else {
            b.diagnostics.retain(|d| !machine_code(d.code));
        }
    }
    // Compared as written (a removed body's median is NaN, never equal to itself).
    let before = serde_json::to_string(&f).unwrap();
    assert!(!explain_run(&mut f.benchmarks));
    assert_eq!(serde_json::to_string(&f).unwrap(), before);
    assert_eq!(own_machine_codes(&f), 3);
    assert!(disturbance(&f.benchmarks, &f.harness, &f.system).is_none());
}

#[test]
fn a_mark_the_whole_run_does_not_bear_out_is_cleared() {
    let mut f = noisy_demo();
    explain_run(&mut f.benchmarks[..6]);
    assert!(f.benchmarks[0].diagnostics[0].explained_by.is_some());
    // The rest of the run quiet: most of its ordinary benchmarks are not disturbed.
    for b in f.benchmarks[6..].iter_mut() {
        b.diagnostics.retain(|d| !machine_code(d.code));
    }
    assert!(!explain_run(&mut f.benchmarks));
    assert!(f
        .benchmarks
        .iter()
        .flat_map(|b| &b.diagnostics)
        .all(|d| d.explained_by.is_none()));
}

#[test]
fn too_few_benchmarks_to_tell_the_machine_from_them() {
    let mut f = noisy_demo();
    let disturbed: Vec<_> = f
        .benchmarks
        .iter()
        .filter(|b| ordinary(b) && b.diagnostics.iter().any(|d| machine_code(d.code)))
        .take(MIN_ORDINARY - 1)
        .cloned()
        .collect();
    f.benchmarks = disturbed;
    assert!(!explain_run(&mut f.benchmarks));
}

#[test]
fn threaded_failed_and_removed_benchmarks_are_not_ordinary_nor_theirs_marked_when_removed() {
    let f = noisy_demo();
    let names: Vec<&str> = f
        .benchmarks
        .iter()
        .filter(|b| !ordinary(b))
        .map(|b| b.name.as_str())
        .collect();
    assert!(names.contains(&"sqrt(4.2) without barrier"), "{names:?}");
    assert!(names.contains(&"counter per thread/threads:2"), "{names:?}");
    assert_eq!(names.len(), 8, "{names:?}");
    let mut b = f.benchmarks[0].clone();
    b.status = Status::Failed;
    let t = Tally::of(std::slice::from_ref(&b));
    assert_eq!(t.ordinary, 0);
}

#[test]
fn the_mark_is_written_and_read_as_explained_by_machine() {
    let mut d = Diagnostic::new(Code::Unstable, "noisy");
    assert!(!serde_json::to_string(&d).unwrap().contains("explained_by"));
    d.explained_by = Some(ExplainedBy::Machine);
    let json = serde_json::to_value(&d).unwrap();
    assert_eq!(json["explained_by"], "machine");
    let back: Diagnostic = serde_json::from_value(json).unwrap();
    assert_eq!(back, d);
}
