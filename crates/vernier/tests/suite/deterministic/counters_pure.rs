//! The parts of `counters` that need no system call, against synthetic group reads.

use vernier::counters::*;

fn sample(pairs: &[(Event, u64)]) -> CounterSample {
    let mut s = CounterSample::default();
    for &(e, v) in pairs {
        s.set(e, Some(v), false);
    }
    s
}

#[test]
fn event_list_parses_perf_names_in_order_without_duplicates() {
    let l = parse_event_list("instructions, cycles,instructions,page-faults").unwrap();
    assert_eq!(
        l,
        vec![Event::Instructions, Event::Cycles, Event::PageFaults]
    );
    assert_eq!(
        parse_event_list("L1-dcache-load-misses").unwrap(),
        vec![Event::L1dLoadMisses]
    );
    assert_eq!(
        parse_event_list("default").unwrap(),
        DEFAULT_EVENTS.to_vec()
    );
    assert_eq!(
        parse_event_list("default,branches").unwrap().last(),
        Some(&Event::Branches)
    );
}

#[test]
fn unknown_event_names_the_valid_ones() {
    let err = parse_event_list("cycles,cylces").unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("`cylces`"), "{msg}");
    for e in Event::ALL {
        assert!(msg.contains(e.name()), "{msg} lacks {}", e.name());
    }
    assert!(matches!(
        parse_event_list(" , "),
        Err(CounterError::EmptyList { .. })
    ));
}

#[test]
fn default_set_is_four_hardware_and_the_software_events() {
    let hw = DEFAULT_EVENTS
        .iter()
        .filter(|e| e.kind() == EventKind::Hardware)
        .count();
    assert_eq!(hw, 4);
    for e in [
        Event::TaskClock,
        Event::ContextSwitches,
        Event::CpuMigrations,
        Event::PageFaults,
    ] {
        assert!(DEFAULT_EVENTS.contains(&e));
    }
}

/// `[nr, enabled, running, v0, id0, v1, id1, …]`
fn buf(enabled: u64, running: u64, vals: &[(u64, u64)]) -> Vec<u64> {
    let mut b = vec![vals.len() as u64, enabled, running];
    for &(v, id) in vals {
        b.push(v);
        b.push(id);
    }
    b
}

#[test]
fn group_read_buffer_is_parsed_and_ids_checked() {
    let b = buf(1000, 900, &[(11, 7), (22, 8)]);
    assert_eq!(group_read_len(2), b.len());
    let r = parse_group_read(&b, Some(&[7, 8])).unwrap();
    assert_eq!(
        r,
        GroupRead {
            time_enabled: 1000,
            time_running: 900,
            values: vec![11, 22]
        }
    );
    assert!(parse_group_read(&b, None).is_ok());
    assert!(parse_group_read(&b, Some(&[7, 9])).is_err());
    assert!(parse_group_read(&b, Some(&[7])).is_err());
    assert!(parse_group_read(&b[..5], None).is_err());
    assert!(parse_group_read(&[], None).is_err());
}

#[test]
fn scaling_is_exact_scaled_or_absent() {
    assert_eq!(scale(100, 50, 50), (Some(100), Scaling::Exact));
    assert_eq!(scale(100, 100, 25), (Some(400), Scaling::Scaled));
    assert_eq!(scale(3, 3, 2), (Some(5), Scaling::Scaled)); // 4.5 rounds to 5
    assert_eq!(scale(100, 100, 0), (None, Scaling::NotCounted));
    // Nothing enabled and nothing running: no time passed, the raw delta is exact.
    assert_eq!(scale(0, 0, 0), (Some(0), Scaling::Exact));
    // No overflow on huge counts.
    assert_eq!(
        scale(u64::MAX / 2, 4, 2),
        (Some(u64::MAX - 1), Scaling::Scaled)
    );
}

#[test]
fn deltas_of_an_exact_group() {
    let events = [Event::Cycles, Event::Instructions];
    let start = buf(1_000, 1_000, &[(5_000, 1), (9_000, 2)]);
    let stop = buf(2_000, 2_000, &[(8_000, 1), (15_000, 2)]);
    let mut s = CounterSample::default();
    let how = group_delta(&events, &start, &stop, Some(&[1, 2]), &mut s).unwrap();
    assert_eq!(how, Scaling::Exact);
    assert_eq!(s.get(Event::Cycles), Some(3_000));
    assert_eq!(s.get(Event::Instructions), Some(6_000));
    assert!(!s.any_scaled());
    assert_eq!(s.get(Event::Branches), None);
}

