//! Sampling of the `fb` model: bins, arrivals, sizes, widths, flow splits and ports.

use super::*;

/// One coflow's shape before ports are drawn.
pub(super) struct Shape {
    mappers: u32,
    /// Size of each flow to each reducer, whole MB (the reducer receives
    /// `mappers ×` this).
    flow_mb: Vec<f64>,
}

impl SyntheticFb {
    /// The model of bin `b`.
    pub fn bin(&self, b: Bin) -> &BinModel {
        &self.bins[b.index()]
    }

    /// Name of the generated workload's source: `synthetic:fb:seed=N`, with
    /// `:custom` appended when the parameters are not the defaults.
    pub fn source_name(&self, seed: u64) -> String {
        if *self == SyntheticFb::default() {
            format!("synthetic:fb:seed={seed}")
        } else {
            format!("synthetic:fb:seed={seed}:custom")
        }
    }

    /// Generates the workload for `seed` on a big switch of `ports` 1 Gbps ports.
    pub fn generate(&self, seed: u64) -> Result<Workload, ModelError> {
        self.validate()?;
        let bins = self.assign_bins(&mut Pcg32::new(seed, STREAM_BINS));
        let arrivals = self.arrivals_s(&mut Pcg32::new(seed, STREAM_ARRIVALS));
        let sizes = self.stratified_sizes_mb(&bins, &mut Pcg32::new(seed, STREAM_SIZES));
        let mut shape_rng = Pcg32::new(seed, STREAM_SHAPES);
        let mut port_rng = Pcg32::new(seed, STREAM_PORTS);
        let mut ports_buf = Vec::with_capacity(self.ports as usize);
        let mut b = WorkloadBuilder::new(self.source_name(seed));
        let mut next_flow = 0u64;
        for (k, ((&bin, &arrival_s), &size_mb)) in
            bins.iter().zip(&arrivals).zip(&sizes).enumerate()
        {
            let shape = self.shape(bin, size_mb, &mut shape_rng);
            let mappers = pick_ports(shape.mappers, self.ports, &mut port_rng, &mut ports_buf);
            let reducer_count = shape.flow_mb.len() as u32;
            let reducers = pick_ports(reducer_count, self.ports, &mut port_rng, &mut ports_buf);
            let id = k as u64 + 1;
            b.add_coflow(CoflowRecord {
                id,
                arrival_s: Some(arrival_s),
                weight: 1.0,
                line: 0,
            })?;
            for &src in &mappers {
                for (&dst, &mb) in reducers.iter().zip(&shape.flow_mb) {
                    b.add_flow(FlowRecord {
                        coflow_id: id,
                        flow_id: next_flow,
                        src: src as i64,
                        dst: dst as i64,
                        size_bytes: mb * MIB,
                        start_s: arrival_s,
                        depends_on: Vec::new(),
                        meta: FlowMeta::default(),
                        line: 0,
                    })?;
                    next_flow += 1;
                }
            }
        }
        b.build(Fabric::big_switch(self.ports, GBPS_BYTES_PER_S)?)
    }

    /// Checks every parameter; the generator cannot fail or panic after this passes.
    pub fn validate(&self) -> Result<(), ModelError> {
        let bad = |field: &str, msg: String| Err(ModelError::param(field, msg));
        if self.ports == 0 {
            return bad("ports", "the fabric needs at least one port".into());
        }
        if !(self.duration_s.is_finite() && self.duration_s > 0.0) {
            return bad(
                "duration_s",
                format!("must be > 0 seconds, got {}", self.duration_s),
            );
        }
        if self.coflows == 0 {
            return bad("coflows", "must be at least 1".into());
        }
        let most_flows = self.coflows as u128 * (self.ports as u128).pow(2);
        if most_flows > u32::MAX as u128 {
            return bad(
                "coflows",
                format!(
                    "{} coflows on {} ports may exceed 2^32 flows",
                    self.coflows, self.ports
                ),
            );
        }
        if !(self.gap_shape.is_finite() && self.gap_shape > 0.0) {
            return bad("gap_shape", format!("must be > 0, got {}", self.gap_shape));
        }
        if !(0.0..=1.0).contains(&self.burst_weight) {
            return bad(
                "burst_weight",
                format!("must be in [0, 1], got {}", self.burst_weight),
            );
        }
        if !(0.0..1.0).contains(&self.burst_persistence) {
            return bad(
                "burst_persistence",
                format!("must be in [0, 1), got {}", self.burst_persistence),
            );
        }
        self.validate_bins()
    }

