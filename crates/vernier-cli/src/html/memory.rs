//! A benchmark's memory in the HTML report: allocations, bytes, frees and net bytes per
//! iteration (when counted), and each process's peak resident memory.

use std::fmt::Write as _;
use vernier::report::memory::{format_allocs, format_bytes};
use vernier::result::BenchmarkResult;

/// The memory table of one benchmark; nothing when neither was measured.
pub fn section(h: &mut String, b: &BenchmarkResult) {
    if let Some(m) = &b.memory {
        h.push_str(
            "<table><tr><th class=\"name\">memory (per iteration)</th><th>value</th>\
             <th>one iteration: min / median / max</th></tr>\n",
        );
        let spread = |f: fn(&vernier::result::memory::Varies) -> [f64; 3], bytes: bool| {
            m.varies
                .as_ref()
                .map_or("the same in every iteration".to_string(), |v| {
                    let s = f(v);
                    let fmt = |x: f64| {
                        if bytes {
                            format_bytes(x)
                        } else {
                            format_allocs(x)
                        }
                    };
                    format!("{} / {} / {}", fmt(s[0]), fmt(s[1]), fmt(s[2]))
                })
        };
        let rows = [
            (
                "allocations",
                format_allocs(m.allocs_per_iter),
                spread(|v| v.allocs, false),
            ),
            (
                "bytes requested",
                format_bytes(m.bytes_per_iter),
                spread(|v| v.bytes, true),
            ),
            ("frees", format_allocs(m.frees_per_iter), String::new()),
            (
                "net bytes (kept)",
                format_bytes(m.net_bytes_per_iter),
                spread(|v| v.net_bytes, true),
            ),
        ];
        for (name, value, s) in rows {
            let _ = writeln!(
                h,
                "<tr><td class=\"name\">{name}</td><td>{value}</td><td>{}</td></tr>",
                super::esc(&s)
            );
        }
        let _ = writeln!(
            h,
            "</table>\n<p>Counted over {} iterations in a process of their own, apart from the \
             timed ones ({:.1} ms, {:.1} % of the benchmark's time).</p>",
            m.iterations,
            m.cost_s * 1e3,
            m.cost_share * 100.0
        );
    }
    let peaks: Vec<String> = b
        .processes
        .iter()
        .filter_map(|p| {
            Some(format!(
                "{}: {}",
                p.index,
                format_bytes(p.peak_rss_bytes? as f64)
            ))
        })
        .collect();
    if !peaks.is_empty() {
        let _ = writeln!(
            h,
            "<p>Peak resident memory per process: {}.</p>",
            peaks.join(", ")
        );
    }
}
