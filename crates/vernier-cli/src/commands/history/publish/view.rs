//! A series as the site shows it: its figures in the unit it is judged in, the changes since
//! the previous run and since the baseline, its change points with the commit ranges they lie
//! in. Computed once per publish from the store's series.

use crate::history::series::Series;
use vernier::analyze::Unit;

/// One run of the series.
pub struct PointView {
    pub commit: Option<String>,
    pub branch: Option<String>,
    pub time: String,
    /// The run's median in the series' unit, and the run's own interval (NaN without one).
    pub value: f64,
    pub ci: [f64; 2],
    pub usable: bool,
    pub flags: String,
    pub run_id: i64,
}

/// A change point of the series.
pub struct ChangeView {
    /// The first run of the new segment.
    pub index: usize,
    pub ratio: f64,
    pub ci95: [f64; 2],
    pub confidence: f64,
    /// The commit of the last run before the change, and the first one after it.
    pub from: Option<String>,
    pub to: Option<String>,
    pub time: String,
}

pub struct SeriesView {
    pub name: String,
    pub machine: String,
    pub unit: Unit,
    /// The page's file name under `s/`, from the name and machine (stable across publishes).
    pub slug: String,
    pub points: Vec<PointView>,
    pub changes: Vec<ChangeView>,
    /// The newest usable figure, its ratio to the usable one before, and to the baseline's.
    pub latest: f64,
    pub since_previous: f64,
    pub since_baseline: f64,
}

/// FNV-1a, 64 bits: a stable name for a page (not a secret).
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

impl SeriesView {
    pub fn of(s: &Series, baseline: Option<&str>) -> SeriesView {
        let points: Vec<PointView> = s
            .points
            .iter()
            .map(|p| {
                let at = Series::in_unit(p, s.unit);
                PointView {
                    commit: p.commit.clone(),
                    branch: p.branch.clone(),
                    time: p.time.clone(),
                    value: Series::median_in(p, s.unit).unwrap_or(f64::NAN),
                    ci: at.ci95_ns,
                    usable: Series::usable_in(p, s.unit),
                    flags: p.bench.flags.clone(),
                    run_id: p.run_id,
                }
            })
            .collect();
        let usable: Vec<&PointView> = points.iter().filter(|p| p.usable).collect();
        let latest = usable.last().map_or(f64::NAN, |p| p.value);
        let since_previous = match usable[..] {
            [.., a, b] => b.value / a.value,
            _ => f64::NAN,
        };
        let base = match baseline {
            Some(c) => usable
                .iter()
                .find(|p| p.commit.as_deref().is_some_and(|x| x.starts_with(c))),
            None => usable.first(),
        };
        let since_baseline = base.map_or(f64::NAN, |b| latest / b.value);
        let changes = s
            .change_points
            .iter()
            .map(|c| {
                let to = s.points.get(c.index);
                let from = s.points[..c.index.min(s.points.len())]
                    .iter()
                    .rev()
                    .find(|p| p.commit != to.and_then(|t| t.commit.clone()));
                ChangeView {
                    index: c.index,
                    ratio: c.ratio,
                    ci95: c.ci95,
                    confidence: c.confidence,
                    from: from.and_then(|p| p.commit.clone()),
                    to: to.and_then(|p| p.commit.clone()),
                    time: to.map(|p| p.time.clone()).unwrap_or_default(),
                }
            })
            .collect();
        SeriesView {
            name: s.name.clone(),
            machine: s.machine.clone(),
            unit: s.unit,
            slug: format!(
                "{:016x}",
                fnv(format!("{}\0{}", s.name, s.machine).as_bytes())
            ),
            points,
            changes,
            latest,
            since_previous,
            since_baseline,
        }
    }

    /// The newest usable figure in words, with its unit.
    pub fn figure(&self, x: f64) -> String {
        figure(self.unit, x)
    }
}

/// A figure in `unit`, with the unit's name.
pub fn figure(unit: Unit, x: f64) -> String {
    if !x.is_finite() {
        return "—".into();
    }
    match unit {
        Unit::Ns => vernier::report::units::format_ns(x),
        Unit::Cycles => format!("{} cycles", vernier::report::format_count(x)),
        Unit::Instructions => format!("{} instructions", vernier::report::format_count(x)),
    }
}

/// A ratio as a signed change in percent: `+1.23 %`.
pub fn change(r: f64) -> String {
    if r.is_finite() {
        format!("{:+.2} %", (r - 1.0) * 100.0)
    } else {
        "—".into()
    }
}
