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

mod sample;
#[cfg(test)]
mod tests;
