//! Fabrics: capacitated links and the routing of a flow onto a path of links.

use crate::fattree::{FatTree, Placement};
use crate::{LinkId, ModelError, PathId, GBPS_BYTES_PER_S};
use std::collections::HashMap;

/// How flows are routed. A topology adds a variant here and a routing rule in
/// [`Fabric::route`]; policies only ever see link lists.
#[derive(Debug, Clone, PartialEq)]
pub enum Topology {
    /// The non-blocking big switch: `ports` uplinks (links `0..P`) and `ports`
    /// downlinks (links `P..2P`); `src→dst` uses `[up(src), down(dst)]`.
    BigSwitch { ports: u32 },
    /// A k-ary FatTree with ECMP routing; the trace's ports are placed on its hosts
    /// (see [`crate::fattree`]).
    FatTree(Box<FatTree>),
}

/// Largest FatTree arity accepted (k = 48 has 27,648 hosts; k = 64, 65,536).
pub const MAX_FATTREE_K: u32 = 64;
/// The most ports (endpoints) a fabric may have: 2^20, sixteen times the hosts
/// of the largest FatTree. A trace naming a port beyond it is refused rather
/// than allocating links for it.
pub const MAX_PORTS: u32 = 1 << 20;
/// Up to this many ports a big switch keeps its paths in a dense P x P table
/// (64 MiB at the limit); above, in a hash map of the pairs actually used.
const DENSE_PORTS: u32 = 4096;

/// Parses `KEY=VALUE,...` options of a fabric spec.
fn options<'a>(spec: &str, opts: &'a str) -> Result<Vec<(&'a str, &'a str)>, ModelError> {
    opts.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|kv| {
            kv.split_once('=')
                .map(|(k, v)| (k.trim(), v.trim()))
                .ok_or_else(|| {
                    ModelError::param(
                        "fabric",
                        format!("option '{kv}' in '{spec}' is not KEY=VALUE"),
                    )
                })
        })
        .collect()
}

/// A link speed in Gbps, > 0.
fn speed(name: &str, v: &str) -> Result<f64, ModelError> {
    let x = v
        .parse::<f64>()
        .map_err(|_| ModelError::param("fabric", format!("{name}='{v}' is not a number")))?;
    if !(x.is_finite() && x > 0.0) {
        return Err(ModelError::param(
            "fabric",
            format!("{name} must be > 0, got {v}"),
        ));
    }
    Ok(x)
}

/// A `ports=` option: a whole number, at least the trace's port count.
fn port_count(v: &str, trace_ports: u32) -> Result<u32, ModelError> {
    let ports = whole("ports", v)?.min(u32::MAX as u64) as u32;
    if ports < trace_ports {
        return Err(ModelError::param(
            "fabric",
            format!("ports={ports} is smaller than the trace's {trace_ports} ports"),
        ));
    }
    Ok(ports)
}

fn whole(name: &str, v: &str) -> Result<u64, ModelError> {
    v.parse::<u64>()
        .map_err(|_| ModelError::param("fabric", format!("{name}='{v}' is not a whole number")))
}

/// A set of capacitated links plus a routing rule, with interned paths.
#[derive(Debug, Clone)]
pub struct Fabric {
    pub topology: Topology,
    /// Capacity of every link, bytes per second.
    pub capacities: Vec<f64>,
    path_offsets: Vec<u32>,
    path_links: Vec<LinkId>,
    /// Dense path lookup for the big switch (`src·P + dst`), built lazily.
    dense: Vec<PathId>,
    interned: HashMap<Vec<LinkId>, PathId>,
    /// FatTree paths by `(src host · H + dst host) · (k/2)² + ECMP choice`.
    keyed: HashMap<u64, PathId>,
    scratch: Vec<LinkId>,
}

