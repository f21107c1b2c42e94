//! `aalo`: Discretized Coflow-Aware Least-Attained Service (Chowdhury and Stoica,
//! SIGCOMM'15). See docs/policies/aalo.md.
//!
//! ```text
//! thresholds  T_q = T0 · E^q,  q = 0..K-2  (queue K-1 unbounded)
//! queue(k)    = min { q : sent_k < T_q }   (sent_k counts finished flows too)
//! order       (queue, arrival, id); strict priority across and FIFO within queues
//! rates       priority max-min, one group per coflow (max-min fair inside a coflow)
//! wake-up     when sent_k reaches T_queue(k) at current rates (an exact event)
//! ```
//!
//! `variant=coflowsim` is CoflowSim's DARK (`CoflowSimulatorDark`, the Aalo the
//! NC-DRF and MCS papers ran), under either engine:
//!
//! ```text
//! queues      a new coflow joins the end of queue 0; at each call, queue by queue,
//!             a coflow whose bytes sent exceed T0·E^q' for its queue q' moves to the
//!             end of the next queue (and may move again in that queue's pass)
//! order       queue, then order of entry into the queue
//! rates       per coflow in that order, on what earlier ones left, each flow whose
//!             links all have capacity left gets min over its links of
//!             left(l) / (this coflow's such flows on l); no max-min, no backfill
//! wake-up     none: the coflows move only when the policy is called (under CoflowSim
//!             at admissions and departures; on the exact engine pair it with
//!             realloc=coflow)
//! ```

use crate::support::priority::CountShare;
use crate::support::rankclasses::RankClasses;
use crate::view::Common;
use crate::support::thresholds::Thresholds;
use crate::decision::{Decision, Wakeup};
use crate::policy::NonClairvoyantPolicy;
use crate::view::NonClairvoyantView;
use crate::policy::{AnyPolicy, Info};
use crate::spec::{non_clairvoyant, PolicySpec};
use crate::params::{ParamSpec, Params};
use coflowkit_model::ModelError;

pub struct Aalo {
    thresholds: Thresholds,
    /// The order, told as classes or rates (`support::rankclasses`).
    rank: RankClasses,
    /// `form=classes`: the order goes to a driver that takes delta
    /// decisions as classes (else always rates, from `rank.prio`).
    classes: bool,
    keyed: Vec<(usize, u32, usize)>,
    order: Vec<usize>,
}

impl Aalo {
    pub fn new(queues: usize, first_threshold_bytes: f64, multiplier: f64) -> Self {
        Aalo {
            thresholds: Thresholds::new(queues, first_threshold_bytes, multiplier),
            rank: RankClasses::default(),
            classes: false,
            keyed: Vec::new(),
            order: Vec::new(),
        }
    }

    /// Tells the order as classes to a driver that takes them
    /// (`form=classes`; see docs/policies/aalo.md, Notes).
    pub fn with_classes(mut self, on: bool) -> Self {
        self.classes = on;
        self
    }

    /// The queue of a coflow that has sent `sent` bytes.
    pub fn queue(&self, sent: f64) -> usize {
        self.thresholds.queue(sent)
    }
}

impl NonClairvoyantPolicy for Aalo {
    fn decide(&mut self, v: &NonClairvoyantView, out: &mut Decision) {
        self.keyed.clear();
        for (gi, g) in v.groups.iter().enumerate() {
            let q = self.queue(v.coflow_sent(g.coflow));
            self.keyed.push((q, g.coflow, gi));
        }
        self.keyed.sort_unstable();
        self.order.clear();
        self.order.extend(self.keyed.iter().map(|x| x.2));
        if self.classes {
            self.rank.serve(v, &self.order, &[], out);
        } else {
            self.rank.prio.run(v, &self.order, out);
        }
        for &(q, k, _) in &self.keyed {
            if let Some(bytes) = self.thresholds.upper(q) {
                out.wakeups.push(Wakeup::CoflowSent { coflow: k, bytes });
            }
        }
    }
}

/// `aalo:within=fair`: D-CLAS's queues as strict-priority switch classes,
/// the flows of one queue sharing it max-min whatever their coflow (TCP inside
/// a switch queue), instead of FIFO between the coflows of a queue.
pub struct SharedQueues {
    thresholds: Thresholds,
    /// Per coflow index: the class its flows were last told (`UNSET`: none).
    told: Vec<u8>,
}

