//! A benchmark's name within its group: [`BenchmarkId`], and what can be turned into one.

use std::fmt;

/// A benchmark's name within its group: a function name, a parameter, or both
/// (`function/parameter`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BenchmarkId {
    function: Option<String>,
    parameter: Option<String>,
}

impl BenchmarkId {
    /// `function/parameter`.
    pub fn new<S: Into<String>, P: fmt::Display>(function_name: S, parameter: P) -> BenchmarkId {
        BenchmarkId {
            function: Some(function_name.into()),
            parameter: Some(parameter.to_string()),
        }
    }

    /// The parameter alone (in a group: `group/parameter`).
    pub fn from_parameter<P: fmt::Display>(parameter: P) -> BenchmarkId {
        BenchmarkId {
            function: None,
            parameter: Some(parameter.to_string()),
        }
    }

    /// Whether the id names a function (`BenchmarkId::new`, or a plain name).
    pub(crate) fn has_function(&self) -> bool {
        self.function.is_some()
    }

    pub(crate) fn label(&self) -> Option<String> {
        match (&self.function, &self.parameter) {
            (Some(f), Some(p)) => Some(format!("{f}/{p}")),
            (Some(f), None) => Some(f.clone()),
            (None, Some(p)) => Some(p.clone()),
            (None, None) => None,
        }
    }
}

impl fmt::Display for BenchmarkId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label().unwrap_or_default())
    }
}

/// What a benchmark can be named with in a group: a `&str`, a `String` or a [`BenchmarkId`].
pub trait IntoBenchmarkId {
    fn into_benchmark_id(self) -> BenchmarkId;
}

impl IntoBenchmarkId for BenchmarkId {
    fn into_benchmark_id(self) -> BenchmarkId {
        self
    }
}

impl<S: Into<String>> IntoBenchmarkId for S {
    fn into_benchmark_id(self) -> BenchmarkId {
        BenchmarkId {
            function: Some(self.into()),
            parameter: None,
        }
    }
}