impl Fabric {
    /// A big switch with `ports` ports whose links all have `bytes_per_s`.
    pub fn big_switch(ports: u32, bytes_per_s: f64) -> Result<Fabric, ModelError> {
        check_ports(ports)?;
        if !(bytes_per_s.is_finite() && bytes_per_s > 0.0) {
            return Err(ModelError::param(
                "gbps",
                format!("link capacity must be a positive number, got {bytes_per_s}"),
            ));
        }
        Ok(Fabric::new(
            Topology::BigSwitch { ports },
            vec![bytes_per_s; 2 * ports as usize],
        ))
    }

    /// A fabric of these links with no path interned yet.
    fn new(topology: Topology, capacities: Vec<f64>) -> Fabric {
        Fabric {
            topology,
            capacities,
            path_offsets: vec![0],
            path_links: Vec::new(),
            dense: Vec::new(),
            interned: HashMap::new(),
            keyed: HashMap::new(),
            scratch: Vec::new(),
        }
    }

    /// A k-ary FatTree whose host links carry `host_bytes_per_s` and whose
    /// switch-to-switch links carry `fabric_bytes_per_s`, with the `ports`
    /// endpoints of a trace placed on its hosts by `placement` (`seed` drives the
    /// random placement and the ECMP hash).
    pub fn fat_tree(
        k: u32,
        ports: u32,
        host_bytes_per_s: f64,
        fabric_bytes_per_s: f64,
        placement: Placement,
        seed: u64,
    ) -> Result<Fabric, ModelError> {
        if k < 2 || k % 2 == 1 || k > MAX_FATTREE_K {
            return Err(ModelError::param(
                "fabric",
                format!("fattree k must be an even number from 2 to {MAX_FATTREE_K}, got {k}"),
            ));
        }
        check_ports(ports)?;
        for (name, x) in [
            ("host_gbps", host_bytes_per_s),
            ("fabric_gbps", fabric_bytes_per_s),
        ] {
            if !(x.is_finite() && x > 0.0) {
                return Err(ModelError::param(
                    "fabric",
                    format!("{name}: link capacity must be a positive number, got {x}"),
                ));
            }
        }
        let t = FatTree::new(k, ports, placement, seed);
        let h = t.num_hosts() as usize;
        let mut capacities = vec![fabric_bytes_per_s; t.num_links()];
        capacities[..2 * h].fill(host_bytes_per_s);
        Ok(Fabric::new(Topology::FatTree(Box::new(t)), capacities))
    }

    /// Parses a fabric spec such as `bigswitch`, `bigswitch:gbps=10`,
    /// `bigswitch:gbps=1,ports=200` or `fattree:k=16,host_gbps=10,placement=rack`. `trace_ports` is the trace's port count, used
    /// when the spec does not set `ports`.
    pub fn from_spec(spec: &str, trace_ports: u32) -> Result<Fabric, ModelError> {
        let spec = spec.trim();
        let (kind, opts) = match spec.split_once(':') {
            Some((k, o)) => (k.trim(), o.trim()),
            None => (spec, ""),
        };
        match kind {
            "bigswitch" | "big-switch" | "" => Self::big_switch_spec(spec, opts, trace_ports),
            "fattree" | "fat-tree" => Self::fat_tree_spec(spec, opts, trace_ports),
            other => Err(ModelError::param(
                "fabric",
                format!("unknown fabric '{other}'; valid fabrics: bigswitch, fattree"),
            )),
        }
    }

    /// `bigswitch:gbps=G,up_gbps=U,down_gbps=D,ports=N`.
    fn big_switch_spec(spec: &str, opts: &str, trace_ports: u32) -> Result<Fabric, ModelError> {
        let mut gbps = 1.0;
        let mut up_gbps: Option<f64> = None;
        let mut down_gbps: Option<f64> = None;
        let mut ports = trace_ports;
        for (k, v) in options(spec, opts)? {
            match k {
                "gbps" => gbps = speed("gbps", v)?,
                "up_gbps" => up_gbps = Some(speed("up_gbps", v)?),
                "down_gbps" => down_gbps = Some(speed("down_gbps", v)?),
                "ports" => ports = port_count(v, trace_ports)?,
                other => {
                    return Err(ModelError::param(
                        "fabric",
                        format!(
                            "unknown bigswitch option '{other}'; valid options: gbps, up_gbps, down_gbps, ports"
                        ),
                    ))
                }
            }
        }
        let mut f = Fabric::big_switch(ports, gbps * GBPS_BYTES_PER_S)?;
        let p = ports as usize;
        if let Some(u) = up_gbps {
            f.capacities[..p].fill(u * GBPS_BYTES_PER_S);
        }
        if let Some(d) = down_gbps {
            f.capacities[p..].fill(d * GBPS_BYTES_PER_S);
        }
        Ok(f)
    }