const UNSET: u8 = u8::MAX;

impl SharedQueues {
    pub fn new(queues: usize, first_threshold_bytes: f64, multiplier: f64) -> Self {
        SharedQueues {
            thresholds: Thresholds::new(queues, first_threshold_bytes, multiplier),
            told: Vec::new(),
        }
    }
}

impl NonClairvoyantPolicy for SharedQueues {
    fn decide(&mut self, v: &NonClairvoyantView, out: &mut Decision) {
        let c: &Common = v;
        let delta = out.delta_ok;
        if delta {
            // Named once when a flow starts, and again, with all its
            // coflow's flows, when the coflow crosses into the next queue.
            out.class_delta = true;
            // A driver may add coflows between calls (what was told stands);
            // fewer coflows is another workload.
            let nc = c.coflow_width.len();
            if self.told.len() > nc {
                self.told.clear();
            }
            self.told.resize(nc, UNSET);
        } else {
            out.classes.clear();
            out.classes.resize(c.active.len(), 0);
        }
        for g in c.groups {
            let q = self.thresholds.queue(c.coflow_sent(g.coflow));
            if delta {
                let was = std::mem::replace(&mut self.told[g.coflow as usize], q as u8);
                if was != UNSET && was != q as u8 {
                    out.class_moves
                        .extend(c.active[g.range()].iter().map(|&f| (f, q as u8)));
                }
            } else {
                out.classes[g.range()].fill(q as u8);
            }
            if let Some(bytes) = self.thresholds.upper(q) {
                out.wakeups.push(Wakeup::CoflowSent {
                    coflow: g.coflow,
                    bytes,
                });
            }
        }
        if delta {
            let told = &self.told;
            out.class_moves.extend(
                c.started
                    .iter()
                    .map(|&f| (f, told[c.flow_coflow[f as usize] as usize])),
            );
        }
    }
}

/// `aalo:variant=coflowsim`: CoflowSim's DARK (see the module doc).
pub struct Dark {
    queues: Vec<Vec<u32>>,
    first: f64,
    mult: f64,
    /// Per coflow: its queue (`currentJobQueue`, which may pass the last one), or
    /// -1 before it is seen.
    cur: Vec<i64>,
    /// Per coflow: its group in the current view, or `u32::MAX`.
    group: Vec<u32>,
    share: CountShare,
}

impl Dark {
    pub fn new(queues: usize, first_threshold_bytes: f64, multiplier: f64) -> Self {
        Dark {
            queues: vec![Vec::new(); queues],
            first: first_threshold_bytes,
            mult: multiplier,
            cur: Vec::new(),
            group: Vec::new(),
            share: CountShare::default(),
        }
    }

    /// `updateJobOrder`: the queue a coflow of `size` bytes sent belongs in is the
    /// number of limits T0·E^q strictly below `size`.
    fn reorder(&mut self, v: &NonClairvoyantView) {
        let n = self.queues.len();
        for i in 0..n {
            let mut moved = Vec::new();
            for &k in &self.queues[i] {
                let size = v.coflow_sent(k);
                let (mut q, mut lim) = (0i64, self.first);
                while lim < size {
                    q += 1;
                    lim *= self.mult;
                }
                if self.cur[k as usize] < q {
                    self.cur[k as usize] += 1;
                    moved.push(k);
                }
            }
            if i + 1 < n && !moved.is_empty() {
                self.queues[i].retain(|k| !moved.contains(k));
                self.queues[i + 1].extend_from_slice(&moved);
            }
        }
    }
}

