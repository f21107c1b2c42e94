//! Host communities (CODA §3.1, `D_com`): groups of hosts that talk mostly among
//! themselves, found by spectral clustering of the host traffic graph.
//!
//! Recursive spectral bisection: the hosts of each connected component are
//! ordered by the Fiedler vector of the normalized Laplacian
//! `L = I − D^{-1/2} W D^{-1/2}` (its eigenvector of the second smallest
//! eigenvalue, found by power iteration on `(I + D^{-1/2} W D^{-1/2})/2` with the
//! known first eigenvector `√d` projected out), and the prefix of that order with
//! the smallest conductance `φ(S) = w(S, V∖S) / min(vol S, vol V∖S)` is cut off
//! (Cheeger sweep). A part is split only while its best cut has
//! `φ < max_conductance`, so traffic spread over the whole cluster (as in the
//! Facebook trace, which CODA found to be one community) stays one community.
//! Hosts with no traffic are each a community of their own.

use crate::unionfind::UnionFind;

/// Community of every host `0..hosts` of the undirected graph with edge weights
/// `edges` (`(a, b, w)`, repeats add up, self-loops ignored). Communities are
/// numbered in order of their smallest host.
pub fn communities(hosts: usize, edges: &[(u32, u32, f64)], max_conductance: f64) -> Vec<u32> {
    let mut uf = UnionFind::new(hosts);
    let mut deg = vec![0.0; hosts];
    for &(a, b, w) in edges {
        if a != b && w > 0.0 {
            uf.union(a, b);
            deg[a as usize] += w;
            deg[b as usize] += w;
        }
    }
    let mut comp_hosts: std::collections::BTreeMap<u32, Vec<u32>> = Default::default();
    for h in 0..hosts as u32 {
        comp_hosts.entry(uf.find(h)).or_default().push(h);
    }
    let mut parts: Vec<Vec<u32>> = Vec::new();
    let mut todo: Vec<Vec<u32>> = comp_hosts.into_values().collect();
    while let Some(part) = todo.pop() {
        if part.len() < 2 {
            parts.push(part);
            continue;
        }
        match bisect(&part, edges, max_conductance) {
            Some((a, b)) => {
                todo.push(a);
                todo.push(b);
            }
            None => parts.push(part),
        }
    }
    let mut out = vec![0u32; hosts];
    parts.sort_by_key(|p| *p.iter().min().unwrap_or(&0));
    for (c, p) in parts.iter().enumerate() {
        for &h in p {
            out[h as usize] = c as u32;
        }
    }
    out
}

/// The best Cheeger cut of the (connected) subgraph on `part`, if its
/// conductance is below `max_conductance`. Sparse: `O(edges)` per power step.
/// Three steps: the part's weighted adjacency, the Fiedler vector of its
/// normalized Laplacian, and a sweep over it.
fn bisect(
    part: &[u32],
    edges: &[(u32, u32, f64)],
    max_conductance: f64,
) -> Option<(Vec<u32>, Vec<u32>)> {
    let n = part.len();
    let adj = adjacency(part, edges);
    let deg: Vec<f64> = adj.iter().map(|r| r.iter().map(|e| e.1).sum()).collect();
    if deg.iter().sum::<f64>() <= 0.0 {
        return None;
    }
    let inv: Vec<f64> = deg
        .iter()
        .map(|&d| if d > 0.0 { 1.0 / d.sqrt() } else { 0.0 })
        .collect();
    let v = fiedler(&adj, &deg, &inv);
    // Sweep: hosts by v/√d, the prefix with the least conductance.
    let x: Vec<f64> = (0..n).map(|i| v[i] * inv[i]).collect();
    let mut ord: Vec<usize> = (0..n).collect();
    ord.sort_by(|&a, &b| x[a].total_cmp(&x[b]).then(part[a].cmp(&part[b])));
    let (phi, k) = sweep(&ord, &adj, &deg);
    if phi >= max_conductance {
        return None;
    }
    let mut a: Vec<u32> = ord[..k].iter().map(|&i| part[i]).collect();
    let mut b: Vec<u32> = ord[k..].iter().map(|&i| part[i]).collect();
    a.sort_unstable();
    b.sort_unstable();
    Some((a, b))
}

