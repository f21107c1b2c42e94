//! Synthetic Facebook-like workloads (`fb`), in the style of the Coflow-Benchmark
//! trace FB2010-1Hr-150-0.
//!
//! Every coflow is a mappers × reducers shuffle, exactly as in the benchmark format:
//! all flows start when the coflow arrives, each reducer's MB (1 MB = 2^20 bytes) are
//! split evenly across the coflow's mappers, mapper ports are distinct and sorted,
//! reducer ports likewise, flows are enumerated mapper-major, flow ids count from 0
//! and coflow ids from 1 in arrival order. As in the trace, every flow is a whole
//! number of MB (at least 1), so a reducer receives a multiple of the mapper count.
//!
//! The model, per coflow (parameters fitted to the trace; see `docs/synthetic.md`):
//!
//! 1. **Bin.** Each coflow belongs to one of the four bins SN, LN, SW, LW (short:
//!    largest flow < 5 MiB; narrow: at most 50 flows). The bins of the `n` coflows
//!    are drawn by stratified sampling of the bin mix, so every bin's count is within
//!    one of `n · fraction`, then shuffled over the arrival sequence.
//! 2. **Size.** The coflow's shuffle size `S` (MB) is drawn from its bin's size
//!    model: `S_min` with probability `p_min`, otherwise `ln S` is Kumaraswamy
//!    distributed between `ln S_min` and `ln S_max`. The draws are stratified inside
//!    each bin (one draw per quantile stratum), which keeps the total volume — carried
//!    by a handful of giant coflows — stable across seeds.
//! 3. **Width.** Reducers, then mappers, are drawn given `S`: a count is 1 with
//!    probability `p_one`, otherwise `round(exp(a + b·ln S + σ·N(0,1)))` clamped to
//!    `[2, ports]`. Pairs that do not fit the bin are redrawn; after a bounded number
//!    of attempts the last pair is repaired deterministically.
//! 4. **Flow sizes.** `S` is split over the reducers with log-normal weights; each
//!    reducer's share is divided by the mappers and rounded to whole MB per flow (at
//!    least 1), capped so no port carries more than the bin's `max_port_mb`, then
//!    clamped so that the largest flow lands in the bin's length class.
//! 5. **Arrivals.** Inter-arrival gaps are Weibull distributed with a correlated
//!    (bursty) Gaussian copula, then scaled so that the arrivals span
//!    `[0, duration_s)`; arrivals are whole milliseconds.
//!
//! Randomness comes only from [`Pcg32`], one stream per step, so a seed gives the same
//! workload forever. Flows are whole MB and arrivals whole milliseconds, so the
//! last-bit differences that platform math libraries may show in `exp`/`ln` almost
//! never reach the output.

use coflowkit_model::{
    Coflow, CoflowRecord, Fabric, FlowMeta, FlowRecord, ModelError, Pcg32, Workload,
    WorkloadBuilder, GBPS_BYTES_PER_S, MIB,
};

/// A coflow is short when its largest flow is below this many bytes (5 MiB).
pub const SHORT_BELOW_BYTES: f64 = 5.0 * MIB;
/// Largest whole-MB flow of a short coflow (flows are whole MB, as in the trace).
const SHORT_MAX_FLOW_MB: f64 = 4.0;
/// Smallest whole-MB largest flow of a long coflow.
const LONG_MIN_FLOW_MB: f64 = 5.0;
/// A coflow is narrow when it has at most this many flows.
pub const NARROW_MAX_FLOWS: u64 = 50;

/// Random streams, one per generation step, so that changing one step's draws does
/// not shift the others'.
const STREAM_BINS: u64 = 1;
const STREAM_ARRIVALS: u64 = 2;
const STREAM_SIZES: u64 = 3;
const STREAM_SHAPES: u64 = 4;
const STREAM_PORTS: u64 = 5;

/// Draws of the reducer count per coflow, and of the mapper count per reducer count,
/// before the width repair takes over.
const MAX_DRAWS: usize = 16;

