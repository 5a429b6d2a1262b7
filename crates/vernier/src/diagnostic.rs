//! Typed diagnostics: a stable code (the contract's list, which scripts depend on) and a message
//! in plain words that names the fix.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Stable diagnostic codes. Never rename one; add new ones at the end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Code {
    /// The per-iteration time is indistinguishable from an empty body, below a quarter of a
    /// cycle, or does not grow with the iteration count.
    OptimizedAway,
    /// T = a + b·N fits poorly, or its slope disagrees with the median.
    Nonlinear,
    /// The series never settled within the budget.
    NoSteadyState,
    /// The interval is too wide for the budget.
    Unstable,
    /// Samples are too short compared with the timer's cost or resolution.
    TimerLimited,
    /// Many samples far outside the bulk of the distribution.
    Outliers,
    /// Samples during which a context switch or migration happened.
    Interrupted,
    /// Processes with different memory layouts disagree beyond their intervals.
    LayoutSensitive,
    /// The benchmark was compiled without optimisation.
    DebugBuild,
    /// Some or all performance counters could not be read.
    CountersUnavailable,
    /// The core ran markedly slower than its own fastest state during the benchmark.
    CoreSlowed,
}

impl Code {
    pub const ALL: [Code; 11] = [
        Code::OptimizedAway,
        Code::Nonlinear,
        Code::NoSteadyState,
        Code::Unstable,
        Code::TimerLimited,
        Code::Outliers,
        Code::Interrupted,
        Code::LayoutSensitive,
        Code::DebugBuild,
        Code::CountersUnavailable,
        Code::CoreSlowed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Code::OptimizedAway => "optimized-away",
            Code::Nonlinear => "nonlinear",
            Code::NoSteadyState => "no-steady-state",
            Code::Unstable => "unstable",
            Code::TimerLimited => "timer-limited",
            Code::Outliers => "outliers",
            Code::Interrupted => "interrupted",
            Code::LayoutSensitive => "layout-sensitive",
            Code::DebugBuild => "debug-build",
            Code::CountersUnavailable => "counters-unavailable",
            Code::CoreSlowed => "core-slowed",
        }
    }

    /// Whether the figure itself should not be trusted (as opposed to a note).
    pub fn invalidates_figure(self) -> bool {
        matches!(self, Code::OptimizedAway | Code::DebugBuild)
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One diagnostic: the code, a message that names the fix, and the figures behind it as data
/// (so a report can word or lay them out without reading the message back).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Diagnostic {
    pub code: Code,
    pub message: String,
    /// The diagnostic's figures by name (`events` for `counters-unavailable`); empty when it
    /// has none, and in files written before the field existed.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub data: serde_json::Map<String, serde_json::Value>,
}

impl Diagnostic {
    pub fn new(code: Code, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            code,
            message: message.into(),
            data: serde_json::Map::new(),
        }
    }

    /// The same diagnostic with one more named figure.
    pub fn with(mut self, key: &str, value: impl Into<serde_json::Value>) -> Diagnostic {
        self.data.insert(key.to_string(), value.into());
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_serialise_to_the_contract_names() {
        for c in Code::ALL {
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(json, format!("\"{}\"", c.as_str()));
        }
    }
}