    fn validate_bins(&self) -> Result<(), ModelError> {
        let mut total = 0.0;
        for bin in Bin::ALL {
            let m = self.bin(bin);
            let field = |what: &str| format!("bins.{}.{what}", bin.name());
            if !(m.fraction.is_finite() && m.fraction >= 0.0) {
                return Err(ModelError::param(
                    field("fraction"),
                    format!("must be ≥ 0, got {}", m.fraction),
                ));
            }
            total += m.fraction;
            if m.fraction == 0.0 {
                continue;
            }
            if !bin.is_narrow() && (self.ports as u64).pow(2) <= NARROW_MAX_FLOWS {
                return Err(ModelError::param(
                    field("fraction"),
                    format!(
                        "a wide coflow needs more than {NARROW_MAX_FLOWS} flows, impossible on {} ports",
                        self.ports
                    ),
                ));
            }
            validate_size(&m.size).map_err(|(f, msg)| ModelError::param(field(f), msg))?;
            for (name, c) in [("reducers", &m.reducers), ("mappers", &m.mappers)] {
                validate_count(c)
                    .map_err(|(f, msg)| ModelError::param(field(&format!("{name}.{f}")), msg))?;
            }
            if !(m.spread.is_finite() && m.spread >= 0.0) {
                return Err(ModelError::param(
                    field("spread"),
                    format!("must be ≥ 0, got {}", m.spread),
                ));
            }
            if !(m.max_port_mb.is_finite() && m.max_port_mb >= 1.0) {
                return Err(ModelError::param(
                    field("max_port_mb"),
                    format!("must be ≥ 1 MB, got {}", m.max_port_mb),
                ));
            }
        }
        if total <= 0.0 {
            return Err(ModelError::param(
                "bins",
                "at least one bin needs a fraction > 0",
            ));
        }
        Ok(())
    }

    /// The bin of each coflow in arrival order: stratified over the bin mix (every
    /// bin's count is within one of `coflows · fraction`), then shuffled.
    fn assign_bins(&self, rng: &mut Pcg32) -> Vec<Bin> {
        let total: f64 = self.bins.iter().map(|m| m.fraction).sum();
        let n = self.coflows;
        let mut bins: Vec<Bin> = (0..n)
            .map(|i| {
                let u = (i as f64 + rng.next_f64()) / n as f64 * total;
                pick_bin(&self.bins, u)
            })
            .collect();
        rng.shuffle(&mut bins);
        bins
    }

    /// Arrival times, seconds: whole milliseconds, non-decreasing, the first at 0 and
    /// none after `duration_s`.
    fn arrivals_s(&self, rng: &mut Pcg32) -> Vec<f64> {
        let gaps = self.gaps(rng);
        let total: f64 = gaps.iter().sum();
        // All-zero gaps (possible only for a single coflow) put every arrival at 0.
        let scale = if total > 0.0 {
            self.duration_s / total
        } else {
            0.0
        };
        let mut t = 0.0;
        let mut out = Vec::with_capacity(gaps.len());
        for g in &gaps {
            let ms = (t * scale * 1000.0).floor();
            out.push((ms / 1000.0).min(self.duration_s));
            t += g;
        }
        out
    }

    /// `coflows` inter-arrival gaps (arbitrary time unit; the last one follows the
    /// last arrival): Weibull(`gap_shape`) marginals through a Gaussian copula whose
    /// latent variable is `√w·AR(1) + √(1−w)·noise`, with `w = burst_weight` and the
    /// AR(1) coefficient `burst_persistence`.
    fn gaps(&self, rng: &mut Pcg32) -> Vec<f64> {
        let (w, phi) = (self.burst_weight, self.burst_persistence);
        let innovation = (1.0 - phi * phi).sqrt();
        let mut x = rng.normal();
        (0..self.coflows)
            .map(|_| {
                x = phi * x + innovation * rng.normal();
                let z = w.sqrt() * x + (1.0 - w).sqrt() * rng.normal();
                let survival = (0.5 * erfc(z / std::f64::consts::SQRT_2)).max(f64::MIN_POSITIVE);
                (-survival.ln()).powf(1.0 / self.gap_shape)
            })
            .collect()
    }