#[test]
fn deltas_of_a_multiplexed_group_are_scaled_and_flagged() {
    let events = [Event::Cycles, Event::BranchMisses];
    // Enabled 1000 ns more, ran 250 ns of them: counts ×4.
    let start = buf(10_000, 8_000, &[(1_000, 1), (10, 2)]);
    let stop = buf(11_000, 8_250, &[(1_500, 1), (15, 2)]);
    let mut s = CounterSample::default();
    let how = group_delta(&events, &start, &stop, None, &mut s).unwrap();
    assert_eq!(how, Scaling::Scaled);
    assert_eq!(s.get(Event::Cycles), Some(2_000));
    assert_eq!(s.get(Event::BranchMisses), Some(20));
    assert!(s.is_scaled(Event::Cycles) && s.is_scaled(Event::BranchMisses));
    assert!(s.any_scaled());
}

#[test]
fn a_group_that_never_ran_has_no_values_not_zero() {
    let events = [Event::Cycles];
    let start = buf(10_000, 8_000, &[(1_000, 1)]);
    let stop = buf(11_000, 8_000, &[(1_000, 1)]);
    let mut s = CounterSample::default();
    let how = group_delta(&events, &start, &stop, None, &mut s).unwrap();
    assert_eq!(how, Scaling::NotCounted);
    assert_eq!(s.get(Event::Cycles), None);
}

#[test]
fn mismatched_reads_are_an_error() {
    let events = [Event::Cycles, Event::Instructions];
    let start = buf(1, 1, &[(1, 1), (2, 2)]);
    let stop = buf(2, 2, &[(1, 1)]);
    let mut s = CounterSample::default();
    assert!(group_delta(&events, &start, &stop, None, &mut s).is_err());
    assert!(group_delta(&events[..1], &start, &start, None, &mut s).is_err());
}

#[test]
fn interrupted_means_a_switch_or_a_migration_and_unknown_is_not_no() {
    assert_eq!(is_interrupted(&CounterSample::default()), None);
    let quiet = sample(&[(Event::ContextSwitches, 0), (Event::CpuMigrations, 0)]);
    assert_eq!(is_interrupted(&quiet), Some(false));
    assert_eq!(
        is_interrupted(&sample(&[(Event::ContextSwitches, 1)])),
        Some(true)
    );
    assert_eq!(
        is_interrupted(&sample(&[
            (Event::ContextSwitches, 0),
            (Event::CpuMigrations, 2)
        ])),
        Some(true)
    );
}

#[test]
fn baseline_subtraction_saturates_and_keeps_absent_events_absent() {
    let s = sample(&[(Event::Instructions, 100), (Event::TaskClock, 5)]);
    let base = sample(&[(Event::Instructions, 30), (Event::TaskClock, 9)]);
    let d = s.saturating_sub(&base);
    assert_eq!(d.get(Event::Instructions), Some(70));
    assert_eq!(d.get(Event::TaskClock), Some(0));
    assert_eq!(d.get(Event::Cycles), None);
    let partial = s.saturating_sub(&sample(&[(Event::TaskClock, 1)]));
    assert_eq!(partial.get(Event::Instructions), None);
}

#[test]
fn columns_keep_gaps_as_absent_values() {
    let mut a = sample(&[(Event::Cycles, 10), (Event::TaskClock, 5)]);
    let b = sample(&[(Event::TaskClock, 6)]);
    let events = [Event::Cycles, Event::Instructions, Event::TaskClock];
    let cols = to_columns(&events, &[a, b]);
    assert_eq!(cols.len(), 2, "instructions was never counted: no column");
    assert_eq!(cols[0].event, "cycles");
    assert_eq!(cols[0].values, vec![Some(10), None]);
    assert_eq!(cols[1].event, "task-clock");
    assert_eq!(cols[1].values, vec![Some(5), Some(6)]);
    assert!(cols.iter().all(|c| c.scaled.is_empty()));

    a.set(Event::Cycles, Some(40), true);
    let c = sample(&[(Event::Cycles, 11), (Event::TaskClock, 7)]);
    let cols = to_columns(&events, &[a, c]);
    assert_eq!(cols[0].event, "cycles");
    assert_eq!(cols[0].values, vec![Some(40), Some(11)]);
    assert_eq!(cols[0].scaled, vec![true, false]);
    assert!(cols[1].scaled.is_empty());
    assert!(to_columns(&events, &[]).is_empty());
}

