//! Facts about the machine and the build, recorded as structured fields in every result.

use serde::{Deserialize, Serialize};

/// The machine and the build that produced a result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    pub hostname: String,
    pub os: String,
    pub kernel: String,
    pub arch: String,
    pub cpu_model: String,
    pub logical_cpus: usize,
    /// rustc that built the harness (`rustc --version`).
    pub rustc: String,
    /// `release` or `debug`: how the harness itself was compiled.
    pub build_profile: String,
    /// Compiler of a C++ worker when known (from its `hello`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_impl: Option<String>,
    /// The interpreter running a worker, from its `hello` (`interp=`): a Python worker's
    /// implementation, version and build flags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_interp: Option<String>,
}

impl Machine {
    /// Read this machine's facts.
    pub fn detect() -> Machine {
        let (hostname, os, kernel) = crate::os::host::uname();
        Machine {
            hostname,
            os,
            kernel,
            arch: std::env::consts::ARCH.into(),
            cpu_model: crate::os::host::cpu_model(),
            logical_cpus: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            rustc: env!("VERNIER_RUSTC_VERSION").into(),
            build_profile: if cfg!(debug_assertions) {
                "debug".into()
            } else {
                "release".into()
            },
            worker_impl: None,
            worker_interp: None,
        }
    }
}
