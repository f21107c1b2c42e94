import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_TRACE = ROOT.parent / "shared" / "traces" / "FB2010-1Hr-150-0.txt"

# The worked example of the foundation issue, in the Sincronia format (2 ports):
# coflow 1 at 0 ms sends 8 MiB 0->1, coflow 2 at 0 ms 2 MiB 1->1, coflow 3 at 16 ms 4 MiB 0->0.
EXAMPLE = "2 3\n1 0 1 1 1\n0 1 8\n2 0 1 1 1\n1 1 2\n3 16 1 1 1\n0 0 4\n"


def _example_ccts() -> dict[str, list[float]]:
    """Each registered policy's hand-computed CCTs of EXAMPLE, as its spec gives
    them (crates/coflowkit-policy/src/policies/NAME.rs; the computation is on
    the policy's docs page and in crates/coflowkit-sim/tests/hand_computed.rs)."""
    import coflowkit as ck

    return {p["name"]: list(p["example_ccts"]) for p in ck.policies()}


EXAMPLE_CCTS = _example_ccts()


@pytest.fixture
def example_path(tmp_path):
    p = tmp_path / "example.txt"
    p.write_text(EXAMPLE)
    return p


@pytest.fixture
def fb_trace():
    if not SHARED_TRACE.exists():
        pytest.fail(f"the Facebook trace is missing: expected it at {SHARED_TRACE}")
    return str(SHARED_TRACE)


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("COFLOWKIT_CACHE", str(tmp_path / "cache"))
    os.environ.setdefault("NO_COLOR", "1")


def build(rows, ports=None, **optional):
    """A workload from ``(coflow_id, flow_id, src, dst, bytes, start_s)`` rows;
    ``optional`` columns (arrival_s, weight, src_port, stage, ...) are per-row lists;
    ``ports`` puts it on a big switch of that many 1 Gbps ports."""
    from coflowkit import _core

    cols = list(zip(*rows, strict=True))
    w = _core.workload_from_columns(
        "hand",
        [int(x) for x in cols[0]],
        [int(x) for x in cols[1]],
        [int(x) for x in cols[2]],
        [int(x) for x in cols[3]],
        [float(x) for x in cols[4]],
        [float(x) for x in cols[5]],
        **optional,
    )
    if ports is not None:
        w = w.with_fabric(f"bigswitch:ports={ports},gbps=1")
    return w


CHROMIUM = os.environ.get("COFLOWKIT_CHROMIUM", "/usr/bin/chromium")


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium from the distribution (never a downloaded browser), driven
    by Playwright. ``browser.open(url)`` returns the page and the list of console
    errors and uncaught exceptions it has collected so far."""
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"no Chromium at {CHROMIUM}: apt-get install chromium (.ci/run does)")
    from playwright.sync_api import sync_playwright

    class Browser:
        def __init__(self, b):
            self.b = b

        def open(self, url: str):
            page = self.b.new_page(viewport={"width": 1280, "height": 900})
            errors: list[str] = []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(url)
            page.wait_for_load_state("load")
            return page, errors

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield Browser(b)
        finally:
            b.close()


def load_bench(name: str):
    """The script benches/NAME.py as a module (the benches are scripts, not a
    package); registered in sys.modules, where its dataclasses look it up."""
    import importlib.util
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    spec = importlib.util.spec_from_file_location(name, os.path.join(root, "benches", f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod
