//! The `mem.` tokens of a `run … memory=1` reply (docs/protocol.md): one reading of the
//! allocation counters per sample, or why the worker cannot count.

use crate::measure::{Batch, Target};
use crate::memory::{AllocCounts, MemoryReply, Source};
use std::fmt::Write as _;

/// One count of a reading.
type Field = fn(&AllocCounts) -> u64;

/// The reply's `mem.` tokens (after the others): `mem.allocs=…` `mem.bytes=…` `mem.frees=…`
/// `mem.freed_bytes=…`, or `mem.unavailable=<percent-encoded reason>`.
pub fn append_tokens(s: &mut String, m: &MemoryReply) {
    match m {
        MemoryReply::Unavailable(why) => {
            let _ = write!(s, " mem.unavailable={}", super::encode_name(why));
        }
        MemoryReply::Counted(v) => {
            let fields: [(&str, Field); 4] = [
                ("allocs", |c| c.allocs),
                ("bytes", |c| c.bytes),
                ("frees", |c| c.frees),
                ("freed_bytes", |c| c.freed_bytes),
            ];
            for (name, get) in fields {
                let _ = write!(s, " mem.{name}=");
                for (i, c) in v.iter().enumerate() {
                    if i > 0 {
                        s.push(',');
                    }
                    let _ = write!(s, "{}", get(c));
                }
            }
        }
    }
}

/// The memory part of a reply from its `mem.` tokens (`(field, values)` already parsed as
/// integers, the unavailable reason decoded); checks that the four columns agree with the
/// sample count. `None` when the reply has no `mem.` token.
pub fn from_tokens(
    columns: &[(String, Vec<u64>)],
    unavailable: Option<String>,
    samples: usize,
) -> Result<Option<MemoryReply>, String> {
    if columns.is_empty() {
        return Ok(unavailable.map(MemoryReply::Unavailable));
    }
    let col = |name: &str| -> Result<&Vec<u64>, String> {
        let (_, v) = columns
            .iter()
            .find(|(k, _)| k == name)
            .ok_or_else(|| format!("malformed reply: 'mem.' tokens without 'mem.{name}'"))?;
        if v.len() != samples {
            return Err(format!(
                "malformed reply: 'mem.{name}' has {} values for {samples} samples",
                v.len()
            ));
        }
        Ok(v)
    };
    let (a, b, f, g) = (
        col("allocs")?,
        col("bytes")?,
        col("frees")?,
        col("freed_bytes")?,
    );
    Ok(Some(MemoryReply::Counted(
        (0..samples)
            .map(|i| AllocCounts {
                allocs: a[i],
                bytes: b[i],
                frees: f[i],
                freed_bytes: g[i],
            })
            .collect(),
    )))
}

/// Whether a `run` request's options ask for allocation counts (`memory=1`).
pub fn requested(extra: &[(String, String)]) -> bool {
    extra.iter().any(|(k, v)| k == "memory" && v == "1")
}

/// `samples` samples of `iters` iterations of `target`, one at a time, the allocation
/// counters read before and after each (outside its timed region): the `mem.` columns of the
/// reply in `out.memory`. A process that cannot count measures the samples all the same and
/// says why in `out.memory`.
pub fn measure_counting(
    target: &mut dyn Target,
    iters: u64,
    samples: usize,
    out: &mut Batch,
) -> Result<(), String> {
    let source = match Source::detect() {
        Ok(s) => s,
        Err(why) => {
            target.measure(iters, samples, out)?;
            out.memory = Some(MemoryReply::Unavailable(why));
            return Ok(());
        }
    };
    // Room for every sample first: the bookkeeping between two reads allocates nothing.
    out.ns.reserve(samples);
    let mut counts = Vec::with_capacity(samples);
    source.start();
    let mut result = Ok(());
    for _ in 0..samples {
        let before = source.read();
        result = target.measure(iters, 1, out);
        let after = source.read();
        if result.is_err() {
            break;
        }
        counts.push(after.since(&before));
    }
    source.stop();
    result?;
    out.memory = Some(MemoryReply::Counted(counts));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip_and_columns_are_checked() {
        let v = vec![
            AllocCounts {
                allocs: 1,
                bytes: 4000,
                frees: 1,
                freed_bytes: 4000,
            },
            AllocCounts {
                allocs: 0,
                bytes: 0,
                frees: 0,
                freed_bytes: 0,
            },
        ];
        let mut s = String::new();
        append_tokens(&mut s, &MemoryReply::Counted(v.clone()));
        assert_eq!(
            s,
            " mem.allocs=1,0 mem.bytes=4000,0 mem.frees=1,0 mem.freed_bytes=4000,0"
        );
        let cols: Vec<(String, Vec<u64>)> = s
            .split_whitespace()
            .map(|t| {
                let (k, v) = t.split_once('=').unwrap();
                (
                    k.trim_start_matches("mem.").to_string(),
                    v.split(',').map(|x| x.parse().unwrap()).collect(),
                )
            })
            .collect();
        assert_eq!(
            from_tokens(&cols, None, 2).unwrap(),
            Some(MemoryReply::Counted(v))
        );
        assert!(from_tokens(&cols, None, 3).is_err());
        assert!(from_tokens(&cols[..3], None, 2).is_err());
        let mut s = String::new();
        append_tokens(&mut s, &MemoryReply::Unavailable("static binary".into()));
        assert_eq!(s, " mem.unavailable=static%20binary");
    }
}