    /// `fattree:k=K,gbps=G,host_gbps=H,fabric_gbps=F,ports=N,placement=P,seed=S`.
    fn fat_tree_spec(spec: &str, opts: &str, trace_ports: u32) -> Result<Fabric, ModelError> {
        let mut k: Option<u32> = None;
        let mut host_gbps: Option<f64> = None;
        let mut fabric_gbps: Option<f64> = None;
        let mut gbps = 1.0;
        let mut ports = trace_ports;
        let mut placement = Placement::Rack;
        let mut seed = 1u64;
        for (key, v) in options(spec, opts)? {
            match key {
                "k" => k = Some(whole("k", v)?.min(u32::MAX as u64) as u32),
                "gbps" => gbps = speed("gbps", v)?,
                "host_gbps" => host_gbps = Some(speed("host_gbps", v)?),
                "fabric_gbps" => fabric_gbps = Some(speed("fabric_gbps", v)?),
                "ports" => ports = port_count(v, trace_ports)?,
                "placement" => {
                    placement = Placement::parse(v).ok_or_else(|| {
                        ModelError::param(
                            "fabric",
                            format!(
                                "unknown placement '{v}'; valid placements: spread, rack, random"
                            ),
                        )
                    })?
                }
                "seed" => seed = whole("seed", v)?,
                other => {
                    return Err(ModelError::param(
                        "fabric",
                        format!(
                            "unknown fattree option '{other}'; valid options: k, gbps, host_gbps, fabric_gbps, ports, placement, seed"
                        ),
                    ))
                }
            }
        }
        let k = k.ok_or_else(|| {
            ModelError::param(
                "fabric",
                format!("'{spec}' needs k (for example fattree:k=8)"),
            )
        })?;
        Fabric::fat_tree(
            k,
            ports,
            host_gbps.unwrap_or(gbps) * GBPS_BYTES_PER_S,
            fabric_gbps.unwrap_or(gbps) * GBPS_BYTES_PER_S,
            placement,
            seed,
        )
    }

    /// Number of endpoints (ports or hosts).
    pub fn ports(&self) -> u32 {
        match &self.topology {
            Topology::BigSwitch { ports } => *ports,
            Topology::FatTree(t) => t.ports,
        }
    }

    /// The FatTree, when the fabric is one.
    pub fn fat_tree_shape(&self) -> Option<&FatTree> {
        match &self.topology {
            Topology::FatTree(t) => Some(t),
            Topology::BigSwitch { .. } => None,
        }
    }

    pub fn num_links(&self) -> usize {
        self.capacities.len()
    }

    pub fn num_paths(&self) -> usize {
        self.path_offsets.len() - 1
    }

    /// Where path `p`'s links start in the concatenation of every interned
    /// path's links: `path_start(p) + i` numbers the `i`-th hop of `p` among all
    /// `path_link_slots()` hops (per-hop tables of a policy are indexed by it).
    #[inline]
    pub fn path_start(&self, p: PathId) -> usize {
        self.path_offsets[p as usize] as usize
    }

    /// The number of hops over every interned path (see [`Fabric::path_start`]).
    pub fn path_link_slots(&self) -> usize {
        self.path_links.len()
    }

    /// The links of an interned path, in order.
    #[inline]
    pub fn path(&self, p: PathId) -> &[LinkId] {
        let a = self.path_offsets[p as usize] as usize;
        let b = self.path_offsets[p as usize + 1] as usize;
        &self.path_links[a..b]
    }

