"""Workload transforms that make multi-stage coflows: ``waves`` (senders in waves,
each after the previous, linked by dependencies or barrier flows) and ``dag``
(each coflow a DAG of sub-coflows, Stream's many-to-many evaluation).

Registered in :mod:`coflowkit.transforms` (which imports this module at its end),
with the same machinery and guarantees as the others; docs/transforms.md gives
their semantics.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from coflowkit._core import CoflowkitError
from coflowkit.transforms import BARRIER_BYTES, REQUIRED, Flows, Param, _gc_paused, _register


def _one_of_max_senders_or_count(v: dict[str, Any]) -> str | None:
    if (v["max_senders"] is None) == (v["count"] is None):
        return "give exactly one of max_senders and count"
    return None


@_register(
    "senders in waves (at most max_senders each, or count waves), each after the previous",
    Param("max_senders", "int", "senders per wave (>= 1)", check=lambda x: x >= 1, expect=">= 1"),
    Param(
        "count",
        "int",
        "waves per coflow (>= 1): ceil(senders / count) senders each",
        check=lambda x: x >= 1,
        expect=">= 1",
    ),
    Param(
        "max_pairs",
        "int",
        "above this many (wave w, wave w+1) flow pairs, one barrier flow links them",
        check=lambda x: x >= 0,
        expect=">= 0",
    ),
    check=_one_of_max_senders_or_count,
)
def waves(
    flows: Flows,
    max_senders: int | None = None,
    count: int | None = None,
    max_pairs: int = 2500,
) -> Flows:
    """Multi-wave senders. A coflow's distinct senders, sorted by host, are split
    into consecutive waves of at most ``max_senders``, or of ``ceil(s / count)``
    for a coflow of ``s`` senders (so ``count`` waves, fewer when ``s < count``:
    Stream's multi-wave case studies of 2, 3 and 4 waves); every flow of wave w+1
    depends on every flow of wave w, so a wave starts when the previous one ends
    (flows keep their own start times and dependencies too).

    Linking two waves of ``a`` and ``b`` flows directly takes ``a·b`` dependencies:
    on the Facebook trace with ``max_senders=10`` that is 7·10^8, too many to hold.
    So when ``a·b > max_pairs`` the waves are linked by a *barrier*: one extra flow
    of the coflow (1e-6 B, the engine's finish tolerance, on the path of wave w+1's
    first flow and with its tenant, stage and priority, starting at the coflow's
    arrival, with a new id above every flow id)
    that depends on every flow of wave w, and on which every flow of wave w+1
    depends: ``a + b`` dependencies. The barrier finishes at the instant
    wave w ends, whatever rate the policy gives it, so wave w+1 starts exactly then:
    the same start times as the direct links. It adds one flow (and 1e-6 B) to its
    coflow; with the default ``max_pairs`` = 2500 only coflows with more than 100
    flows get barriers (``a·b > 2500`` implies ``a + b > 100``), so no coflow
    changes bin (narrow is at most 50 flows)."""
    n = flows.num_flows
    span = int(flows.src.max()) + 1
    key = flows.coflow.astype(np.int64) * span + flows.src
    pairs, which = np.unique(key, return_inverse=True)  # (coflow, sender), sorted
    pair_coflow = pairs // span
    first = np.searchsorted(pair_coflow, pair_coflow, side="left")
    rank = np.arange(len(pairs)) - first
    if count is not None:
        senders = np.searchsorted(pair_coflow, pair_coflow, side="right") - first
        per_wave = -(-senders // count)  # ceil
    else:
        per_wave = max_senders
    wave = (rank // per_wave)[which]
    if not (wave > 0).any():
        return flows
    order = np.lexsort((np.arange(n), wave, flows.coflow))
    cw = flows.coflow[order], wave[order]
    cut = np.flatnonzero((cw[0][1:] != cw[0][:-1]) | (cw[1][1:] != cw[1][:-1])) + 1
    groups = np.split(order, cut)
    deps = list(flows.depends_on)
    ids = flows.flow_id
    next_id = int(ids.max()) + 1
    extra: list[tuple[int, int, list[int]]] = []  # (row of wave w+1's first flow, id, deps)
    for prev, cur in itertools.pairwise(groups):
        if flows.coflow[prev[0]] != flows.coflow[cur[0]]:
            continue
        before = ids[prev].tolist()
        if len(prev) * len(cur) <= max_pairs:
            link = before
        else:
            extra.append((int(cur.min()), next_id, before))
            link = [next_id]
            next_id += 1
        for i in cur.tolist():
            deps[i] = deps[i] + link if deps[i] else link
    flows.depends_on = deps
    _append_barriers(flows, extra)
    return flows


def _append_barriers(flows: Flows, barriers: list[tuple[int, int, list[int]]]) -> None:
    """Appends one barrier flow per ``(row, flow id, depends_on)``: a flow of
    ``BARRIER_BYTES`` with the given id and dependencies, in the coflow of flow
    ``row``, on its path, with its weight, tenant, stage and priority, no ports, and
    starting at the coflow's arrival. The rows go at the end (``first``/``coflow``
    are not updated: the columns are ready for :meth:`Flows.build`). Used by
    ``waves`` and ``dag``; the caller makes the flows that wait for a barrier
    depend on its id."""
    if not barriers:
        return
    rows = np.array([r for r, _, _ in barriers], dtype=np.int64)
    take = rows.tolist()
    arr = flows.arrival_s[rows]
    flows.coflow_id = np.concatenate([flows.coflow_id, flows.coflow_id[rows]])
    flows.flow_id = np.concatenate(
        [flows.flow_id, np.array([b for _, b, _ in barriers], dtype=np.uint64)]
    )
    flows.src = np.concatenate([flows.src, flows.src[rows]])
    flows.dst = np.concatenate([flows.dst, flows.dst[rows]])
    flows.bytes = np.concatenate([flows.bytes, np.full(len(rows), BARRIER_BYTES)])
    flows.start_s = np.concatenate([flows.start_s, arr])
    flows.arrival_s = np.concatenate([flows.arrival_s, arr])
    flows.weight = np.concatenate([flows.weight, flows.weight[rows]])
    flows.src_port = flows.src_port + [None] * len(rows)
    flows.dst_port = flows.dst_port + [None] * len(rows)
    flows.tenant = flows.tenant + [flows.tenant[r] for r in take]
    flows.stage = flows.stage + [flows.stage[r] for r in take]
    flows.priority = flows.priority + [flows.priority[r] for r in take]
    flows.depends_on = flows.depends_on + [d for _, _, d in barriers]


#: The ``dag`` shapes: each sub-coflow's name and the sub-coflows it waits for (its
#: children), in the order that sets its port rotation and its number (the
#: ``stage`` column, 1 + its position; leaves first, the root — the final stage —
#: last).
DAG_SHAPES: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    # A TPC-DS query-42-like plan: three scans, two joins, an aggregation.
    "tpcds": (
        ("scan_a", ()),
        ("scan_b", ()),
        ("scan_c", ()),
        ("join1", ("scan_a", "scan_b")),
        ("join2", ("join1", "scan_c")),
        ("agg", ("join2",)),
    ),
    # Facebook Tao's layers: databases, cache leader, cache followers, web server.
    "tao": (
        ("db1", ()),
        ("db2", ()),
        ("leader", ("db1", "db2")),
        ("follower1", ("leader",)),
        ("follower2", ("leader",)),
        ("web", ("follower1", "follower2")),
    ),
}


@_register(
    "each coflow becomes a multi-stage coflow: a DAG of sub-coflows replicating it "
    "(Stream's many-to-many evaluation)",
    Param(
        "shape",
        "choice",
        "tpcds: 3 scans -> 2 joins -> aggregation (6 stages); tao: 2 databases -> cache "
        "leader -> 2 cache followers -> web server (6 stages)",
        choices=tuple(DAG_SHAPES),
    ),
)
def dag(flows: Flows, shape: str = REQUIRED) -> Flows:
    """Multi-stage coflows (Stream's many-to-many evaluation: "each DAG structure is
    made up of sub-coflows that are exact replications of a coflow taken from the
    original trace; each DAG structure is mapped to a different coflow").

    Each coflow becomes ``S`` sub-coflows (the stages of :data:`DAG_SHAPES`
    ``[shape]``, S = 6), each a copy of its flows with the same sizes. Stage j (in
    the shape's order, 0-based) moves every endpoint h to ``(h + j*P // S) mod P``
    (P = the port count), so stages use different hosts. Flow ids: the copy of
    flow f in stage j gets ``j*B + f`` with ``B`` = the largest flow id + 1 (stage
    0 keeps the ids). The ``stage`` column is the sub-coflow's number, ``j + 1``
    (1..S, unique within the coflow, so sibling sub-coflows are never merged);
    Stream's internal ids (its Algorithm 1) are not stored: the ``stream`` policy
    computes them from the stage DAG that the dependencies define. ``priority``,
    tenant, ports and weight are copied from the original flow.

    A parent waits for all its children through one barrier flow (as ``waves``):
    ``BARRIER_BYTES``, in the parent's stage (its number), on the path of the
    parent's first flow, depending on every flow of its children; every flow of the
    parent depends on it. Barrier ids are ``S*B``, ``S*B + 1``, ... in coflow order
    (arrival, id) then stage order. The coflow keeps its id, arrival and weight;
    leaf flows keep their start times; parent flows start at the arrival (their
    dependencies gate them). A coflow with a flow that already has dependencies is
    an error. Deterministic: no random draws, and ``shape`` is the only
    parameter."""
    stages = DAG_SHAPES[shape]
    _check_dag_input(flows, len(stages), sum(1 for _, cs in stages if cs))
    first, size = flows.first, np.diff(np.append(flows.first, flows.num_flows))
    block = _replicate_stages(flows, stages)
    flows.depends_on, barriers = _link_stages(flows, stages, first, size, block)
    _append_barriers(flows, barriers)
    return flows


def _check_dag_input(flows: Flows, stages: int, parents: int) -> None:
    """dag needs coflows without dependencies, and room for the new flow ids."""
    has_deps = next((i for i, d in enumerate(flows.depends_on) if d), None)
    if has_deps is not None:
        raise CoflowkitError(
            f"transform dag: coflow {int(flows.coflow_id[has_deps])} already has dependencies "
            f"(flow {int(flows.flow_id[has_deps])} waits for flow "
            f"{flows.depends_on[has_deps][0]}); dag needs coflows without dependencies"
        )
    block = int(flows.flow_id.max()) + 1
    if stages * block + parents * flows.num_coflows > 2**64:
        raise CoflowkitError(
            f"transform dag: flow ids up to {block - 1} leave no room for {stages} stages "
            "of new ids below 2^64"
        )


def _replicate_stages(flows: Flows, stages) -> int:
    """Every flow copied once per stage, coflow by coflow (arrival order), stage by
    stage, flows in order; stage j's endpoints shifted by j·P/S ports. Returns the
    id block B (stage j's copy of flow f has id j·B + f)."""
    S, P, n = len(stages), flows.ports, flows.num_flows
    block = int(flows.flow_id.max()) + 1
    row = np.tile(np.arange(n), S)
    j = np.repeat(np.arange(S), n)
    order = np.lexsort((row, j, flows.coflow[row]))
    row, j = row[order], j[order]
    leaf = np.array([not cs for _, cs in stages])[j]
    shift = (np.arange(S) * P // S)[j]
    arrival = flows.arrival_s[row]
    take = row.tolist()
    flows.coflow_id = flows.coflow_id[row]
    flows.flow_id = flows.flow_id[row] + j.astype(np.uint64) * np.uint64(block)
    flows.src = (flows.src[row] + shift) % P
    flows.dst = (flows.dst[row] + shift) % P
    flows.bytes = flows.bytes[row]
    flows.start_s = np.where(leaf, flows.start_s[row], arrival)
    flows.arrival_s = arrival
    flows.weight = flows.weight[row]
    flows.src_port = [flows.src_port[i] for i in take]
    flows.dst_port = [flows.dst_port[i] for i in take]
    flows.tenant = [flows.tenant[i] for i in take]
    flows.priority = [flows.priority[i] for i in take]
    flows.stage = (j + 1).tolist()  # the sub-coflow's number
    flows._index()
    return block


def _link_stages(flows: Flows, stages, first, size, block: int):
    """Each parent stage's flows depend on one barrier that depends on every flow of
    its children. ``first``/``size``: each coflow's first row and flow count before
    replication. Returns the dependencies and the barriers to append."""
    S = len(stages)
    pos = {name: j for j, (name, _) in enumerate(stages)}
    with _gc_paused():
        deps: list[list[int]] = [[] for _ in range(flows.num_flows)]
        ids_new = flows.flow_id.tolist()
        barriers: list[tuple[int, int, list[int]]] = []
        next_id = S * block
        for k in range(len(first)):
            m, base = int(size[k]), S * int(first[k])  # stage j of coflow k: base + j*m + i
            for name, cs in stages:
                if not cs:
                    continue
                start = base + pos[name] * m
                waits = [f for c in cs for f in ids_new[base + pos[c] * m : base + pos[c] * m + m]]
                barriers.append((start, next_id, waits))
                link = [next_id]
                for r in range(start, start + m):
                    deps[r] = link
                next_id += 1
    return deps, barriers
