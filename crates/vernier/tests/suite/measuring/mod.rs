mod compare_chain;
// Counters are read through Linux's perf_event_open; elsewhere every event is unavailable.
#[cfg(target_os = "linux")]
mod counters_software;
#[cfg(target_os = "linux")]
mod suite_counters;
