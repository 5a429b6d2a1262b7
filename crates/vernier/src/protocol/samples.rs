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
    let count = reply_count(&mut toks, line)?;
    let mut reply = Reply::new(line, count);
    for t in toks {
        reply.token(t)?;
    }
    reply.finish(expected)
}

/// The head of a reply: the sample count a `samples` reply announces, or an `error` reply's
/// message as the error.
fn reply_count<'a>(toks: &mut impl Iterator<Item = &'a str>, line: &str) -> Result<usize, String> {
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
    toks.next().and_then(|c| c.parse().ok()).ok_or_else(|| {
        format!(
            "malformed reply: no sample count after 'samples' ('{}')",
            clip(line)
        )
    })
}

/// A `samples` reply being read, token by token: the batch so far, and what can only be
/// placed once every token is read (the `scaled.` flags, the memory columns).
struct Reply<'a> {
    line: &'a str,
    /// The sample count the reply announces.
    count: usize,
    batch: Batch,
    /// `scaled.EVENT` tokens: (event, flags as written).
    scaled: Vec<(&'a str, &'a str)>,
    mem: Vec<(String, Vec<u64>)>,
    mem_unavailable: Option<String>,
}

impl<'a> Reply<'a> {
    fn new(line: &'a str, count: usize) -> Self {
        Reply {
            line,
            count,
            batch: Batch::default(),
            scaled: Vec::new(),
            mem: Vec::new(),
            mem_unavailable: None,
        }
    }

    /// One `key=value` token; unknown keys are skipped (extensions of the protocol).
    fn token(&mut self, t: &'a str) -> Result<(), String> {
        let line = self.line;
        let Some((k, v)) = t.split_once('=') else {
            return Err(format!(
                "malformed token '{}' in reply '{}' (expected key=value)",
                clip(t),
                clip(line)
            ));
        };
        if k == "ns" {
            self.batch.ns = parse_list(v, "ns", line)?;
        } else if k == "probe_ns" || k == "wide_ns" {
            let t =
                Some(v.parse::<u64>().map_err(|_| {
                    format!("malformed probe time '{v}' in reply '{}'", clip(line))
                })?);
            if k == "probe_ns" {
                self.batch.probe_ns = t;
            } else {
                self.batch.wide_ns = t;
            }
        } else if let Some(ev) = k
            .strip_prefix("ctr.")
            .or((k == GC_COLLECTIONS).then_some(k))
        {
            self.counter(ev, k, v)?;
        } else if let Some(ev) = k.strip_prefix("scaled.") {
            self.scaled.push((ev, v));
        } else if let Some((name, k)) = k
            .split_once('.')
            .filter(|(n, _)| ["thread_ns", "thread_cpu_ns", "thread_wait_ns"].contains(n))
        {
            push_thread_column(&mut self.batch, name, k, v, self.count, line)?;
        } else if k == "cpus" {
            self.batch.cpus = Some(parse_value(v, "cpus", line)?.min(u32::MAX as u64) as u32);
        } else if k == "mem.unavailable" {
            self.mem_unavailable = Some(decode_name(v)?);
        } else if let Some(f) = k.strip_prefix("mem.") {
            if ["allocs", "bytes", "frees", "freed_bytes"].contains(&f) {
                self.mem.push((f.to_string(), parse_list(v, k, line)?));
            }
        }
        Ok(())
    }

    /// A counter's column (`ctr.EVENT=` or `gc.collections=`, the token's key `k`): an empty
    /// field is a sample the counter did not count.
    fn counter(&mut self, event: &str, k: &str, v: &str) -> Result<(), String> {
        let values = v
            .split(',')
            .map(|x| {
                if x.is_empty() {
                    Ok(None)
                } else {
                    parse_value(x, k, self.line).map(Some)
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.batch.counters.push(CounterColumn {
            event: event.to_string(),
            values,
            scaled: Vec::new(),
        });
        Ok(())
    }

    /// The batch, once every token is read: the flags placed on their counters, every column's
    /// length checked against the count announced and the count asked for.
    fn finish(mut self, expected: usize) -> Result<Batch, String> {
        self.place_scaled()?;
        let (line, count) = (self.line, self.count);
        let batch = &self.batch;
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
        for (field, cols) in thread_columns(batch).into_iter().skip(1) {
            if !cols.is_empty() && cols.len() != threads {
                return Err(format!(
                    "malformed reply: {} '{field}' columns for {threads} threads ('{}')",
                    cols.len(),
                    clip(line)
                ));
            }
        }
        self.batch.memory = memory::from_tokens(&self.mem, self.mem_unavailable, count)?;
        Ok(self.batch)
    }

    /// Flags after values: a flag belongs to a counter the reply carries.
    fn place_scaled(&mut self) -> Result<(), String> {
        let (line, count) = (self.line, self.count);
        for &(ev, v) in &self.scaled {
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
            let Some(c) = self.batch.counters.iter_mut().find(|c| c.event == ev) else {
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
        Ok(())
    }
}