    /// A readable name for a link (`up3`, `down7`; `h5.up`, `e2.a1.down` on a FatTree).
    pub fn link_name(&self, l: LinkId) -> String {
        match &self.topology {
            Topology::FatTree(t) => t.link_name(l),
            &Topology::BigSwitch { ports } => {
                if l < ports {
                    format!("up{l}")
                } else {
                    format!("down{}", l - ports)
                }
            }
        }
    }

    /// The link called `name` (as [`Fabric::link_name`] writes it), if any.
    pub fn link_by_name(&self, name: &str) -> Option<LinkId> {
        match &self.topology {
            Topology::FatTree(t) => t.link_by_name(name),
            &Topology::BigSwitch { ports } => {
                let (base, num) = if let Some(n) = name.strip_prefix("up") {
                    (0, n)
                } else if let Some(n) = name.strip_prefix("down") {
                    (ports, n)
                } else {
                    return None;
                };
                // Canonical decimal only ("up01" is not a link name).
                let port: u32 = num.parse().ok()?;
                (port < ports && port.to_string() == num).then_some(base + port)
            }
        }
    }

    /// Routes `src→dst` and returns the interned path. `flow_hash` selects among
    /// equal-cost paths in topologies that have several (unused by the big switch;
    /// callers pass the flow id, which stands for the 5-tuple's port pair).
    pub fn route(&mut self, src: u32, dst: u32, flow_hash: u64) -> Result<PathId, String> {
        let p = self.ports();
        if src >= p {
            return Err(format!(
                "port {src} is outside the fabric (ports 0..{})",
                p - 1
            ));
        }
        if dst >= p {
            return Err(format!(
                "port {dst} is outside the fabric (ports 0..{})",
                p - 1
            ));
        }
        match &self.topology {
            Topology::FatTree(t) => {
                let (s, d) = t.hosts(src, dst, flow_hash);
                let c = t.choice(s, d, flow_hash);
                let per = (t.k as u64 / 2).pow(2);
                let key = (s as u64 * t.num_hosts() as u64 + d as u64) * per + c as u64;
                if let Some(&p) = self.keyed.get(&key) {
                    return Ok(p);
                }
                let mut links = std::mem::take(&mut self.scratch);
                t.links(s, d, c, &mut links);
                let p = self.push_path(&links);
                self.scratch = links;
                self.keyed.insert(key, p);
                Ok(p)
            }
            &Topology::BigSwitch { ports } if ports <= DENSE_PORTS => {
                if self.dense.is_empty() {
                    self.dense = vec![PathId::MAX; ports as usize * ports as usize];
                }
                let key = src as usize * ports as usize + dst as usize;
                if self.dense[key] == PathId::MAX {
                    self.dense[key] = self.push_path(&[src, ports + dst]);
                }
                Ok(self.dense[key])
            }
            &Topology::BigSwitch { ports } => {
                let key = src as u64 * ports as u64 + dst as u64;
                if let Some(&p) = self.keyed.get(&key) {
                    return Ok(p);
                }
                let p = self.push_path(&[src, ports + dst]);
                self.keyed.insert(key, p);
                Ok(p)
            }
        }
    }

    /// Interns an arbitrary link list (for topologies with computed routes).
    pub fn intern(&mut self, links: &[LinkId]) -> PathId {
        if let Some(&p) = self.interned.get(links) {
            return p;
        }
        let p = self.push_path(links);
        self.interned.insert(links.to_vec(), p);
        p
    }

    fn push_path(&mut self, links: &[LinkId]) -> PathId {
        let id = self.num_paths() as PathId;
        self.path_links.extend_from_slice(links);
        self.path_offsets.push(self.path_links.len() as u32);
        id
    }

    /// The same links with no interned paths (for re-routing a workload).
    pub fn cleared(&self) -> Fabric {
        Fabric::new(self.topology.clone(), self.capacities.clone())
    }

