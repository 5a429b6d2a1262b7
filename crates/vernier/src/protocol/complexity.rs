//! A benchmark's complexity declaration on its `list` line (docs/protocol.md): `family=`,
//! `n=`, `complexity=`, `f=` and `function=`.

use super::{decode_name, encode_name};
use crate::stats::complexity::{Class, Declared};

impl Declared {
    /// The `list` line's options (each after a space; empty when nothing was declared).
    pub fn options(&self) -> String {
        let mut s = String::new();
        if let Some(f) = &self.family {
            s += &format!(" family={}", encode_name(f));
        }
        if let Some(n) = self.n {
            s += &format!(" n={n}");
        }
        if let Some(c) = self.class {
            s += &format!(" complexity={}", c.option());
        }
        if let Some(f) = self.f {
            s += &format!(" f={f:e}");
        }
        if let Some(name) = &self.function {
            s += &format!(" function={}", encode_name(name));
        }
        s
    }

    /// The declaration among a `list` line's options (`None`: none of its options), or what is
    /// wrong with it.
    pub fn parse_options<'a>(
        options: impl IntoIterator<Item = &'a str>,
    ) -> Result<Option<Declared>, String> {
        let mut d = Declared::default();
        let mut any = false;
        for o in options {
            let Some((key, v)) = o.split_once('=') else {
                continue;
            };
            match key {
                "family" => d.family = Some(decode_name(v)?),
                "n" => {
                    d.n = Some(v.parse().map_err(|_| {
                        format!("n={v}: a complexity N is a whole number of at least 0")
                    })?)
                }
                "complexity" => {
                    d.class = Some(Class::parse_option(v).ok_or_else(|| {
                        format!("complexity={v}: the classes are 1, lgN, N, NlgN, N^2 and N^3")
                    })?)
                }
                "f" => {
                    let f: f64 = v.parse().map_err(|_| format!("f={v}: not a number"))?;
                    if !(f.is_finite() && f >= 0.0) {
                        return Err(format!(
                            "f={v}: a complexity function's value is finite and not negative"
                        ));
                    }
                    d.f = Some(f);
                }
                "function" => d.function = Some(decode_name(v)?),
                _ => continue,
            }
            any = true;
        }
        if d.class.is_some() && d.f.is_some() {
            return Err(
                "complexity= and f= together: a benchmark declares a class or its own \
                        function, not both"
                    .into(),
            );
        }
        if d.function.is_some() && d.f.is_none() {
            return Err("function= without f=: name a function only with its value".into());
        }
        Ok(any.then_some(d))
    }
}
