//! What `vernier exec` keeps of each run of a whole command beside its wall time: the process's
//! resource use as `wait4` reports it (CPU time, peak resident memory, page faults, context
//! switches) and how it ended. Wall times are the samples themselves; these are stored apart
//! so that any figure of them can be computed again.

use serde::{Deserialize, Serialize};

/// One run of a command: its wall time from the runner's clock around start and end, and its
/// resource use from `wait4` (children it waited for included, as the kernel counts them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Run {
    pub wall_ns: u64,
    pub user_ns: u64,
    pub system_ns: u64,
    /// Peak resident set size of the process (the largest of its waited-for children's too).
    pub max_rss_bytes: u64,
    pub minor_faults: u64,
    pub major_faults: u64,
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
    /// The exit status (`null` when a signal ended it).
    pub exit_code: Option<i32>,
    /// The signal that ended it (`null` when it exited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// A warm-up run asked for with `-w` (run before the measured ones, not analysed).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub warmup: bool,
}

impl Run {
    /// Whether the command succeeded (exit status 0).
    pub fn succeeded(&self) -> bool {
        self.exit_code == Some(0)
    }
}

/// A command of `vernier exec` in a comparison file: its name, its command line and its runs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Command {
    pub name: String,
    pub command: String,
    pub runs: Vec<Run>,
}