    /// The shuffle size (MB) of each coflow: stratified inside each bin, so that the
    /// `n_b` coflows of bin `b` take one quantile from each of `n_b` equal strata in
    /// random order.
    fn stratified_sizes_mb(&self, bins: &[Bin], rng: &mut Pcg32) -> Vec<f64> {
        let pools: Vec<Vec<f64>> = Bin::ALL
            .iter()
            .map(|&b| {
                let n = bins.iter().filter(|&&x| x == b).count();
                let mut strata: Vec<usize> = (0..n).collect();
                rng.shuffle(&mut strata);
                let size = &self.bin(b).size;
                strata
                    .iter()
                    .map(|&k| size.quantile_mb((k as f64 + rng.next_f64()) / n as f64))
                    .collect()
            })
            .collect();
        let mut used = [0usize; 4];
        bins.iter()
            .map(|b| {
                let i = b.index();
                used[i] += 1;
                pools[i][used[i] - 1]
            })
            .collect()
    }

    /// Mappers and reducer sizes of a coflow of bin `bin` and size `size_mb` MB.
    fn shape(&self, bin: Bin, size_mb: f64, rng: &mut Pcg32) -> Shape {
        let model = self.bin(bin);
        let (m, r) = self.width(bin, size_mb, rng);
        let flow_mb = split_flows(bin, model, size_mb, m, r, rng);
        Shape {
            mappers: m,
            flow_mb,
        }
    }

    /// (mappers, reducers) of a coflow: reducers first, then mappers given the
    /// reducers, redrawn until the pair fits the bin and the size; the last pair is
    /// repaired when no draw fits.
    fn width(&self, bin: Bin, size_mb: f64, rng: &mut Pcg32) -> (u32, u32) {
        let model = self.bin(bin);
        let ln_s = size_mb.ln();
        let (mut m, mut r) = (1, 1);
        for _ in 0..MAX_DRAWS {
            r = model.reducers.draw(ln_s, self.ports, rng);
            for _ in 0..MAX_DRAWS {
                m = model.mappers.draw(ln_s, self.ports, rng);
                if fits(bin, model.max_port_mb, m, r, size_mb) {
                    return (m, r);
                }
            }
        }
        let (m, r) = repair_load(m, r, size_mb, model.max_port_mb, self.ports);
        repair_width(bin, m, r, self.ports)
    }
}

/// The bin at cumulative position `u` (in `[0, Σ fractions)`) of the bin mix.
pub(super) fn pick_bin(models: &[BinModel; 4], u: f64) -> Bin {
    let mut acc = 0.0;
    let mut last = Bin::SN;
    for b in Bin::ALL {
        let f = models[b.index()].fraction;
        if f <= 0.0 {
            continue;
        }
        acc += f;
        last = b;
        if u < acc {
            return b;
        }
    }
    last
}

/// Whether `m` mappers and `r` reducers suit a coflow of `size_mb` MB in `bin`: the
/// width is in the bin; no port's even share exceeds `max_port_mb`; and whole-MB
/// flows can put the largest flow in the bin's length class without clamping much.
/// A long coflow must also give every flow at least 1 MB of `size_mb`; a short one
/// may be wider than its size, and then carries 1 MB per flow (as most of the
/// trace's short wide coflows do).
pub(super) fn fits(bin: Bin, max_port_mb: f64, m: u32, r: u32, size_mb: f64) -> bool {
    let width = m as u64 * r as u64;
    if (width <= NARROW_MAX_FLOWS) != bin.is_narrow() {
        return false;
    }
    if size_mb / m as f64 > max_port_mb || size_mb / r as f64 > max_port_mb {
        return false;
    }
    if bin.is_short() {
        size_mb <= width as f64 * SHORT_MAX_FLOW_MB
    } else {
        width as f64 <= size_mb.round().max(1.0) && size_mb >= m as f64 * LONG_MIN_FLOW_MB
    }
}

/// Raises `m` and `r` (up to `ports`) until the even shares `size_mb / m` and
/// `size_mb / r` are at most `max_port_mb`.
pub(super) fn repair_load(
    m: u32,
    r: u32,
    size_mb: f64,
    max_port_mb: f64,
    ports: u32,
) -> (u32, u32) {
    let need = (size_mb / max_port_mb).ceil().min(ports as f64) as u32;
    (m.max(need), r.max(need))
}

