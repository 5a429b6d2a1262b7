//! The commands of `vernier exec` as the command line gives them: templates expanded over the
//! parameters (`-P VAR MIN MAX` with `-D STEP`, `-L VAR V1,V2,…`; `{VAR}` in a command, its
//! name, `--prepare`, `--conclude`, `--setup` and `--cleanup` is replaced by the value), named
//! by `-n` or by their command line, and split into words (or given to `--shell`).

use super::engine::Spec;
use crate::runner::exec::Invocation;
use anyhow::{bail, Result};

/// A command's parameters and their values, in the order they were given.
pub type Values = Vec<(String, String)>;

/// One parameter's values: `(name, values)`; `numeric` when it came from `-P`.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: String,
    pub values: Vec<String>,
    pub numeric: bool,
}

/// `-P VAR MIN MAX` with `-D STEP` (default 1): MIN, MIN+STEP, … up to MAX. Whole numbers
/// unless MIN, MAX or STEP has a decimal point (as hyperfine).
pub fn scan(var: &str, min: &str, max: &str, step: Option<&str>) -> Result<Param> {
    let num = |what: &str, s: &str| -> Result<f64> {
        s.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| anyhow::anyhow!("-P {var} {min} {max}: {what} '{s}' is not a number"))
    };
    let (lo, hi) = (num("MIN", min)?, num("MAX", max)?);
    let step_s = step.unwrap_or("1");
    let d = num("the step (-D)", step_s)?;
    if d <= 0.0 {
        bail!("-D {step_s}: the step must be above 0");
    }
    if hi < lo {
        bail!("-P {var} {min} {max}: MAX is below MIN; give the smaller value first");
    }
    let whole = ![min, max, step_s].iter().any(|s| s.contains('.'));
    let count = ((hi - lo) / d + 1e-9).floor() as usize + 1;
    if count > 100_000 {
        bail!("-P {var} {min} {max} -D {step_s}: {count} values; give a larger step");
    }
    let values = (0..count)
        .map(|k| {
            let v = lo + d * k as f64;
            if whole {
                format!("{}", v.round() as i64)
            } else {
                let s = format!("{v:.6}");
                s.trim_end_matches('0').trim_end_matches('.').to_string()
            }
        })
        .collect();
    Ok(Param {
        name: var.into(),
        values,
        numeric: true,
    })
}

/// `-L VAR V1,V2,…`.
pub fn list(var: &str, values: &str) -> Result<Param> {
    let values: Vec<String> = values.split(',').map(str::to_string).collect();
    if values.iter().any(String::is_empty) {
        bail!(
            "-L {var} '{}': an empty value; separate values with single commas",
            values.join(",")
        );
    }
    Ok(Param {
        name: var.into(),
        values,
        numeric: false,
    })
}

/// Every combination of the parameters' values (the first parameter varying slowest).
pub fn combinations(params: &[Param]) -> Vec<Values> {
    let mut out = vec![Vec::new()];
    for p in params {
        out = out
            .into_iter()
            .flat_map(|c: Values| {
                p.values.iter().map(move |v| {
                    let mut c = c.clone();
                    c.push((p.name.clone(), v.clone()));
                    c
                })
            })
            .collect();
    }
    out
}

/// `text` with every `{VAR}` replaced by its value.
pub fn substitute(text: &str, values: &[(String, String)]) -> String {
    values.iter().fold(text.to_string(), |t, (k, v)| {
        t.replace(&format!("{{{k}}}"), v)
    })
}

/// How the command lines are run.
pub struct Lines<'a> {
    /// `--shell SHELL`: each line run by `SHELL -c LINE` (`None`: split into words and run
    /// directly).
    pub shell: Option<&'a str>,
}

impl Lines<'_> {
    /// The invocation of `line` (its `what` in messages: `command`, `--prepare`, …).
    pub fn invocation(&self, what: &str, line: &str) -> Result<Invocation> {
        match self.shell {
            Some(sh) => Ok(Invocation::through_shell(sh, line)),
            None => Invocation::split(line).ok_or_else(|| {
                if line.trim().is_empty() {
                    anyhow::anyhow!("{what} '{line}' is empty: give a program to run")
                } else {
                    anyhow::anyhow!(
                        "{what} `{line}`: its quotes are not closed; close them, or run it \
                         through a shell with --shell sh"
                    )
                }
            }),
        }
    }
}