/// The four coflow bins of the coflow literature (Varys, Aalo): short/long by the
/// largest flow, narrow/wide by the number of flows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Bin {
    /// Short (largest flow < 5 MiB) and narrow (≤ 50 flows).
    SN,
    /// Long (largest flow ≥ 5 MiB) and narrow.
    LN,
    /// Short and wide (> 50 flows).
    SW,
    /// Long and wide.
    LW,
}

impl Bin {
    /// All bins, in the order of [`SyntheticFb::bins`].
    pub const ALL: [Bin; 4] = [Bin::SN, Bin::LN, Bin::SW, Bin::LW];

    /// The bin of a coflow with `width` flows whose largest flow is `length_bytes`.
    pub fn of(width: u64, length_bytes: f64) -> Bin {
        let short = length_bytes < SHORT_BELOW_BYTES;
        let narrow = width <= NARROW_MAX_FLOWS;
        match (short, narrow) {
            (true, true) => Bin::SN,
            (false, true) => Bin::LN,
            (true, false) => Bin::SW,
            (false, false) => Bin::LW,
        }
    }

    /// The bin of a coflow of a workload.
    pub fn of_coflow(c: &Coflow) -> Bin {
        Bin::of(c.width as u64, c.length_bytes)
    }

    /// Whether the largest flow is below 5 MiB.
    pub fn is_short(self) -> bool {
        matches!(self, Bin::SN | Bin::SW)
    }

    /// Whether the coflow has at most 50 flows.
    pub fn is_narrow(self) -> bool {
        matches!(self, Bin::SN | Bin::LN)
    }

    /// Position in [`Bin::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// "SN", "LN", "SW" or "LW".
    pub fn name(self) -> &'static str {
        match self {
            Bin::SN => "SN",
            Bin::LN => "LN",
            Bin::SW => "SW",
            Bin::LW => "LW",
        }
    }
}

/// Distribution of a coflow's shuffle size `S` in MB (2^20 bytes): `min_mb` with
/// probability `p_min`; otherwise `ln S = ln min_mb + Y·(ln max_mb − ln min_mb)` with
/// `Y` Kumaraswamy(`shape_a`, `shape_b`) on [0, 1].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SizeModel {
    /// Smallest coflow size, MB.
    pub min_mb: f64,
    /// Largest coflow size, MB.
    pub max_mb: f64,
    /// Probability that the size is exactly `min_mb`.
    pub p_min: f64,
    /// Kumaraswamy shape `a` of the normalised log-size (> 0).
    pub shape_a: f64,
    /// Kumaraswamy shape `b` of the normalised log-size (> 0).
    pub shape_b: f64,
}

impl SizeModel {
    /// The size (MB) at quantile `u` in [0, 1).
    pub fn quantile_mb(&self, u: f64) -> f64 {
        if u < self.p_min {
            return self.min_mb;
        }
        let v = ((u - self.p_min) / (1.0 - self.p_min)).clamp(0.0, 1.0);
        let y = (1.0 - (1.0 - v).powf(1.0 / self.shape_b)).powf(1.0 / self.shape_a);
        let (lo, hi) = (self.min_mb.ln(), self.max_mb.ln());
        (lo + y * (hi - lo)).exp().clamp(self.min_mb, self.max_mb)
    }
}

/// Distribution of a count (mappers or reducers) given the coflow size `S` (MB):
/// 1 with probability `p_one`, otherwise
/// `round(exp(intercept + slope·ln S + sigma·N(0,1)))` clamped to `[2, ports]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CountModel {
    /// Probability that the count is 1.
    pub p_one: f64,
    /// Intercept of the log-count regression (log of a count).
    pub intercept: f64,
    /// Slope of the log-count on the log-size (dimensionless).
    pub slope: f64,
    /// Residual standard deviation of the log-count (≥ 0).
    pub sigma: f64,
}

impl CountModel {
    /// One count for a coflow of `ln_size_mb`, on a fabric of `ports` ports.
    fn draw(&self, ln_size_mb: f64, ports: u32, rng: &mut Pcg32) -> u32 {
        if rng.next_f64() < self.p_one {
            return 1;
        }
        let x = (self.intercept + self.slope * ln_size_mb + self.sigma * rng.normal()).exp();
        x.round().max(2.0).min(ports as f64) as u32
    }
}

