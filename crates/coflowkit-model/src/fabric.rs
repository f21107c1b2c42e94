//! Fabrics: capacitated links and the routing of a flow onto a path of links.

use crate::{LinkId, ModelError, PathId, GBPS_BYTES_PER_S};
use std::collections::HashMap;

/// How flows are routed. New topologies (FatTree with ECMP) add a variant here and a
/// routing rule in [`Fabric::route`]; policies only ever see link lists.
#[derive(Debug, Clone, PartialEq)]
pub enum Topology {
    /// The non-blocking big switch: `ports` uplinks (links `0..P`) and `ports`
    /// downlinks (links `P..2P`); `src→dst` uses `[up(src), down(dst)]`.
    BigSwitch { ports: u32 },
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
}

impl Fabric {
    /// A big switch with `ports` ports whose links all have `bytes_per_s`.
    pub fn big_switch(ports: u32, bytes_per_s: f64) -> Result<Fabric, ModelError> {
        if ports == 0 {
            return Err(ModelError::param(
                "ports",
                "a fabric needs at least one port",
            ));
        }
        if !(bytes_per_s.is_finite() && bytes_per_s > 0.0) {
            return Err(ModelError::param(
                "gbps",
                format!("link capacity must be a positive number, got {bytes_per_s}"),
            ));
        }
        Ok(Fabric {
            topology: Topology::BigSwitch { ports },
            capacities: vec![bytes_per_s; 2 * ports as usize],
            path_offsets: vec![0],
            path_links: Vec::new(),
            dense: Vec::new(),
            interned: HashMap::new(),
        })
    }

    /// Parses a fabric spec such as `bigswitch`, `bigswitch:gbps=10` or
    /// `bigswitch:gbps=1,ports=200`. `trace_ports` is the trace's port count, used
    /// when the spec does not set `ports`.
    pub fn from_spec(spec: &str, trace_ports: u32) -> Result<Fabric, ModelError> {
        let spec = spec.trim();
        let (kind, opts) = match spec.split_once(':') {
            Some((k, o)) => (k.trim(), o.trim()),
            None => (spec, ""),
        };
        match kind {
            "bigswitch" | "big-switch" | "" => {
                let mut gbps = 1.0;
                let mut up_gbps: Option<f64> = None;
                let mut down_gbps: Option<f64> = None;
                let mut ports = trace_ports;
                for kv in opts.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                    let (k, v) = kv.split_once('=').ok_or_else(|| {
                        ModelError::param(
                            "fabric",
                            format!("option '{kv}' in '{spec}' is not KEY=VALUE"),
                        )
                    })?;
                    let speed = |name: &str| -> Result<f64, ModelError> {
                        let x = v.trim().parse::<f64>().map_err(|_| {
                            ModelError::param("fabric", format!("{name}='{v}' is not a number"))
                        })?;
                        if !(x.is_finite() && x > 0.0) {
                            return Err(ModelError::param(
                                "fabric",
                                format!("{name} must be > 0, got {v}"),
                            ));
                        }
                        Ok(x)
                    };
                    match k.trim() {
                        "gbps" => gbps = speed("gbps")?,
                        "up_gbps" => up_gbps = Some(speed("up_gbps")?),
                        "down_gbps" => down_gbps = Some(speed("down_gbps")?),
                        "ports" => {
                            ports = v.trim().parse::<u32>().map_err(|_| {
                                ModelError::param(
                                    "fabric",
                                    format!("ports='{v}' is not a whole number"),
                                )
                            })?;
                            if ports < trace_ports {
                                return Err(ModelError::param(
                                    "fabric",
                                    format!(
                                        "ports={ports} is smaller than the trace's {trace_ports} ports"
                                    ),
                                ));
                            }
                        }
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
            other => Err(ModelError::param(
                "fabric",
                format!("unknown fabric '{other}'; valid fabrics: bigswitch"),
            )),
        }
    }

    /// Number of endpoints (ports or hosts).
    pub fn ports(&self) -> u32 {
        match self.topology {
            Topology::BigSwitch { ports } => ports,
        }
    }

    pub fn num_links(&self) -> usize {
        self.capacities.len()
    }

    pub fn num_paths(&self) -> usize {
        self.path_offsets.len() - 1
    }

    /// The links of an interned path, in order.
    #[inline]
    pub fn path(&self, p: PathId) -> &[LinkId] {
        let a = self.path_offsets[p as usize] as usize;
        let b = self.path_offsets[p as usize + 1] as usize;
        &self.path_links[a..b]
    }

    /// A readable name for a link (`up3`, `down7`).
    pub fn link_name(&self, l: LinkId) -> String {
        match self.topology {
            Topology::BigSwitch { ports } => {
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
        match self.topology {
            Topology::BigSwitch { ports } => {
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
    /// equal-cost paths in topologies that have several (unused by the big switch).
    pub fn route(&mut self, src: u32, dst: u32, _flow_hash: u64) -> Result<PathId, String> {
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
        match self.topology {
            Topology::BigSwitch { ports } => {
                if self.dense.is_empty() {
                    self.dense = vec![PathId::MAX; ports as usize * ports as usize];
                }
                let key = src as usize * ports as usize + dst as usize;
                if self.dense[key] == PathId::MAX {
                    self.dense[key] = self.push_path(&[src, ports + dst]);
                }
                Ok(self.dense[key])
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
        Fabric {
            topology: self.topology.clone(),
            capacities: self.capacities.clone(),
            path_offsets: vec![0],
            path_links: Vec::new(),
            dense: Vec::new(),
            interned: HashMap::new(),
        }
    }

    /// A short description, e.g. `bigswitch:ports=150,gbps=1`, or
    /// `bigswitch:ports=60,up_gbps=1,down_gbps=40` when the two directions differ.
    pub fn describe(&self) -> String {
        match self.topology {
            Topology::BigSwitch { ports } => {
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

#[cfg(test)]
mod tests {
    use super::*;

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
