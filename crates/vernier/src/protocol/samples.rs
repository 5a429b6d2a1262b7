//! The `samples` line, a `run` request's reply: each sample's time, and the columns a harness
//! adds (counters, garbage collections, threads, memory), written by the worker side and
//! parsed, with its limits checked, by the runner side.

use super::*;

/// Format a `samples` reply.
pub fn samples_line(batch: &Batch) -> String {
    let mut s = format!("samples {} ns=", batch.ns.len());
    join_into(&mut s, &batch.ns);
    if let Some(p) = batch.probe_ns {
        let _ = write!(s, " probe_ns={p}");
    }
    if let (Some(_), Some(w)) = (batch.probe_ns, batch.wide_ns) {
        let _ = write!(s, " wide_ns={w}");
    }
    // Counter tokens (docs/counters.md): every `ctr.` token, then the `scaled.` flags of the
    // columns with a scaled value; an uncounted value is an empty field. A Python worker's
    // garbage collections are `gc.collections=`, without the prefix.
    for c in &batch.counters {
        if c.event == GC_COLLECTIONS {
            let _ = write!(s, " {GC_COLLECTIONS}=");
        } else {
            let _ = write!(s, " ctr.{}=", c.event);
        }
        for (i, v) in c.values.iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            if let Some(v) = v {
                let _ = write!(s, "{v}");
            }
        }
    }
    // A threaded benchmark (docs/threads.md): each thread's own time, release to finish.
    if let Some(c) = batch.cpus.filter(|_| !batch.thread_ns.is_empty()) {
        let _ = write!(s, " cpus={c}");
    }
    for (field, cols) in thread_columns(batch) {
        for (k, t) in cols.iter().enumerate() {
            let _ = write!(s, " {field}.{k}=");
            join_into(&mut s, t);
        }
    }
    for c in batch.counters.iter().filter(|c| c.scaled.contains(&true)) {
        let _ = write!(s, " scaled.{}=", c.event);
        for (i, &f) in c.scaled.iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            s.push(if f { '1' } else { '0' });
        }
    }
    if let Some(m) = &batch.memory {
        memory::append_tokens(&mut s, m);
    }
    for (k, v) in &batch.notes {
        let _ = write!(s, " {k}={v}");
    }
    s
}

/// A threaded batch's per-thread columns by token name (docs/threads.md): each thread's own
/// time, then (when read) its on-CPU time and run-queue wait over the sample's window.
fn thread_columns(batch: &Batch) -> [(&'static str, &Vec<Vec<u64>>); 3] {
    [
        ("thread_ns", &batch.thread_ns),
        ("thread_cpu_ns", &batch.thread_cpu_ns),
        ("thread_wait_ns", &batch.thread_wait_ns),
    ]
}

fn join_into(s: &mut String, xs: &[u64]) {
    for (i, x) in xs.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        let _ = write!(s, "{x}");
    }
}

/// Largest value a sample's time or counter delta may take: 2⁵³ (about 104 days in
/// nanoseconds). Beyond it a value is no longer exact as an `f64` in the analysis, and the sums
/// of a batch could overflow: such a value is a malformed reply, not a measurement.
pub const MAX_SAMPLE_VALUE: u64 = 1 << 53;

/// One integer of a reply's field, checked: not empty, digits only, at most
/// [`MAX_SAMPLE_VALUE`].
fn parse_value(x: &str, field: &str, line: &str) -> Result<u64, String> {
    match x.parse::<u64>() {
        Ok(n) if n <= MAX_SAMPLE_VALUE => Ok(n),
        Ok(n) => Err(format!(
            "malformed reply: field '{field}' has {n}, beyond the largest plausible value \
             2^53 ('{}')",
            clip(line)
        )),
        Err(_) => Err(format!(
            "malformed reply: field '{field}' has '{}', expected a non-negative integer ('{}')",
            clip(x),
            clip(line)
        )),
    }
}

fn parse_list(v: &str, field: &str, line: &str) -> Result<Vec<u64>, String> {
    v.split(',').map(|x| parse_value(x, field, line)).collect()
}

/// One thread's column of a `samples` reply (`NAME.K=v1,…`): thread `K`'s values, in order.
fn push_thread_column(
    batch: &mut Batch,
    name: &str,
    k: &str,
    v: &str,
    count: usize,
    line: &str,
) -> Result<(), String> {
    let cols = match name {
        "thread_ns" => &mut batch.thread_ns,
        "thread_cpu_ns" => &mut batch.thread_cpu_ns,
        _ => &mut batch.thread_wait_ns,
    };
    let field = format!("{name}.{k}");
    let col = parse_list(v, &field, line)?;
    match k.parse::<usize>() {
        Ok(k) if k == cols.len() && col.len() == count => {
            cols.push(col);
            Ok(())
        }
        _ => Err(format!(
            "malformed reply: field '{field}' is not the next thread's column of {count} values \
             ('{}')",
            clip(line)
        )),
    }
}