impl NonClairvoyantPolicy for Dark {
    fn decide(&mut self, v: &NonClairvoyantView, out: &mut Decision) {
        let nc = v.coflow_width.len();
        if self.cur.len() < nc {
            self.cur.resize(nc, -1);
            self.group.resize(nc, u32::MAX);
        }
        // `removeDeadJob` and `addToSortedJobs`: the active coflows, new ones last.
        for (gi, g) in v.groups.iter().enumerate() {
            self.group[g.coflow as usize] = gi as u32;
        }
        let group = &self.group;
        for q in &mut self.queues {
            q.retain(|&k| group[k as usize] != u32::MAX);
        }
        for g in v.groups {
            if self.cur[g.coflow as usize] < 0 {
                self.cur[g.coflow as usize] = 0;
                self.queues[0].push(g.coflow);
            }
        }
        self.reorder(v);
        self.share.begin(v);
        for q in &self.queues {
            for &k in q {
                let g = v.groups[self.group[k as usize] as usize];
                self.share.serve(v, g.range(), out);
            }
        }
        for g in v.groups {
            self.group[g.coflow as usize] = u32::MAX;
        }
    }
}

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "queues",
        default: "10",
        help: "number of queues K",
    },
    ParamSpec {
        name: "first_threshold_bytes",
        default: "10485760",
        help: "upper bound of queue 0 (10 MiB)",
    },
    ParamSpec {
        name: "multiplier",
        default: "10",
        help: "threshold growth factor E between queues",
    },
    ParamSpec {
        name: "variant",
        default: "dclas",
        help: "dclas (Aalo's D-CLAS, exact crossings) or coflowsim (CoflowSim's DARK: reordered only when called, one-pass per-coflow shares)",
    },
    ParamSpec {
        name: "within",
        default: "fifo",
        help: "variant=dclas: inside a queue, fifo (Aalo: coflows one after another, max-min inside each) or fair (switch queues: every flow of the queue shares max-min, as TCP in one priority queue)",
    },
    ParamSpec {
        name: "form",
        default: "auto",
        help: "how the engine is told the order: classes (one class per coflow, kept as bottleneck groups; variant=dclas with within=fifo only), rates, or auto (classes where they apply, else rates); the same finish times, classes faster on steady traces and slower when every coflow arrives at once: docs/policies/aalo.md",
    },
];

fn build(p: &Params) -> Result<AnyPolicy, ModelError> {
    let k = p.usize_in("queues", 1, 64)?;
    let t0 = p.f64_in("first_threshold_bytes", 1.0, 1e18)?;
    let e = p.f64_in("multiplier", 1.0 + 1e-9, 1e6)?;
    let within = p.text("within");
    if !matches!(within, "fifo" | "fair") {
        return Err(ModelError::param(
            "param",
            format!("aalo: within={within} is not one of fifo, fair"),
        ));
    }
    let applies = within == "fifo" && p.text("variant") == "dclas";
    let classes = match p.text("form") {
        "auto" => applies,
        "rates" => false,
        "classes" if applies => true,
        "classes" => {
            return Err(ModelError::param(
                "param",
                "aalo: form=classes is a form of variant=dclas with within=fifo",
            ))
        }
        other => {
            return Err(ModelError::param(
                "param",
                format!("aalo: form={other} is not one of auto, rates, classes"),
            ))
        }
    };
    match (p.text("variant"), within) {
        ("dclas", "fifo") => non_clairvoyant(Aalo::new(k, t0, e).with_classes(classes)),
        ("dclas", _) => non_clairvoyant(SharedQueues::new(k, t0, e)),
        ("coflowsim", "fifo") => non_clairvoyant(Dark::new(k, t0, e)),
        ("coflowsim", _) => Err(ModelError::param(
            "param",
            "aalo: within=fair is a form of variant=dclas (CoflowSim's DARK has no switch queues)",
        )),
        (other, _) => Err(ModelError::param(
            "param",
            format!("aalo: variant={other} is not one of dclas, coflowsim"),
        )),
    }
}

