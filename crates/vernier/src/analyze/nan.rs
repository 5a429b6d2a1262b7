//! Figures the analysis may leave undefined (NaN: a benchmark that failed before its first
//! sample, a fit with fewer than two iteration counts) are written as `null` in JSON and read
//! back as NaN. The analysis types carry these attributes themselves, so the result file
//! serialises them directly instead of through a mirror type.

/// One `f64`: NaN and infinities as `null`, `null` as NaN.
pub mod nan_as_null {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
        if x.is_finite() {
            s.serialize_f64(*x)
        } else {
            s.serialize_none()
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
    }
}

/// An interval `[lo, hi]`, each end as [`nan_as_null`] writes one value.
pub mod nan_pair {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(x: &[f64; 2], s: S) -> Result<S::Ok, S::Error> {
        let f = |v: f64| v.is_finite().then_some(v);
        [f(x[0]), f(x[1])].serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<[f64; 2], D::Error> {
        let v = <[Option<f64>; 2]>::deserialize(d)?;
        Ok([v[0].unwrap_or(f64::NAN), v[1].unwrap_or(f64::NAN)])
    }

    /// An absent pair (a field older files do not have).
    pub fn none() -> [f64; 2] {
        [f64::NAN; 2]
    }
}