#[test]
fn failures_are_explained_with_their_fix() {
    let vm = Environment {
        virtual_machine: true,
        cpu_pmu: false,
        paranoid: Some(2),
    };
    let metal = Environment {
        virtual_machine: false,
        cpu_pmu: true,
        paranoid: Some(4),
    };
    for errno in [libc::ENOENT, libc::EOPNOTSUPP] {
        let u = classify_failure(Event::Cycles, errno, &vm);
        assert!(u
            .reason
            .contains("no PMU is exposed to this virtual machine"));
        assert!(u.fix.unwrap().contains("-cpu host"));
    }
    let u = classify_failure(Event::L1dLoadMisses, libc::ENOENT, &metal);
    assert!(u.reason.contains("does not support"), "{}", u.reason);
    assert_eq!(u.fix, None);
    let u = classify_failure(Event::Cycles, libc::EACCES, &metal);
    assert!(
        u.reason.contains("perf_event_paranoid is 4"),
        "{}",
        u.reason
    );
    assert!(u
        .fix
        .unwrap()
        .contains("sysctl kernel.perf_event_paranoid=1"));
    let u = classify_failure(Event::ContextSwitches, libc::EACCES, &vm);
    assert!(u.reason.contains("scheduler events"), "{}", u.reason);
    let u = classify_failure(Event::TaskClock, libc::EPERM, &vm);
    assert!(u.reason.contains("seccomp"), "{}", u.reason);
    assert!(u.fix.is_some());
    let u = classify_failure(Event::TaskClock, libc::ENOSYS, &vm);
    assert!(u.reason.contains("ENOSYS"));
}

#[test]
fn one_note_groups_events_by_reason() {
    assert_eq!(unavailable_note(&[]), None);
    let vm = Environment {
        virtual_machine: true,
        cpu_pmu: false,
        paranoid: Some(2),
    };
    let list = vec![
        classify_failure(Event::Cycles, libc::ENOENT, &vm),
        classify_failure(Event::Instructions, libc::ENOENT, &vm),
        classify_failure(Event::ContextSwitches, libc::EACCES, &vm),
    ];
    let note = unavailable_note(&list).unwrap();
    assert!(
        note.contains("cycles, instructions: no PMU is exposed"),
        "{note}"
    );
    assert!(
        note.contains("context-switches: counting scheduler events"),
        "{note}"
    );
    assert!(note.contains("not zero"), "{note}");
    assert_eq!(note.matches("fix:").count(), 2, "{note}");
}

#[test]
fn serialized_forms_use_perf_names_and_leave_absent_events_out() {
    let s = sample(&[(Event::TaskClock, 400), (Event::PageFaults, 0)]);
    assert_eq!(
        serde_json::to_string(&s).unwrap(),
        r#"{"task-clock":400,"page-faults":0}"#
    );
    let cost = ReadCost {
        ns: 800.0,
        baseline: s,
        reads_per_side: 1,
    };
    assert_eq!(
        serde_json::to_value(cost).unwrap(),
        serde_json::json!({"ns": 800.0, "baseline": {"task-clock": 400, "page-faults": 0},
                           "reads_per_side": 1})
    );
    let u = Unavailable {
        event: Event::L1dLoadMisses,
        reason: "r".into(),
        fix: None,
    };
    let json = serde_json::to_string(&u).unwrap();
    assert_eq!(
        json,
        r#"{"event":"L1-dcache-load-misses","reason":"r","fix":null}"#
    );
    assert_eq!(serde_json::from_str::<Unavailable>(&json).unwrap(), u);
    assert!(serde_json::from_str::<Event>(r#""cylces""#).is_err());
}