pub const SPEC: PolicySpec = PolicySpec {
    name: "aalo",
    info: Info::NonClairvoyant,
    knows: "",
    summary: "D-CLAS: queues by bytes sent, FIFO within (Aalo)",
    rule: "queues by bytes sent (exponential thresholds); strict priority across queues, FIFO inside a queue, max-min inside a coflow",
    paper: "Aalo (D-CLAS): Chowdhury, Stoica, SIGCOMM'15",
    params: PARAMS,
    needs: &[],
    build,
    example_ccts: [0.0625, 0.078125, 0.07775],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{close, Case};

    #[test]
    fn queues_follow_bytes_sent() {
        let a = Aalo::new(3, 10.0, 10.0);
        // Thresholds 10, 100; queue 2 unbounded.
        assert_eq!(a.queue(0.0), 0);
        assert_eq!(a.queue(9.9), 0);
        assert_eq!(a.queue(10.0), 1);
        assert_eq!(a.queue(10.0 - 1e-7), 1); // within the byte tolerance
        assert_eq!(a.queue(99.0), 1);
        assert_eq!(a.queue(1e9), 2);
    }

    #[test]
    fn less_attained_service_goes_first_and_asks_for_its_crossing() {
        // C = 10, T0 = 10 B, E = 10, K = 3. Coflow 0 (earlier) has sent 50 B → queue 1;
        // coflow 1 has sent 2 B → queue 0 and goes first through the shared down1.
        let c = Case::new(3, 10.0, &[(0, 0, 1, 100.0, 50.0), (1, 2, 1, 100.0, 2.0)]);
        let mut d = Decision::default();
        d.reset(2);
        Aalo::new(3, 10.0, 10.0).decide(&c.non_clairvoyant(), &mut d);
        close(&d.rates, &[0.0, 10.0]);
        assert_eq!(
            d.wakeups,
            vec![
                Wakeup::CoflowSent {
                    coflow: 1,
                    bytes: 10.0
                },
                Wakeup::CoflowSent {
                    coflow: 0,
                    bytes: 100.0
                }
            ]
        );
    }

    #[test]
    fn coflowsim_variant_shares_in_one_pass_per_coflow() {
        // One coflow: 0→1, 0→2, 0→3 and 4→1, links of 10. DARK counts the coflow's
        // flows per link (up0: 3, down1: 2) and gives each flow min over its links of
        // free / count in one pass: 10/3 for the three from port 0, min(10/1, 10/2) =
        // 5 for 4→1. Max-min (D-CLAS inside a coflow) gives 4→1 what 0→1 leaves on
        // down1, 10 − 10/3 = 20/3.
        let c = Case::new(
            5,
            10.0,
            &[
                (0, 0, 1, 100.0, 0.0),
                (0, 0, 2, 100.0, 0.0),
                (0, 0, 3, 100.0, 0.0),
                (0, 4, 1, 100.0, 0.0),
            ],
        );
        let third = 10.0 / 3.0;
        let mut d = Decision::default();
        d.reset(4);
        Dark::new(10, 10.0, 10.0).decide(&c.non_clairvoyant(), &mut d);
        close(&d.rates, &[third, third, third, 5.0]);
        assert!(d.wakeups.is_empty(), "DARK reorders only when called");
        let mut m = Decision::default();
        m.reset(4);
        Aalo::new(10, 10.0, 10.0).decide(&c.non_clairvoyant(), &mut m);
        close(&m.rates, &[third, third, third, 20.0 / 3.0]);
    }

    #[test]
    fn coflowsim_variant_orders_a_queue_by_entry_not_arrival() {
        // Coflow 0 (earlier) and coflow 1 share down1. First call: coflow 0 has sent
        // 2 (queue 0), coflow 1 50 (> T0 = 10: queue 1): coflow 0 gets the link.
        // Second call: coflow 0 has sent 50 and joins queue 1 *behind* coflow 1, which
        // now goes first; D-CLAS orders queue 1 by arrival and would serve coflow 0.
        let mut c = Case::new(3, 10.0, &[(0, 0, 1, 100.0, 2.0), (1, 2, 1, 100.0, 50.0)]);
        let mut dark = Dark::new(3, 10.0, 10.0);
        let mut d = Decision::default();
        d.reset(2);
        dark.decide(&c.non_clairvoyant(), &mut d);
        close(&d.rates, &[10.0, 0.0]);
        c.set_sent(0, 50.0);
        c.add_coflow_sent(0, 48.0);
        d.reset(2);
        dark.decide(&c.non_clairvoyant(), &mut d);
        close(&d.rates, &[0.0, 10.0]);
        let mut m = Decision::default();
        m.reset(2);
        Aalo::new(3, 10.0, 10.0).decide(&c.non_clairvoyant(), &mut m);
        close(&m.rates, &[10.0, 0.0]);
    }

    #[test]
    fn within_fair_names_each_flow_its_coflows_queue_once_and_again_when_it_crosses() {
        // T0 = 10 B, E = 10, K = 3. Coflow 0 has sent 50 B (queue 1), coflow 1 2 B
        // (queue 0); both into down1.
        let mut c = Case::new(3, 10.0, &[(0, 0, 1, 100.0, 50.0), (1, 2, 1, 100.0, 2.0)]);
        let mut q = SharedQueues::new(3, 10.0, 10.0);
        // Rate decisions: every active flow's class, and each coflow's crossing.
        let mut d = Decision::default();
        d.reset(2);
        q.decide(&c.non_clairvoyant(), &mut d);
        assert_eq!(d.classes, vec![1, 0]);
        assert!(d.rates.iter().all(|&r| r == 0.0));
        let want = vec![
            Wakeup::CoflowSent { coflow: 0, bytes: 100.0 },
            Wakeup::CoflowSent { coflow: 1, bytes: 10.0 },
        ];
        assert_eq!(d.wakeups, want);
        // Delta decisions: the started flows first...
        let mut q = SharedQueues::new(3, 10.0, 10.0);
        let mut d = Decision {
            delta_ok: true,
            ..Decision::default()
        };
        d.reset(2);
        c.started = vec![0, 1];
        q.decide(&c.non_clairvoyant(), &mut d);
        assert!(d.class_delta && d.classes.is_empty());
        assert_eq!(d.class_moves, vec![(0, 1), (1, 0)]);
        // ... nothing when no coflow crossed ...
        c.started.clear();
        d.reset(2);
        q.decide(&c.non_clairvoyant(), &mut d);
        assert!(d.class_moves.is_empty());
        // ... and a coflow's flows when it crosses (coflow 1 reaches 10 B).
        c.set_sent(1, 10.0);
        c.add_coflow_sent(1, 8.0);
        d.reset(2);
        q.decide(&c.non_clairvoyant(), &mut d);
        assert_eq!(d.class_moves, vec![(1, 1)]);
    }

    #[test]
    fn within_takes_fifo_or_fair_and_only_with_dclas() {
        let mut p = std::collections::BTreeMap::new();
        p.insert("within".to_string(), "lifo".to_string());
        let e = crate::build("aalo", &p).err().expect("refused");
        assert!(e.to_string().contains("within=lifo"), "{e}");
        p.insert("within".to_string(), "fair".to_string());
        assert!(crate::build("aalo", &p).is_ok());
        p.insert("variant".to_string(), "coflowsim".to_string());
        let e = crate::build("aalo", &p).err().expect("refused");
        assert!(e.to_string().contains("variant=dclas"), "{e}");
    }

    #[test]
    fn form_takes_auto_rates_or_classes_and_classes_only_with_dclas_fifo() {
        let mut p = std::collections::BTreeMap::new();
        p.insert("form".to_string(), "groups".to_string());
        let e = crate::build("aalo", &p).err().expect("refused");
        assert!(e.to_string().contains("form=groups"), "{e}");
        // The default (auto) builds with every variant and sharing: classes
        // where they apply, rates elsewhere.
        p.remove("form");
        for (variant, within) in [("dclas", "fifo"), ("dclas", "fair"), ("coflowsim", "fifo")] {
            p.insert("variant".to_string(), variant.to_string());
            p.insert("within".to_string(), within.to_string());
            assert!(crate::build("aalo", &p).is_ok(), "{variant} {within}");
        }
        p.clear();
        p.insert("form".to_string(), "classes".to_string());
        assert!(crate::build("aalo", &p).is_ok());
        p.insert("within".to_string(), "fair".to_string());
        let e = crate::build("aalo", &p).err().expect("refused");
        assert!(e.to_string().contains("within=fifo"), "{e}");
        p.remove("within");
        p.insert("variant".to_string(), "coflowsim".to_string());
        let e = crate::build("aalo", &p).err().expect("refused");
        assert!(e.to_string().contains("variant=dclas"), "{e}");
    }

    #[test]
    fn an_unknown_variant_is_refused() {
        let mut p = std::collections::BTreeMap::new();
        p.insert("variant".to_string(), "dark".to_string());
        let e = crate::build("aalo", &p).err().expect("refused");
        assert!(e.to_string().contains("variant=dark"), "{e}");
    }
}
