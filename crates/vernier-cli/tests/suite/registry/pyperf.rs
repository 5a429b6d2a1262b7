//! pyperf itself, installed from PyPI at test time, reads `vernier export --format pyperf`
//! (scripts/check-pyperf-export.sh): each benchmark's median is the result file's.

use super::Unreachable;
use crate::common::cli::text;
use crate::measuring::export::fixtures;
use std::path::Path;

/// The script's exit status when python3, its virtual environment or PyPI is missing (its
/// words say which).
const MISSING: i32 = 77;

#[test]
fn pyperf_loads_the_export() -> Result<(), Unreachable> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/check-pyperf-export.sh");
    for f in fixtures() {
        let o = std::process::Command::new("bash")
            .arg(&script)
            .arg(&f)
            .arg(env!("CARGO_BIN_EXE_vernier"))
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&o.stderr);
        if o.status.code() == Some(MISSING) && said.contains("PyPI") {
            Unreachable::unless(&o, "PyPI", "`pip install pyperf` (pyperf reads the export)")?;
        }
        assert_ne!(
            o.status.code(),
            Some(MISSING),
            "cannot check with pyperf: {} (apt-get install python3-venv)",
            said.trim()
        );
        assert!(o.status.success(), "{}", text(&o));
    }
    Ok(())
}