    /// A short description, e.g. `bigswitch:ports=150,gbps=1`, or
    /// `bigswitch:ports=60,up_gbps=1,down_gbps=40` when the two directions differ.
    pub fn describe(&self) -> String {
        match &self.topology {
            Topology::FatTree(t) => {
                let h = t.num_hosts() as usize;
                let host = self.capacities[0] / GBPS_BYTES_PER_S;
                let fab = self.capacities[2 * h] / GBPS_BYTES_PER_S;
                let speeds = if host == fab {
                    format!("gbps={host}")
                } else {
                    format!("host_gbps={host},fabric_gbps={fab}")
                };
                format!(
                    "fattree:k={},ports={},{speeds},placement={},seed={}",
                    t.k,
                    t.ports,
                    t.placement.name(),
                    t.seed
                )
            }
            &Topology::BigSwitch { ports } => {
                let p = ports as usize;
                let up = self.capacities.first().copied().unwrap_or(0.0) / GBPS_BYTES_PER_S;
                let down = self.capacities.get(p).copied().unwrap_or(0.0) / GBPS_BYTES_PER_S;
                if up == down {
                    format!("bigswitch:ports={ports},gbps={up}")
                } else {
                    format!("bigswitch:ports={ports},up_gbps={up},down_gbps={down}")
                }
            }
        }
    }
}

