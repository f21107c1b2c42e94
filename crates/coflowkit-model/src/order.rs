//! [`TotalF64`]: an `f64` ordered by [`f64::total_cmp`], for heap and sort keys.

/// An `f64` with a total order ([`f64::total_cmp`]: -0 before +0, NaN last), so
/// that it can key a `BinaryHeap` or a `BTreeMap`. Times and rates in the
/// engine and the policies are finite; the order only has to be total.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TotalF64(pub f64);

impl Eq for TotalF64 {}

impl PartialOrd for TotalF64 {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for TotalF64 {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&o.0)
    }
}

#[cfg(test)]
mod tests {
    use super::TotalF64;

    #[test]
    fn orders_as_total_cmp() {
        let mut v = [2.5, -1.0, 0.0, -0.0, f64::INFINITY, 1e-300].map(TotalF64);
        v.sort();
        let got: Vec<f64> = v.iter().map(|x| x.0).collect();
        assert_eq!(got, vec![-1.0, -0.0, 0.0, 1e-300, 2.5, f64::INFINITY]);
        assert!(got[1].is_sign_negative() && got[2].is_sign_positive());
    }
}