/// Moves `(m, r)` into the bin's width class by shrinking the larger count (narrow)
/// or growing the smaller one (wide), one step at a time, within `[1, ports]`.
pub(super) fn repair_width(bin: Bin, mut m: u32, mut r: u32, ports: u32) -> (u32, u32) {
    let width = |m: u32, r: u32| m as u64 * r as u64;
    if bin.is_narrow() {
        while width(m, r) > NARROW_MAX_FLOWS {
            if m >= r {
                m -= 1;
            } else {
                r -= 1;
            }
        }
    } else {
        while width(m, r) <= NARROW_MAX_FLOWS {
            if m < ports && (m <= r || r >= ports) {
                m += 1;
            } else if r < ports {
                r += 1;
            } else {
                break; // only when ports² ≤ 50, which validate() rejects
            }
        }
    }
    (m, r)
}

/// Whole-MB flow sizes, one per reducer (every mapper sends that much to it): the
/// reducers share `size_mb` MB with log-normal weights of standard deviation
/// `model.spread`; each flow is at least 1 MB and each reducer receives at most
/// `model.max_port_mb`; then the flows are clamped into the bin's length class
/// (which wins over the port cap).
pub(super) fn split_flows(
    bin: Bin,
    model: &BinModel,
    size_mb: f64,
    m: u32,
    r: u32,
    rng: &mut Pcg32,
) -> Vec<f64> {
    let weights: Vec<f64> = (0..r)
        .map(|_| (model.spread * rng.normal()).exp())
        .collect();
    let sum: f64 = weights.iter().sum();
    let per_flow = size_mb / (sum * m as f64);
    let cap = (model.max_port_mb / m as f64).floor().max(1.0);
    let mut mb: Vec<f64> = weights
        .iter()
        .map(|w| (per_flow * w).round().clamp(1.0, cap))
        .collect();
    if bin.is_short() {
        mb.iter_mut().for_each(|x| *x = x.min(SHORT_MAX_FLOW_MB));
    } else {
        let largest = mb.iter_mut().reduce(|a, b| if *b > *a { b } else { a });
        if let Some(x) = largest {
            *x = x.max(LONG_MIN_FLOW_MB);
        }
    }
    mb
}

/// `k` distinct ports out of `0..ports`, ascending (partial Fisher–Yates over `buf`).
pub(super) fn pick_ports(k: u32, ports: u32, rng: &mut Pcg32, buf: &mut Vec<u32>) -> Vec<u32> {
    let k = k.min(ports);
    buf.clear();
    buf.extend(0..ports);
    for i in 0..k {
        let j = i + rng.below(ports - i);
        buf.swap(i as usize, j as usize);
    }
    let mut out = buf[..k as usize].to_vec();
    out.sort_unstable();
    out
}

/// Complementary error function (Numerical Recipes `erfcc`, Chebyshev fit with
/// fractional error below 1.2e-7 everywhere).
pub(super) fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * (-z * z + poly).exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

/// Checks a size model; `Err((field, message))`.
pub(super) fn validate_size(s: &SizeModel) -> Result<(), (&'static str, String)> {
    if !(s.min_mb.is_finite() && s.min_mb > 0.0) {
        return Err(("size.min_mb", format!("must be > 0 MB, got {}", s.min_mb)));
    }
    if !(s.max_mb.is_finite() && s.max_mb >= s.min_mb) {
        return Err((
            "size.max_mb",
            format!("must be ≥ min_mb ({}), got {}", s.min_mb, s.max_mb),
        ));
    }
    if !(0.0..=1.0).contains(&s.p_min) {
        return Err(("size.p_min", format!("must be in [0, 1], got {}", s.p_min)));
    }
    for (f, v) in [("size.shape_a", s.shape_a), ("size.shape_b", s.shape_b)] {
        if !(v.is_finite() && v > 0.0) {
            return Err((f, format!("must be > 0, got {v}")));
        }
    }
    Ok(())
}

/// Checks a count model; `Err((field, message))`.
pub(super) fn validate_count(c: &CountModel) -> Result<(), (&'static str, String)> {
    if !(0.0..=1.0).contains(&c.p_one) {
        return Err(("p_one", format!("must be in [0, 1], got {}", c.p_one)));
    }
    if !(c.intercept.is_finite() && c.slope.is_finite()) {
        return Err((
            "intercept",
            format!(
                "intercept and slope must be finite, got {} and {}",
                c.intercept, c.slope
            ),
        ));
    }
    if !(c.sigma.is_finite() && c.sigma >= 0.0) {
        return Err(("sigma", format!("must be ≥ 0, got {}", c.sigma)));
    }
    Ok(())
}