/// Sparse symmetric weights of the subgraph on `part` (positions in `part`):
/// adjacency lists, repeated edges summed, self-loops and non-positive weights
/// dropped.
fn adjacency(part: &[u32], edges: &[(u32, u32, f64)]) -> Vec<Vec<(usize, f64)>> {
    let mut at = std::collections::HashMap::with_capacity(part.len());
    for (i, &h) in part.iter().enumerate() {
        at.insert(h, i);
    }
    let mut pairs: std::collections::BTreeMap<(usize, usize), f64> = Default::default();
    for &(a, b, x) in edges {
        if a == b || x <= 0.0 {
            continue;
        }
        if let (Some(&i), Some(&j)) = (at.get(&a), at.get(&b)) {
            *pairs.entry((i.min(j), i.max(j))).or_insert(0.0) += x;
        }
    }
    let mut adj: Vec<Vec<(usize, f64)>> = vec![Vec::new(); part.len()];
    for (&(i, j), &x) in &pairs {
        adj[i].push((j, x));
        adj[j].push((i, x));
    }
    adj
}

/// The second eigenvector of `(I + D^-1/2 A D^-1/2) / 2` by power iteration,
/// deflated against the first (`√d`); `inv` is `1/√d` (0 for isolated hosts).
fn fiedler(adj: &[Vec<(usize, f64)>], deg: &[f64], inv: &[f64]) -> Vec<f64> {
    let n = adj.len();
    let norm = |v: &mut [f64]| {
        let z = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        if z > 0.0 {
            v.iter_mut().for_each(|x| *x /= z);
        }
    };
    let mut v1: Vec<f64> = deg.iter().map(|d| d.sqrt()).collect();
    norm(&mut v1);
    let deflate = |v: &mut [f64]| {
        let p: f64 = v.iter().zip(&v1).map(|(a, b)| a * b).sum();
        v.iter_mut().zip(&v1).for_each(|(a, b)| *a -= p * b);
    };
    // Deterministic start, not aligned with any structure in particular.
    let mut v: Vec<f64> = (0..n)
        .map(|i| ((i * 7919 + 13) % 101) as f64 - 50.0)
        .collect();
    deflate(&mut v);
    norm(&mut v);
    let mut next = vec![0.0; n];
    for _ in 0..1000 {
        for i in 0..n {
            let acc: f64 = adj[i].iter().map(|&(j, x)| x * inv[j] * v[j]).sum();
            next[i] = 0.5 * (v[i] + inv[i] * acc);
        }
        deflate(&mut next);
        norm(&mut next);
        let diff: f64 = next.iter().zip(&v).map(|(a, b)| (a - b).abs()).sum();
        std::mem::swap(&mut v, &mut next);
        if diff < 1e-10 * n as f64 {
            break;
        }
    }
    v
}

/// The prefix of `ord` with the least conductance: `(conductance, length)`.
fn sweep(ord: &[usize], adj: &[Vec<(usize, f64)>], deg: &[f64]) -> (f64, usize) {
    let n = ord.len();
    let vol: f64 = deg.iter().sum();
    let mut inside = vec![false; n];
    let (mut cut, mut vs) = (0.0, 0.0);
    let mut best = (f64::INFINITY, 0);
    for (k, &i) in ord.iter().enumerate().take(n - 1) {
        inside[i] = true;
        vs += deg[i];
        // Edges of i to the outside enter the cut, edges to the inside leave it.
        for &(j, x) in &adj[i] {
            if inside[j] {
                cut -= x;
            } else {
                cut += x;
            }
        }
        let phi = cut / vs.min(vol - vs);
        if phi < best.0 {
            best = (phi, k + 1);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clique(hosts: std::ops::Range<u32>, w: f64, out: &mut Vec<(u32, u32, f64)>) {
        for a in hosts.clone() {
            for b in hosts.clone() {
                if a < b {
                    out.push((a, b, w));
                }
            }
        }
    }

    #[test]
    fn two_service_groups_with_a_thin_bridge() {
        let mut e = Vec::new();
        clique(0..10, 5.0, &mut e);
        clique(10..20, 5.0, &mut e);
        e.push((3, 14, 1.0));
        let c = communities(21, &e, 0.1);
        assert!(c[..10].iter().all(|&x| x == 0));
        assert!(c[10..20].iter().all(|&x| x == 1));
        // Host 20 has no traffic: a community of its own.
        assert_eq!(c[20], 2);
    }

    #[test]
    fn uniform_traffic_is_one_community() {
        let mut e = Vec::new();
        clique(0..30, 1.0, &mut e);
        let c = communities(30, &e, 0.1);
        assert!(c.iter().all(|&x| x == 0));
    }

    #[test]
    fn disconnected_parts_and_four_groups() {
        let mut e = Vec::new();
        for g in 0..4u32 {
            clique(g * 8..g * 8 + 8, 3.0, &mut e);
        }
        // Groups 0-1 and 2-3 are bridged thinly; the two halves not at all.
        e.push((0, 8, 0.5));
        e.push((16, 24, 0.5));
        let c = communities(32, &e, 0.1);
        for g in 0..4usize {
            assert!(c[g * 8..g * 8 + 8].iter().all(|&x| x == g as u32), "{c:?}");
        }
    }
}
