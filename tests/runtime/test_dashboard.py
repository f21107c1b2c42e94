"""The master's live dashboard (``/``) and the endpoints it reads, against a
master on loopback fed by emulated agents; the page in the distribution's
headless Chromium."""

import gc
import os

from coflowkit.runtime import proto, tls

from .conftest import connect, http, pki_ip, token_of, wait_for, wait_hosts

FLOWS = [
    proto.NewFlow(1, 40000, pki_ip(1), 6000, 0.9, 200_000),
    proto.NewFlow(2, 40001, pki_ip(2), 6001, 0.9, 200_000),
]
REGISTRATION = {"id": 77, "flows": [
    {"src": 0, "dst": 1, "dst_port": 6000, "size": 1e6},
    {"src": 0, "dst": 2, "dst_port": 6001, "size": 1e6},
]}  # fmt: skip


def tokens(pki):
    t = tls.read_tokens(os.path.join(pki, "tokens"))
    t.update(tls.read_tokens(os.path.join(pki, "read-tokens")))
    return t


def test_dashboard_endpoints_give_links_rounds_agents_and_progress(start_master, pki):
    m = start_master("fair", api_tokens=tokens(pki))
    good = token_of(pki)
    agents = [connect(m, pki, h) for h in range(3)]
    wait_hosts(m, 3)
    assert http(m, "/api/coflows", REGISTRATION, token=good)[0] == 201
    agents[0].report(proto.Report(1.0, FLOWS))
    agents[0].decisions()
    wait_for(lambda: len(http(m, "/api/flows", token=good)[1]) == 2, "the round")
    # Host 0's uplink (10 MB/s) is shared by the two flows: 5 MB/s each.
    status, links = http(m, "/api/links", token=good)
    assert status == 200 and links["hosts"] == 3 and links["capacity_bytes_per_s"] == 10e6
    got = {(k["host"], k["direction"]): k["utilization"] for k in links["links"]}
    assert got == {(0, "up"): 1.0, (1, "down"): 0.5, (2, "down"): 0.5}
    status, coflows = http(m, "/api/coflows", token=good)
    c77 = next(c for c in coflows if c["id"] == 77)
    assert c77["size_bytes"] == 2e6 and c77["progress"] == 0.2  # 400 kB of 2 MB
    assert http(m, "/api/agents", token=good)[1] == {"hosts": 3, "connected": [0, 1, 2]}
    status, rounds = http(m, "/api/rounds", token=good)
    assert status == 200 and rounds["rounds"] >= 1
    assert len(rounds["history"]) == min(rounds["rounds"], 600)
    assert all(0 <= r["round_s"] <= rounds["max_s"] for r in rounds["history"])
    # The cyclic collector's passes are timed while the master runs (here in
    # this process): a forced full pass is counted, in the API and /metrics.
    full = rounds["gc"]["full_collections"]
    gc.collect()
    status, rounds = http(m, "/api/rounds", token=good)
    assert rounds["gc"]["full_collections"] >= full + 1  # (or one of its own)
    assert 0 < rounds["gc"]["max_s"] <= rounds["gc"]["seconds"]
    assert all(0 <= r["gc_s"] and 0 <= r["cpu_s"] for r in rounds["history"])
    text = http(m, "/metrics", token=good)[1]
    line = next(
        x for x in text.splitlines() if x.startswith("coflowkit_gc_full_collections_total ")
    )
    assert int(line.split()[1]) >= full + 1
    # Same authentication as the rest of the API; /api/auth never refuses.
    assert http(m, "/api/links")[0] == 401
    assert http(m, "/api/auth") == (200, {"required": True, "read": False,
                                          "error": "authentication required (Authorization: Bearer TOKEN)"})  # fmt: skip
    assert http(m, "/api/auth", token=good) == (
        200,
        {"required": True, "read": True, "error": None},
    )


def test_dashboard_page_updates_as_flows_arrive_and_finish(start_master, pki, browser):
    m = start_master("aalo", api_tokens=tokens(pki))
    good = token_of(pki)
    agents = [connect(m, pki, h) for h in range(3)]
    wait_hosts(m, 3)
    url = f"http://{m.http_address[0]}:{m.http_address[1]}/?every=200"
    page, errors = browser.open(url)
    # No token yet: the page asks for one, and a wrong one is refused.
    page.wait_for_selector("#login", state="visible")
    page.fill("#token", "not-a-token")
    page.click("#login button")
    page.wait_for_function("document.getElementById('login-msg').textContent.length > 0")
    page.fill("#token", good)
    page.click("#login button")
    page.wait_for_function("document.getElementById('agents').textContent === '3 of 3'")
    assert page.text_content("#policy") == "aalo"
    # A registered coflow starts: its row appears with its progress and class.
    assert http(m, "/api/coflows", REGISTRATION, token=good)[0] == 201
    agents[0].report(proto.Report(1.0, FLOWS))
    row = page.wait_for_selector("#coflows tr[data-coflow='77']")
    assert "20%" in row.inner_text()  # 400 kB sent of 2 MB
    page.wait_for_selector("#links [data-link='0-up']")
    assert page.text_content("#links [data-link='0-up'] .pct") == "100%"
    # More bytes: the progress follows; then both flows end and the row goes.
    agents[0].report(proto.Report(1.5, updated=[(1, 500_000), (2, 500_000)]))
    page.wait_for_function(
        "(document.querySelector(\"#coflows tr[data-coflow='77']\") || {}).innerText"
        "?.includes('50%')"
    )
    agents[0].report(proto.Report(2.0, gone=[(1, 1_000_000), (2, 1_000_000)]))
    page.wait_for_selector("#coflows tr[data-coflow='77']", state="detached")
    assert page.text_content("#active") == "0"
    # The round-time history is drawn.
    points = page.get_attribute("#rounds-plot polyline", "points")
    assert points and len(points.split()) >= 2
    # The token is kept for the tab: a reload asks for nothing.
    page.reload()
    page.wait_for_function("document.getElementById('agents').textContent === '3 of 3'")
    assert not page.is_visible("#login")
    assert errors == []
    page.close()
