//! Flow records and the weighted distance between two flows.

/// An unknown port.
pub const NO_PORT: u32 = u32::MAX;

/// The destination aggregation of a flow (CODA §3.1: flows to the same
/// destination IP and port): `dst · 2³² + port`. A flow whose port is unknown is
/// aggregated by destination host alone (port [`NO_PORT`]).
pub fn agg_key(dst: u32, dst_port: u32) -> u64 {
    ((dst as u64) << 32) | dst_port as u64
}

/// What an observer knows about each flow, column by column (flow `i` is entry
/// `i` of every column).
#[derive(Debug, Clone, Default)]
pub struct Records {
    /// S_time: when the flow was first seen, seconds.
    pub time: Vec<f64>,
    /// Further numeric attributes (packet statistics), one column each.
    pub extra: Vec<Vec<f64>>,
    /// Community key of the flow: the communities of its two hosts.
    pub com: Vec<u64>,
    /// Destination aggregation key ([`agg_key`]).
    pub agg: Vec<u64>,
}

impl Records {
    pub fn len(&self) -> usize {
        self.time.len()
    }

    pub fn is_empty(&self) -> bool {
        self.time.is_empty()
    }

    /// Records of `n` flows with every attribute zero (filled in later).
    pub fn zeros(n: usize, extra: usize) -> Self {
        Records {
            time: vec![0.0; n],
            extra: vec![vec![0.0; n]; extra],
            com: vec![0; n],
            agg: vec![0; n],
        }
    }

    /// One clear message when the columns disagree in length or hold a value
    /// that is not a finite number.
    pub fn validate(&self) -> Result<(), String> {
        let n = self.time.len();
        for (name, len) in [("com", self.com.len()), ("agg", self.agg.len())] {
            if len != n {
                return Err(format!("{name} has {len} entries for {n} flows"));
            }
        }
        for (k, col) in self.extra.iter().enumerate() {
            if col.len() != n {
                return Err(format!(
                    "attribute column {k} has {} entries for {n} flows",
                    col.len()
                ));
            }
            if let Some(i) = col.iter().position(|x| !x.is_finite()) {
                return Err(format!(
                    "attribute column {k}, flow {i}: {} is not a finite number",
                    col[i]
                ));
            }
        }
        if let Some(i) = self.time.iter().position(|x| !x.is_finite()) {
            return Err(format!(
                "flow {i}: start time {} is not a finite number",
                self.time[i]
            ));
        }
        Ok(())
    }
}

/// The diagonal distance of CODA §3.2: one non-negative weight per attribute.
#[derive(Debug, Clone, PartialEq)]
pub struct Metric {
    /// Weight of S_time (per second²).
    pub time: f64,
    /// Weights of the extra numeric columns of [`Records::extra`].
    pub extra: Vec<f64>,
    /// Weight of D_com.
    pub com: f64,
    /// Weight of D_prt.
    pub prt: f64,
}

impl Metric {
    pub fn new(time: f64, extra: Vec<f64>, com: f64, prt: f64) -> Result<Metric, String> {
        let m = Metric {
            time,
            extra,
            com,
            prt,
        };
        let all = [m.time, m.com, m.prt]
            .into_iter()
            .chain(m.extra.iter().copied());
        for w in all {
            if !(w.is_finite() && w >= 0.0) {
                return Err(format!("weight {w} is not a finite number >= 0"));
            }
        }
        Ok(m)
    }

    /// True when time is the only numeric attribute that counts: the clustering
    /// then uses time-sorted chains instead of pairwise scans.
    pub fn time_only(&self) -> bool {
        self.time > 0.0 && self.extra.iter().all(|&w| w == 0.0)
    }

    /// The categorical part of the distance² of flows `i` and `j`.
    #[inline]
    pub fn penalty(&self, r: &Records, i: usize, j: usize) -> f64 {
        let mut p = 0.0;
        if r.com[i] != r.com[j] {
            p += self.com;
        }
        if r.agg[i] != r.agg[j] {
            p += self.prt;
        }
        p
    }

    /// The squared distance of flows `i` and `j`.
    #[inline]
    pub fn d2(&self, r: &Records, i: usize, j: usize) -> f64 {
        let dt = r.time[i] - r.time[j];
        let mut s = self.time * dt * dt + self.penalty(r, i, j);
        for (k, &w) in self.extra.iter().enumerate() {
            if w > 0.0 {
                let d = r.extra[k][i] - r.extra[k][j];
                s += w * d * d;
            }
        }
        s
    }

    /// The categorical key of flow `i`: flows with different keys are at least
    /// `min(com, prt)`² apart (only attributes with a positive weight count).
    #[inline]
    pub fn group(&self, r: &Records, i: usize) -> (u64, u64) {
        (
            if self.com > 0.0 { r.com[i] } else { 0 },
            if self.prt > 0.0 { r.agg[i] } else { 0 },
        )
    }

    /// How far apart in time two flows may be and still be within distance `d`
    /// (infinite when time has no weight).
    pub fn time_window(&self, d: f64) -> f64 {
        if self.time > 0.0 {
            d / self.time.sqrt()
        } else {
            f64::INFINITY
        }
    }

    /// The categorical levels of the chain fast path: `(penalty, use com, use agg)`
    /// for every combination of matching categorical attributes.
    pub(crate) fn levels(&self) -> Vec<(f64, bool, bool)> {
        let mut v = vec![(0.0, self.com > 0.0, self.prt > 0.0)];
        if self.prt > 0.0 {
            v.push((self.prt, self.com > 0.0, false));
        }
        if self.com > 0.0 {
            v.push((self.com, false, self.prt > 0.0));
        }
        if self.com > 0.0 && self.prt > 0.0 {
            v.push((self.com + self.prt, false, false));
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_by_hand() {
        let r = Records {
            time: vec![0.0, 0.5, 0.5],
            extra: vec![vec![1.0, 3.0, 1.0]],
            com: vec![0, 0, 1],
            agg: vec![agg_key(1, 80), agg_key(1, 80), agg_key(2, 80)],
        };
        let m = Metric::new(4.0, vec![0.25], 5.0, 0.5).unwrap();
        // (0,1): 4·0.25 + 0.25·4 = 2
        assert_eq!(m.d2(&r, 0, 1), 2.0);
        // (1,2): 0 + 0.25·4 + 5 + 0.5 = 6.5
        assert_eq!(m.d2(&r, 1, 2), 6.5);
        assert_eq!(m.d2(&r, 2, 1), 6.5);
        assert!(!m.time_only());
        assert_eq!(m.time_window(1.0), 0.5);
        assert!(Metric::new(-1.0, vec![], 0.0, 0.0).is_err());
        assert!(Metric::new(f64::NAN, vec![], 0.0, 0.0).is_err());
    }
}
