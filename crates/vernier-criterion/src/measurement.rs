//! What a benchmark's time is measured with. Only wall time: Vernier's timer.

/// A way of measuring. Only [`WallTime`] implements it here.
pub trait Measurement {}

/// Wall-clock time, read by Vernier's timer (the TSC where it is invariant).
#[derive(Clone, Copy, Debug, Default)]
pub struct WallTime;

impl Measurement for WallTime {}