/// What runs around each command, as given (one for every command, or one per command).
pub struct Around<'a> {
    pub setup: Option<&'a str>,
    pub prepare: &'a [String],
    pub conclude: &'a [String],
    pub cleanup: Option<&'a str>,
}

/// The `k`-th of `given` (one for all, or one per command), if any.
fn nth<'a>(given: &'a [String], k: usize, flag: &str, commands: usize) -> Result<Option<&'a str>> {
    match given.len() {
        0 => Ok(None),
        1 => Ok(Some(&given[0])),
        n if n == commands => Ok(Some(&given[k])),
        n => bail!(
            "{flag} was given {n} times for {commands} command(s): give it once (for every \
             command) or once per command"
        ),
    }
}

/// The specs: each command template for each combination of the parameters, named by `-n`
/// (one per command, or one per command and combination) or by its command line. Also the
/// values of each spec, in order.
pub fn specs(
    commands: &[String],
    names: &[String],
    params: &[Param],
    around: &Around,
    lines: &Lines,
) -> Result<Vec<(Spec, Values)>> {
    let combos = combinations(params);
    let total = commands.len() * combos.len();
    if !names.is_empty() && names.len() != commands.len() && names.len() != total {
        bail!(
            "-n was given {} times for {} command(s){}: give one name per command",
            names.len(),
            commands.len(),
            if combos.len() > 1 {
                format!(" ({total} with the parameters' values)")
            } else {
                String::new()
            }
        );
    }
    let mut out = Vec::new();
    for (c, template) in commands.iter().enumerate() {
        let prepare = nth(around.prepare, c, "--prepare", commands.len())?;
        let conclude = nth(around.conclude, c, "--conclude", commands.len())?;
        for values in &combos {
            let k = out.len();
            let line = substitute(template, values);
            let name = match names.len() {
                0 => line.clone(),
                n if n == total => substitute(&names[k], values),
                _ => substitute(&names[c], values),
            };
            let opt = |what: &str, l: Option<&str>| -> Result<Option<Invocation>> {
                l.map(|l| lines.invocation(what, &substitute(l, values)))
                    .transpose()
            };
            let spec = Spec {
                inv: lines.invocation("the command", &line)?,
                name,
                setup: opt("--setup", around.setup)?,
                prepare: opt("--prepare", prepare)?,
                conclude: opt("--conclude", conclude)?,
                cleanup: opt("--cleanup", around.cleanup)?,
            };
            out.push((spec, values.clone()));
        }
    }
    // The same name twice (the same command given twice, to see what no change reads): the
    // later ones are told apart by their place, `NAME (2)`.
    let mut seen = std::collections::BTreeMap::<String, usize>::new();
    for (s, _) in &mut out {
        let count = seen.entry(s.name.clone()).or_insert(0);
        *count += 1;
        if *count > 1 {
            s.name = format!("{} ({count})", s.name);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scan_steps_from_min_to_max() {
        assert_eq!(
            scan("n", "1", "4", None).unwrap().values,
            ["1", "2", "3", "4"]
        );
        assert_eq!(
            scan("x", "0", "1", Some("0.25")).unwrap().values,
            ["0", "0.25", "0.5", "0.75", "1"]
        );
        assert!(scan("n", "4", "1", None).is_err());
        assert!(scan("n", "1", "4", Some("0")).is_err());
        assert!(scan("n", "a", "4", None)
            .unwrap_err()
            .to_string()
            .contains("'a'"));
    }

    #[test]
    fn templates_expand_over_every_combination() {
        let p = [
            list("a", "x,y").unwrap(),
            scan("n", "1", "2", None).unwrap(),
        ];
        let around = Around {
            setup: None,
            prepare: &[],
            conclude: &[],
            cleanup: None,
        };
        let s = specs(
            &["run {a} {n}".into()],
            &[],
            &p,
            &around,
            &Lines { shell: None },
        )
        .unwrap();
        let names: Vec<&str> = s.iter().map(|(s, _)| s.name.as_str()).collect();
        assert_eq!(names, ["run x 1", "run x 2", "run y 1", "run y 2"]);
        assert!(list("a", "x,,y").is_err());
        // The same command twice is told apart by its place.
        let s = specs(
            &["true".into(), "true".into()],
            &[],
            &[],
            &around,
            &Lines { shell: None },
        );
        let names: Vec<String> = s.unwrap().into_iter().map(|(s, _)| s.name).collect();
        assert_eq!(names, ["true", "true (2)"]);
    }
}
