//! The lines said once for a run about its machine: the one for a run the machine disturbed
//! (`result::machine_noise`): how many of its ordinary benchmarks carried which of the
//! machine's codes (left out of their rows), the run's own measure of the machine's
//! interruptions, the clock's range when the core was slowed, what the audit found, and the
//! fix; and the one for a run under emulation, whose times are not the hardware's.

use crate::result::machine_noise::{disturbance, Disturbance};
use crate::result::ResultFile;

/// The line for `file`, `None` when its machine did not disturb most of its ordinary
/// benchmarks.
pub fn disturbance_line(file: &ResultFile) -> Option<String> {
    disturbance(&file.benchmarks, &file.harness, &file.system).map(|d| words(&d))
}

/// The line for a run measured under user-mode emulation (the audit's `system.emulation`, the
/// emulation in words): no time it measured is the hardware's. `None` natively.
pub fn emulation_line(file: &ResultFile) -> Option<String> {
    let how = file.system["emulation"].as_str()?;
    Some(format!(
        "emulated: {how}: every time measured here is the emulator's translation of the code, \
         not the hardware's, so neither a figure nor a verdict that rests on time (a body \
         removed, judged by its time) says anything of a real CPU; what does not time (the \
         measured loop's instructions, `vernier asm`) does (docs/platforms.md)."
    ))
}

/// [`Disturbance`] in words.
pub fn words(d: &Disturbance) -> String {
    let codes: Vec<String> = d.codes.iter().map(|(c, n)| format!("{c} {n}")).collect();
    let mut causes = Vec::new();
    let noisy = d
        .codes
        .iter()
        .any(|(c, _)| *c != crate::diagnostic::Code::CoreSlowed);
    if noisy {
        let measure = match d.reference_far_share {
            Some(share) => format!(
                "before the first benchmark, {:.1} % of the samples of a reference chain of adds \
                 were far outliers (interruptions)",
                share * 100.0
            ),
            None => "the run kept no measure of it".to_string(),
        };
        causes.push(format!(
            "other work, interrupts or the hypervisor took the CPU ({measure}; `vernier system \
             noise` measures the time each CPU loses)"
        ));
    }
    if let Some([lo, hi]) = d.clock_ghz {
        causes.push(format!("the core's clock moved ({lo:.2}–{hi:.2} GHz)"));
    }
    let mut found = Vec::new();
    if d.audit.iter().any(|c| c == "load") {
        found.push("other work competes for the CPU (`top` names it)".to_string());
    }
    if let Some(h) = &d.hypervisor {
        found.push(format!(
            "a virtual machine ({h}), whose host can take its CPUs"
        ));
    }
    let audit = if found.is_empty() {
        String::new()
    } else {
        format!("; the audit found {}", found.join(" and "))
    };
    format!(
        "machine disturbed: {} of {} benchmarks carried its codes ({}), the same cause for all, \
         so their rows leave those codes out (the result file keeps them, marked \
         explained_by machine): {}{audit}. Fix: stop the other work, pin to a quiet CPU \
         (--cpu; `vernier system noise` finds one), run longer (--time), and see `vernier \
         system show`.",
        d.disturbed,
        d.ordinary,
        codes.join(", "),
        causes.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Code;

    fn disturbed() -> Disturbance {
        Disturbance {
            disturbed: 12,
            ordinary: 18,
            codes: vec![(Code::Unstable, 5), (Code::CoreSlowed, 4)],
            reference_far_share: Some(0.0236),
            clock_ghz: Some([2.648, 2.996]),
            audit: vec!["load".into()],
            hypervisor: Some("KVM".into()),
        }
    }

    #[test]
    fn the_line_names_the_rows_their_codes_the_measure_and_the_fix() {
        let line = words(&disturbed());
        for part in [
            "12 of 18 benchmarks",
            "unstable 5, core-slowed 4",
            "2.4 % of the samples of a reference chain",
            "`vernier system noise`",
            "2.65–3.00 GHz",
            "other work competes",
            "KVM",
            "Fix: stop the other work",
            "--cpu",
        ] {
            assert!(line.contains(part), "{part:?} not in {line}");
        }
    }

    #[test]
    fn the_noisy_demo_renders_the_machine_once_and_its_rows_without_its_codes() {
        let bytes = include_bytes!("../../../tests/fixtures/results/demo-noisy-vm.json");
        let mut f: ResultFile = serde_json::from_slice(bytes).unwrap();
        crate::result::machine_noise::explain_run(&mut f.benchmarks);
        let text = crate::report::render_file(&f, crate::report::Render::default());
        let (table, below) = text.split_once("\n\n").unwrap();
        for code in crate::result::machine_noise::MACHINE_CODES {
            assert!(!table.contains(code.as_str()), "{code} in a row:\n{table}");
            // Nor explained per benchmark below the table: the machine line says it.
            assert!(!below.contains(&format!("\n{code} (")), "{code}:\n{below}");
        }
        let lines: Vec<&str> = below
            .lines()
            .filter(|l| l.starts_with("machine disturbed"))
            .collect();
        assert_eq!(lines.len(), 1, "{below}");
        assert!(
            below.contains("12 of 18 benchmarks carried its codes"),
            "{below}"
        );
        assert!(below.contains("2.4 % of the samples"), "{below}");
        // The rows' own codes stay in them.
        assert!(
            table.contains("optimized-away") && table.contains("contended"),
            "{table}"
        );
    }

    #[test]
    fn a_run_under_emulation_says_its_times_are_the_emulators() {
        let bytes = include_bytes!("../../../tests/fixtures/results/demo-noisy-vm.json");
        let mut f: ResultFile = serde_json::from_slice(bytes).unwrap();
        assert_eq!(emulation_line(&f), None);
        f.system["emulation"] = "aarch64 code on an x86_64 CPU (user-mode emulation)".into();
        let line = emulation_line(&f).unwrap();
        assert!(
            line.starts_with("emulated: aarch64 code on an x86_64 CPU"),
            "{line}"
        );
        let text = crate::report::render_file(&f, crate::report::Render::default());
        assert_eq!(text.matches("\nemulated: ").count(), 1, "{text}");
    }

    #[test]
    fn a_slowed_core_alone_is_not_called_interruptions() {
        let d = Disturbance {
            codes: vec![(Code::CoreSlowed, 12)],
            audit: vec![],
            hypervisor: None,
            ..disturbed()
        };
        let line = words(&d);
        assert!(!line.contains("reference chain"), "{line}");
        assert!(line.contains("the core's clock moved"), "{line}");
        assert!(!line.contains("the audit found"), "{line}");
    }
}