fn check_ports(ports: u32) -> Result<(), ModelError> {
    if ports == 0 {
        return Err(ModelError::param(
            "ports",
            "a fabric needs at least one port",
        ));
    }
    if ports > MAX_PORTS {
        return Err(ModelError::param(
            "ports",
            format!("{ports} ports; a fabric has at most {MAX_PORTS}"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_big_switch_interns_only_the_pairs_used() {
        // 40,000 ports: a dense P x P table would be 6.4 GB.
        let mut f = Fabric::big_switch(40_000, 100.0).unwrap();
        let p = f.route(39_999, 7, 0).unwrap();
        assert_eq!(f.path(p), &[39_999, 40_007]);
        assert_eq!(f.route(39_999, 7, 5).unwrap(), p);
        assert_eq!(f.num_paths(), 1);
        assert!(f.dense.is_empty());
        let e = Fabric::big_switch(MAX_PORTS + 1, 1.0).unwrap_err();
        assert!(e.to_string().contains("at most 1048576"), "{e}");
    }

    #[test]
    fn big_switch_routes_up_then_down_and_interns() {
        let mut f = Fabric::big_switch(4, 100.0).unwrap();
        let p = f.route(1, 3, 0).unwrap();
        assert_eq!(f.path(p), &[1, 7]);
        assert_eq!(f.route(1, 3, 99).unwrap(), p);
        // src = dst still crosses the fabric.
        let q = f.route(2, 2, 0).unwrap();
        assert_eq!(f.path(q), &[2, 6]);
        assert_eq!(f.num_paths(), 2);
        assert_eq!(f.link_name(6), "down2");
        assert!(f.route(4, 0, 0).unwrap_err().contains("port 4 is outside"));
    }

    #[test]
    fn spec_parsing() {
        let f = Fabric::from_spec("bigswitch:gbps=10", 3).unwrap();
        assert_eq!(f.ports(), 3);
        assert_eq!(f.capacities[0], 10.0 * 134_217_728.0);
        let g = Fabric::from_spec("bigswitch:ports=5", 3).unwrap();
        assert_eq!(g.num_links(), 10);
        assert!(Fabric::from_spec("bigswitch:gbps=0", 3)
            .unwrap_err()
            .to_string()
            .contains("gbps must be > 0"));
        assert!(Fabric::from_spec("torus", 3)
            .unwrap_err()
            .to_string()
            .contains("unknown fabric 'torus'"));
        assert!(Fabric::from_spec("bigswitch:ports=2", 3).is_err());
        assert!(Fabric::from_spec("bigswitch:speed=2", 3)
            .unwrap_err()
            .to_string()
            .contains("valid options: gbps, up_gbps, down_gbps, ports"));
        let h = Fabric::from_spec("bigswitch:up_gbps=1,down_gbps=40", 2).unwrap();
        assert_eq!(
            h.capacities,
            vec![
                GBPS_BYTES_PER_S,
                GBPS_BYTES_PER_S,
                40.0 * GBPS_BYTES_PER_S,
                40.0 * GBPS_BYTES_PER_S
            ]
        );
        assert_eq!(h.describe(), "bigswitch:ports=2,up_gbps=1,down_gbps=40");
        assert!(Fabric::from_spec("bigswitch:down_gbps=-1", 2)
            .unwrap_err()
            .to_string()
            .contains("down_gbps must be > 0"));
    }

    #[test]
    fn fattree_spec_routes_describes_and_rejects_bad_options() {
        // k = 4, 4 trace ports spread over 16 hosts: ports on hosts 0, 4, 8, 12
        // (one per pod). Host links 2 Gbps, fabric links 10 Gbps.
        let mut f = Fabric::from_spec(
            "fattree:k=4,host_gbps=2,fabric_gbps=10,placement=spread,seed=3",
            4,
        )
        .unwrap();
        assert_eq!(f.ports(), 4);
        assert_eq!(f.num_links(), 96);
        assert_eq!(f.capacities[0], 2.0 * GBPS_BYTES_PER_S);
        assert_eq!(f.capacities[31], 2.0 * GBPS_BYTES_PER_S);
        assert_eq!(f.capacities[32], 10.0 * GBPS_BYTES_PER_S);
        // Port 0 (host 0) → port 3 (host 12): six links across the core, starting
        // at h0.up and ending at h12.down (16 + 12 = 28).
        let p = f.route(0, 3, 42).unwrap();
        let links = f.path(p).to_vec();
        assert_eq!(links.len(), 6);
        assert_eq!((links[0], links[5]), (0, 28));
        // The same flow hash gives the same interned path.
        assert_eq!(f.route(0, 3, 42).unwrap(), p);
        let d = f.describe();
        assert_eq!(
            d,
            "fattree:k=4,ports=4,host_gbps=2,fabric_gbps=10,placement=spread,seed=3"
        );
        let g = Fabric::from_spec(&d, 4).unwrap();
        assert_eq!(g.describe(), d);
        assert_eq!(g.capacities, f.capacities);
        let err = |s: &str| Fabric::from_spec(s, 4).unwrap_err().to_string();
        assert!(err("fattree").contains("needs k"));
        assert!(err("fattree:k=5").contains("even number"));
        assert!(err("fattree:k=66").contains("even number from 2 to 64"));
        assert!(err("fattree:k=4,placement=near").contains("valid placements: spread"));
        assert!(err("fattree:k=4,speed=1").contains("valid options: k, gbps"));
        assert!(err("fattree:k=4,ports=2").contains("smaller than the trace's 4"));
        assert!(err("fattree:k=4,gbps=-1").contains("gbps must be > 0"));
    }

    #[test]
    fn largest_fattree_of_the_stream_paper_builds() {
        // Table 1 of Stream: k = 48 has 27,648 hosts (6 links per host here).
        let mut f = Fabric::from_spec("fattree:k=48,placement=random", 150).unwrap();
        assert_eq!(f.fat_tree_shape().unwrap().num_hosts(), 27_648);
        assert_eq!(f.num_links(), 6 * 27_648);
        let p = f.route(0, 149, 1).unwrap();
        assert!(matches!(f.path(p).len(), 2 | 4 | 6));
    }

    #[test]
    fn link_names_round_trip() {
        let f = Fabric::big_switch(12, 1.0).unwrap();
        for l in 0..f.num_links() as u32 {
            assert_eq!(f.link_by_name(&f.link_name(l)), Some(l));
        }
        for bad in ["up12", "down-1", "up01", "left3", "up", ""] {
            assert_eq!(f.link_by_name(bad), None, "{bad}");
        }
    }
}