/// The model of one bin.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BinModel {
    /// Share of the coflows in this bin (the fractions of all bins are normalised by
    /// their sum).
    pub fraction: f64,
    /// Coflow shuffle size, MB.
    pub size: SizeModel,
    /// Number of reducers.
    pub reducers: CountModel,
    /// Number of mappers.
    pub mappers: CountModel,
    /// Standard deviation of the log-normal weights that split the size over the
    /// reducers (0: even split).
    pub spread: f64,
    /// Most MB one port may send or receive in one coflow (its mapper share `S / m`
    /// or its reducer size); bounds a coflow's isolated completion time.
    pub max_port_mb: f64,
}

/// Parameters of the `fb` generator. [`Default`] is fitted to FB2010-1Hr-150-0; every
/// value and its origin is listed in `docs/synthetic.md`.
#[derive(Debug, Clone, PartialEq)]
pub struct SyntheticFb {
    /// Ports of the big-switch fabric (1 Gbps each); mapper and reducer ports are
    /// drawn from `0..ports`. Default 150.
    pub ports: u32,
    /// Length of the arrival window, seconds; every arrival lies in `[0, duration_s]`.
    /// Default 3600.
    pub duration_s: f64,
    /// Number of coflows generated (exact). Default 526.
    pub coflows: usize,
    /// Weibull shape of the inter-arrival gaps (< 1: burstier than Poisson).
    /// Default 0.7327.
    pub gap_shape: f64,
    /// Share (in [0, 1]) of the gaps' latent Gaussian variance that is persistent
    /// from one gap to the next (0: independent gaps). Default 0.3723.
    pub burst_weight: f64,
    /// Lag-one autocorrelation (in [0, 1)) of the persistent part. Default 0.7728.
    pub burst_persistence: f64,
    /// Per-bin models, in [`Bin::ALL`] order (SN, LN, SW, LW).
    pub bins: [BinModel; 4],
}

/// The bin models fitted to FB2010-1Hr-150-0 (see `docs/synthetic.md`).
const FB2010_BINS: [BinModel; 4] = [
    // SN: 309 of 526 coflows.
    BinModel {
        fraction: 0.5875,
        size: SizeModel {
            min_mb: 1.0,
            max_mb: 68.0,
            p_min: 0.3495,
            shape_a: 2.5857,
            shape_b: 2.3618,
        },
        reducers: CountModel {
            p_one: 0.8706,
            intercept: -3.4652,
            slope: 1.8186,
            sigma: 0.4814,
        },
        mappers: CountModel {
            p_one: 0.4434,
            intercept: -0.0785,
            slope: 0.9817,
            sigma: 0.3102,
        },
        spread: 0.2714,
        max_port_mb: 68.0,
    },
    // LN: 90 of 526 coflows.
    BinModel {
        fraction: 0.1711,
        size: SizeModel {
            min_mb: 6.0,
            max_mb: 10_344.0,
            p_min: 0.0,
            shape_a: 1.4368,
            shape_b: 2.4049,
        },
        reducers: CountModel {
            p_one: 0.6889,
            intercept: 4.4960,
            slope: -0.2852,
            sigma: 0.9549,
        },
        mappers: CountModel {
            p_one: 0.3444,
            intercept: -0.0965,
            slope: 0.2298,
            sigma: 0.3973,
        },
        spread: 0.3055,
        max_port_mb: 2251.0,
    },
    // SW: 59 of 526 coflows.
    BinModel {
        fraction: 0.1122,
        size: SizeModel {
            min_mb: 64.0,
            max_mb: 23_975.0,
            p_min: 0.0,
            shape_a: 2.5838,
            shape_b: 1.7214,
        },
        reducers: CountModel {
            p_one: 0.0508,
            intercept: 1.4835,
            slope: 0.2952,
            sigma: 0.7491,
        },
        mappers: CountModel {
            p_one: 0.1017,
            intercept: 0.5443,
            slope: 0.4688,
            sigma: 0.7027,
        },
        spread: 0.0847,
        max_port_mb: 548.0,
    },
    // LW: 68 of 526 coflows; 99% of the bytes.
    BinModel {
        fraction: 0.1293,
        size: SizeModel {
            min_mb: 136.0,
            max_mb: 8_501_205.0,
            p_min: 0.0,
            shape_a: 1.1548,
            shape_b: 1.2965,
        },
        reducers: CountModel {
            p_one: 0.0,
            intercept: 0.6966,
            slope: 0.3261,
            sigma: 0.8906,
        },
        mappers: CountModel {
            p_one: 0.0147,
            intercept: -1.7311,
            slope: 0.5228,
            sigma: 1.1487,
        },
        spread: 0.5052,
        max_port_mb: 232_145.0,
    },
];