/// Parse a `samples` reply (or turn an `error` reply into its message).
pub fn parse_samples(line: &str, expected: usize) -> Result<Batch, String> {
    let mut toks = line.split_whitespace();
    match toks.next() {
        Some("samples") => {}
        Some("error") => {
            let msg = line
                .trim_start()
                .strip_prefix("error")
                .unwrap_or_default()
                .trim();
            return Err(if msg.is_empty() {
                "the worker replied 'error' without a message".to_string()
            } else {
                msg.to_string()
            });
        }
        _ => {
            return Err(format!(
                "malformed reply '{}' (expected 'samples …')",
                clip(line)
            ))
        }
    }
    let count: usize = toks.next().and_then(|c| c.parse().ok()).ok_or_else(|| {
        format!(
            "malformed reply: no sample count after 'samples' ('{}')",
            clip(line)
        )
    })?;
    let mut batch = Batch::default();
    let mut scaled: Vec<(String, String)> = Vec::new();
    let (mut mem, mut mem_unavailable) = (Vec::new(), None);
    for t in toks {
        let Some((k, v)) = t.split_once('=') else {
            return Err(format!(
                "malformed token '{}' in reply '{}' (expected key=value)",
                clip(t),
                clip(line)
            ));
        };
        if k == "ns" {
            batch.ns = parse_list(v, "ns", line)?;
        } else if k == "probe_ns" || k == "wide_ns" {
            let t =
                Some(v.parse::<u64>().map_err(|_| {
                    format!("malformed probe time '{v}' in reply '{}'", clip(line))
                })?);
            if k == "probe_ns" {
                batch.probe_ns = t;
            } else {
                batch.wide_ns = t;
            }
        } else if let Some(ev) = k
            .strip_prefix("ctr.")
            .or((k == GC_COLLECTIONS).then_some(k))
        {
            let values = v
                .split(',')
                .map(|x| {
                    if x.is_empty() {
                        Ok(None)
                    } else {
                        parse_value(x, k, line).map(Some)
                    }
                })
                .collect::<Result<Vec<_>, _>>()?;
            batch.counters.push(CounterColumn {
                event: ev.to_string(),
                values,
                scaled: Vec::new(),
            });
        } else if let Some(ev) = k.strip_prefix("scaled.") {
            scaled.push((ev.to_string(), v.to_string()));
        } else if let Some((name, k)) = k
            .split_once('.')
            .filter(|(n, _)| ["thread_ns", "thread_cpu_ns", "thread_wait_ns"].contains(n))
        {
            push_thread_column(&mut batch, name, k, v, count, line)?;
        } else if k == "cpus" {
            batch.cpus = Some(parse_value(v, "cpus", line)?.min(u32::MAX as u64) as u32);
        } else if k == "mem.unavailable" {
            mem_unavailable = Some(decode_name(v)?);
        } else if let Some(f) = k.strip_prefix("mem.") {
            if ["allocs", "bytes", "frees", "freed_bytes"].contains(&f) {
                mem.push((f.to_string(), parse_list(v, k, line)?));
            }
        }
    }
    // Flags after values: a flag belongs to a counter the reply carries.
    for (ev, v) in scaled {
        let flags = v
            .split(',')
            .map(|f| match f {
                "0" => Ok(false),
                "1" => Ok(true),
                _ => Err(format!(
                    "malformed reply: field 'scaled.{ev}' has '{}', expected 0 or 1 ('{}')",
                    clip(f),
                    clip(line)
                )),
            })
            .collect::<Result<Vec<bool>, String>>()?;
        let Some(c) = batch.counters.iter_mut().find(|c| c.event == ev) else {
            return Err(format!(
                "'scaled.{ev}' without 'ctr.{ev}' in reply '{}'",
                clip(line)
            ));
        };
        if flags.len() != count {
            return Err(format!(
                "'scaled.{ev}' has {} flags for {count} samples",
                flags.len()
            ));
        }
        c.scaled = flags;
    }
    if batch.ns.len() != count || count != expected {
        return Err(format!(
            "reply announces {count} samples and its field 'ns' carries {}, {expected} were \
             asked for: '{}'",
            batch.ns.len(),
            clip(line)
        ));
    }
    if let Some(c) = batch.counters.iter().find(|c| c.values.len() != count) {
        return Err(format!(
            "malformed reply: field 'ctr.{}' has {} values for {count} samples",
            c.event,
            c.values.len()
        ));
    }
    let threads = batch.thread_ns.len();
    for (field, cols) in thread_columns(&batch).into_iter().skip(1) {
        if !cols.is_empty() && cols.len() != threads {
            return Err(format!(
                "malformed reply: {} '{field}' columns for {threads} threads ('{}')",
                cols.len(),
                clip(line)
            ));
        }
    }
    batch.memory = memory::from_tokens(&mem, mem_unavailable, count)?;
    Ok(batch)
}
