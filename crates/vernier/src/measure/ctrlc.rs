//! Ctrl-C while measuring: the first stops the measuring at the next batch boundary
//! ([`super::INTERRUPTED`]), keeping every sample taken; a second, half a second or more
//! later, ends the process (status 130). Installed by the `vernier` commands and by a
//! standalone suite (`cargo bench`, a benchmark program run by hand); a worker leaves Ctrl-C to
//! its runner. The signals themselves (a console control handler on Windows) are
//! `crate::os::signals`'.

pub use crate::os::signals::{
    install_ctrlc, install_stop_handler, interrupted, made_and_removed_on_signal, remove_on_signal,
    RemoveOnSignal,
};