impl Default for SyntheticFb {
    fn default() -> Self {
        SyntheticFb {
            ports: 150,
            duration_s: 3600.0,
            coflows: 526,
            gap_shape: 0.7327,
            burst_weight: 0.3723,
            burst_persistence: 0.7728,
            bins: FB2010_BINS,
        }
    }
}

/// The default `fb` workload for `seed`: `SyntheticFb::default().generate(seed)`.
pub fn synthetic_fb(seed: u64) -> Result<Workload, ModelError> {
    SyntheticFb::default().generate(seed)
}

/// One coflow's shape before ports are drawn.
struct Shape {
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
fn pick_bin(models: &[BinModel; 4], u: f64) -> Bin {
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
fn fits(bin: Bin, max_port_mb: f64, m: u32, r: u32, size_mb: f64) -> bool {
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
fn repair_load(m: u32, r: u32, size_mb: f64, max_port_mb: f64, ports: u32) -> (u32, u32) {
    let need = (size_mb / max_port_mb).ceil().min(ports as f64) as u32;
    (m.max(need), r.max(need))
}

/// Moves `(m, r)` into the bin's width class by shrinking the larger count (narrow)
/// or growing the smaller one (wide), one step at a time, within `[1, ports]`.
fn repair_width(bin: Bin, mut m: u32, mut r: u32, ports: u32) -> (u32, u32) {
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
fn split_flows(
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
fn pick_ports(k: u32, ports: u32, rng: &mut Pcg32, buf: &mut Vec<u32>) -> Vec<u32> {
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
fn erfc(x: f64) -> f64 {
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
fn validate_size(s: &SizeModel) -> Result<(), (&'static str, String)> {
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
fn validate_count(c: &CountModel) -> Result<(), (&'static str, String)> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erfc_matches_reference_values() {
        // erfc(0) = 1, erfc(1) = 0.157299207..., erfc(-1) = 1.842700792..., erfc(3) = 2.209049699e-5.
        for (x, want) in [
            (0.0, 1.0),
            (1.0, 0.157_299_207_050_285_1),
            (-1.0, 1.842_700_792_949_715),
            (3.0, 2.209_049_699_858_544e-5),
        ] {
            let got = erfc(x);
            assert!(
                (got - want).abs() <= 2e-7 * want,
                "erfc({x}) = {got}, want {want}"
            );
        }
    }

    #[test]
    fn size_quantiles_are_monotone_and_bounded() {
        for m in FB2010_BINS {
            let mut prev = 0.0;
            for i in 0..=1000 {
                let u = i as f64 / 1000.0 * 0.999_999;
                let s = m.size.quantile_mb(u);
                assert!(s >= prev && s >= m.size.min_mb && s <= m.size.max_mb);
                prev = s;
            }
        }
        // The SN atom: a third of the bin is exactly 1 MB.
        assert_eq!(FB2010_BINS[0].size.quantile_mb(0.3), 1.0);
    }

    #[test]
    fn picked_ports_are_distinct_sorted_and_in_range() {
        let mut rng = Pcg32::new(1, 1);
        let mut buf = Vec::new();
        for k in [1, 7, 150] {
            let p = pick_ports(k, 150, &mut rng, &mut buf);
            assert_eq!(p.len(), k as usize);
            assert!(p.windows(2).all(|w| w[0] < w[1]));
            assert!(p.iter().all(|&x| x < 150));
        }
    }

    #[test]
    fn width_repair_reaches_the_bin() {
        assert_eq!(repair_width(Bin::SN, 40, 3, 150), (16, 3));
        let (m, r) = repair_width(Bin::LW, 1, 1, 150);
        assert!(m as u64 * r as u64 > NARROW_MAX_FLOWS);
        let (m, r) = repair_width(Bin::SW, 8, 1, 8);
        assert!(m as u64 * r as u64 > NARROW_MAX_FLOWS && m <= 8 && r <= 8);
    }

    #[test]
    fn flow_split_respects_the_length_class_and_port_cap() {
        let mut rng = Pcg32::new(3, 3);
        let model = |spread, max_port_mb| BinModel {
            spread,
            max_port_mb,
            ..FB2010_BINS[0]
        };
        // Short: 1000 MB over 2 × 10 flows must clamp every flow at 4 MB.
        let mb = split_flows(Bin::SW, &model(0.5, 1e9), 1000.0, 2, 10, &mut rng);
        assert!(mb
            .iter()
            .all(|&x| (1.0..=4.0).contains(&x) && x.fract() == 0.0));
        // Long: 3 MB over 4 × 3 flows must lift one flow to 5 MB.
        let mb = split_flows(Bin::LN, &model(0.5, 1e9), 3.0, 4, 3, &mut rng);
        assert_eq!(mb.iter().cloned().fold(0.0, f64::max), 5.0);
        // The port cap: 2 mappers × 10 reducers sharing 1000 MB, no reducer above
        // 120 MB, so no flow above 60 MB.
        let mb = split_flows(Bin::LW, &model(1.0, 120.0), 1000.0, 2, 10, &mut rng);
        assert!(mb.iter().all(|&x| x <= 60.0), "{mb:?}");
        assert_eq!(repair_load(1, 2, 1000.0, 120.0, 150), (9, 9));
        assert_eq!(repair_load(1, 2, 1e9, 120.0, 150), (150, 150));
    }

    #[test]
    fn small_custom_workloads_keep_the_bin_mix() {
        let g = SyntheticFb {
            ports: 8,
            coflows: 40,
            duration_s: 10.0,
            ..SyntheticFb::default()
        };
        let w = g.generate(9).unwrap();
        assert_eq!(w.source, "synthetic:fb:seed=9:custom");
        assert_eq!(w.coflows.len(), 40);
        assert!(w.flows.iter().all(|f| f.src < 8 && f.dst < 8));
        assert!(w.coflows.iter().all(|c| c.arrival_s <= 10.0));
        for b in Bin::ALL {
            let n = w.coflows.iter().filter(|c| Bin::of_coflow(c) == b).count() as f64;
            assert!((n - 40.0 * g.bin(b).fraction).abs() <= 1.0, "{b:?}: {n}");
        }
    }

    #[test]
    fn invalid_parameters_are_errors_not_panics() {
        let d = SyntheticFb::default;
        let field = |g: SyntheticFb| g.generate(1).unwrap_err().field;
        assert_eq!(field(SyntheticFb { ports: 0, ..d() }), "ports");
        assert_eq!(field(SyntheticFb { coflows: 0, ..d() }), "coflows");
        assert_eq!(
            field(SyntheticFb {
                duration_s: f64::NAN,
                ..d()
            }),
            "duration_s"
        );
        assert_eq!(
            field(SyntheticFb {
                burst_persistence: 1.0,
                ..d()
            }),
            "burst_persistence"
        );
        // Wide bins cannot exist on 7 ports (49 flows at most).
        assert_eq!(field(SyntheticFb { ports: 7, ..d() }), "bins.SW.fraction");
        let mut g = d();
        g.bins[3].size.shape_a = 0.0;
        assert_eq!(field(g), "bins.LW.size.shape_a");
        let mut g = d();
        g.bins[1].mappers.p_one = 2.0;
        assert_eq!(field(g), "bins.LN.mappers.p_one");
        let mut g = d();
        g.bins.iter_mut().for_each(|b| b.fraction = 0.0);
        assert_eq!(field(g), "bins");
        // Only narrow bins on 7 ports is fine.
        let mut g = SyntheticFb {
            ports: 7,
            coflows: 30,
            ..d()
        };
        g.bins[2].fraction = 0.0;
        g.bins[3].fraction = 0.0;
        let w = g.generate(2).unwrap();
        assert!(w.coflows.iter().all(|c| Bin::of_coflow(c).is_narrow()));
    }
}
