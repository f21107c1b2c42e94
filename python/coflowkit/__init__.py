"""coflowkit: coflow scheduling, simulated exactly and (later) run for real.

The public API::

    import coflowkit as ck
    w = ck.load_trace("FB2010-1Hr-150-0.txt")        # or ck.synthetic("fb", seed=1)
    r = ck.simulate(w, "varys", params={"ordering": "static"}, fabric="bigswitch:gbps=1")
    r.coflows      # pandas DataFrame, one row per coflow
    r.summary      # dict: mean/median/p95/p99/max of CCT and slowdown, overall and per bin
    w2 = ck.transform(w, "batch:interval_s=10")       # workload transforms (coflowkit.transforms)
"""

from coflowkit._core import CoflowkitError, SimulationError, Workload
from coflowkit._core import __version__ as _core_version
from coflowkit.api import (
    Result,
    load_trace,
    policies,
    simulate,
    snapshot,
    synthetic,
    write_trace,
)
from coflowkit.transforms import apply as transform

__version__ = _core_version

__all__ = [
    "CoflowkitError",
    "Result",
    "SimulationError",
    "Workload",
    "load_trace",
    "policies",
    "simulate",
    "snapshot",
    "synthetic",
    "transform",
    "write_trace",
    "__version__",
]
