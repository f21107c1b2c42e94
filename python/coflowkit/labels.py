"""Labellings of flows into coflows, and how good they are.

A *labelling* gives every flow of a workload a label; flows with equal labels form
one identified coflow. ``coda`` schedules identified coflows; its built-in
labelling sources (truth, truth with injected errors, no identification) are
computed here by the same Rust code the policy runs, so the accuracy reported
beside a simulation is the accuracy of the labels it used.

Quality follows the CODA paper (§6.1): *precision* is the share of an identified
coflow's flows that truly belong to the coflow it stands for, and *recall* the
share of a true coflow's flows that were put together, in the identified coflow
that holds most of them. Each identified coflow stands for the true coflow it
shares most flows with. Both are averaged with equal weight per coflow
(identified coflows for precision, true coflows for recall); *accuracy* is their
mean.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from coflowkit import _core
from coflowkit._core import CoflowkitError, Workload

SOURCES = ("truth", "pioneers", "stragglers", "random", "move", "merge", "split", "alone", "one")
#: The parts ``labels=split`` cuts a coflow into (the engine's value).
SPLIT_PARTS: int = _core.SPLIT_PARTS


def coda_labels(
    workload: Workload, labels: str = "truth", error_rate: float = 0.05, seed: int = 1
) -> np.ndarray:
    """The labels ``coda``'s source ``labels`` gives each flow (global flow order,
    as in ``workload.flow_columns()``); see docs/policies/coda.md."""
    if labels not in SOURCES:
        raise CoflowkitError(f"labels={labels} is not one of {', '.join(SOURCES)}")
    return np.asarray(_core.coda_labels(workload, labels, float(error_rate), int(seed)))


@dataclass(frozen=True)
class Quality:
    precision: float
    recall: float

    @property
    def accuracy(self) -> float:
        return (self.precision + self.recall) / 2


def quality(truth, labels) -> Quality:
    """Precision and recall of ``labels`` against ``truth`` (one entry per flow)."""
    t = np.asarray(truth)
    lab = np.asarray(labels)
    if t.shape != lab.shape or t.ndim != 1:
        raise CoflowkitError(
            f"truth and labels must be two lists of the same length, got {t.shape} and {lab.shape}"
        )
    if t.size == 0:
        raise CoflowkitError("no flows to compare")
    return membership_quality(t, np.arange(t.size), lab)


def membership_quality(truth, flow, label) -> Quality:
    """Precision and recall when flows may belong to several identified coflows
    (late binding's extended coflows): flow ``flow[m]`` is in ``label[m]``.
    An identified coflow's size is its number of members; a true coflow's, its
    number of flows. With one membership per flow this is :func:`quality`."""
    t = np.asarray(truth)
    _, ti = np.unique(t, return_inverse=True)
    _, li = np.unique(np.asarray(label), return_inverse=True)
    ti, li = ti.reshape(-1), li.reshape(-1)
    nt, nl = ti.max() + 1, li.max() + 1
    # Members per (true coflow, label) pair.
    pair, count = np.unique(ti[np.asarray(flow)].astype(np.int64) * nl + li, return_counts=True)
    pt, pl = pair // nl, pair % nl
    size_t = np.bincount(ti, minlength=nt)
    size_l = np.bincount(li, minlength=nl)
    best_for_label = np.zeros(nl, dtype=np.int64)
    np.maximum.at(best_for_label, pl, count)
    best_for_true = np.zeros(nt, dtype=np.int64)
    np.maximum.at(best_for_true, pt, count)
    return Quality(
        precision=float(np.mean(best_for_label / size_l)),
        recall=float(np.mean(best_for_true / size_t)),
    )


def source_quality(
    workload: Workload, labels: str = "truth", error_rate: float = 0.05, seed: int = 1
) -> Quality:
    """The quality of a built-in source's labelling of ``workload``."""
    truth = np.asarray(workload.flow_columns()["coflow_id"])
    return quality(truth, coda_labels(workload, labels, error_rate, seed))
