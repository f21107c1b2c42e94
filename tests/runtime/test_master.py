"""The master over loopback, driven by hand-made agents over mutual TLS: what it
decides and pushes, and how it holds flows whose destination is not connected yet."""

import time

import pytest
from coflowkit.runtime import proto

from .conftest import connect, http, pki_ip, wait_for, wait_hosts

# Every test against both session layers: Python (selectors) and the hub (tokio).
pytestmark = pytest.mark.parametrize("master_io", ["python", "rust"])

# Host 0's report of two new flows of 200 KB: flow 1 to host 1, flow 2 to host 2.
TWO_FLOWS = proto.Report(
    1.0,
    [
        proto.NewFlow(1, 40000, pki_ip(1), 5001, 0.9, 200_000),
        proto.NewFlow(2, 40001, pki_ip(2), 5002, 0.9, 200_000),
    ],
)


def test_master_decides_max_min_rates_and_pushes_only_changes(master, pki):
    a0 = connect(master, pki, 0)
    others = [connect(master, pki, 1), connect(master, pki, 2)]
    wait_hosts(master, 3)  # the three HELLOs arrive on three sockets, in any order
    # Host 0 sends two flows (to hosts 1 and 2): 5 MB/s each on its 10 MB/s uplink.
    a0.report(TWO_FLOWS)
    dec = sorted(a0.decisions())
    assert [(fid, k) for fid, k, _ in dec] == [(1, proto.RATE), (2, proto.RATE)]
    assert [v for *_, v in dec] == pytest.approx([5e6, 5e6])
    # Flow 1 ends: flow 2 gets the whole link, and only flow 2's decision is sent.
    a0.report(proto.Report(1.1, gone=[(1, 900_000)]))
    assert a0.decisions() == [(2, proto.RATE, pytest.approx(10e6))]
    status, flows = http(master, "/api/flows")
    assert status == 200 and [x["dst"] for x in flows] == [2]
    assert all(not a.closed for a in others)  # the other agents stayed connected


def test_flow_to_a_host_whose_agent_is_not_connected_yet_is_held_then_scheduled(master, pki):
    a0 = connect(master, pki, 0)
    a1 = connect(master, pki, 1)  # held: an agent whose socket is collected disconnects
    wait_hosts(master, 2)
    a0.report(TWO_FLOWS)
    # Only flow 1 can be placed: it has the whole 10 MB/s uplink.
    assert a0.decisions() == [(1, proto.RATE, pytest.approx(10e6))]
    assert master.metrics["unresolved_flows"] == 1
    # Flow 2's bytes keep being counted while it is held.
    a0.report(proto.Report(1.1, updated=[(2, 300_000)]))
    wait_for(lambda: master.metrics["reports"] >= 2, "the update")
    # Host 2's agent arrives: flow 2 is scheduled, and the uplink is shared.
    a2 = connect(master, pki, 2)
    got: dict[int, float] = {}
    while set(got) != {1, 2}:
        got.update({fid: v for fid, _, v in a0.decisions()})
    assert got == {1: pytest.approx(5e6), 2: pytest.approx(5e6)}
    assert master.metrics["unresolved_flows"] == 0 and not (a1.closed or a2.closed)
    status, flows = http(master, "/api/flows")
    assert status == 200 and sorted(x["dst"] for x in flows) == [1, 2]
    status, coflows = http(master, "/api/coflows")  # unregistered flows are coflows of their own
    assert status == 200 and sorted(c["bytes_sent"] for c in coflows) == [200_000, 300_000]


def test_registration_api_groups_flows_into_coflows(master, pki):
    others = [connect(master, pki, 1), connect(master, pki, 2)]
    a0 = connect(master, pki, 0)
    wait_hosts(master, 3)
    status, body = http(master, "/api/coflows", {"id": 77, "flows": [
        {"src": 0, "dst": 1, "dst_port": 6000, "size": 1e6},
        {"src": pki_ip(0), "dst": pki_ip(2), "dst_port": 6001},
    ]})  # fmt: skip
    assert status == 201 and body == {"id": 77, "flows": 2, "first_slot": 0}
    for bad, msg in [
        (b"{not json", "bad JSON"),
        ({"id": 78}, "a registration is"),
        ({"id": 78, "flows": [{"src": 0, "dst": 9, "dst_port": 1}]}, "host 9 is out of range"),
        ({"id": 78, "flows": [{"src": 0, "dst": 1}]}, "flows[0]: missing dst_port"),
        (
            {"id": 78, "flows": [{"src": "1.2.3.4", "dst": 1, "dst_port": 1}]},
            "no connected agent has address 1.2.3.4",
        ),
        ({"id": 77, "flows": [{"src": 0, "dst": 1, "dst_port": 1}]}, "already registered"),
    ]:
        status, body = http(master, "/api/coflows", bad)
        assert status == 400 and msg in body["error"], (bad, body)
    # Both flows show up: they join coflow 77 (not coflows of their own).
    a0.report(proto.Report(1.0, [
        proto.NewFlow(1, 40000, pki_ip(1), 6000, 0.9, 200_000),
        proto.NewFlow(2, 40001, pki_ip(2), 6001, 0.9, 200_000),
        proto.NewFlow(3, 40002, pki_ip(2), 6002, 0.9, 200_000),
    ]))  # fmt: skip
    a0.decisions()
    status, coflows = http(master, "/api/coflows")
    by_id = {c["id"]: c for c in coflows}
    assert by_id[77]["width"] == 2 and by_id[77]["registered"]
    assert by_id[77]["bytes_sent"] == 400_000
    singles = [c for c in coflows if not c["registered"]]
    assert len(singles) == 1 and singles[0]["bytes_sent"] == 200_000
    assert len(others) == 2


def test_small_rate_changes_are_pushed_when_they_matter_to_the_flow(master, pki):
    # 40 flows share host 0's 10 MB/s uplink: 250 kB/s each. One ends: the 39
    # others get 10/39 MB/s, +2.6 % for each flow but only +0.06 % of the link.
    # All 39 must be told, or the link would stay 2.5 % idle.
    a0 = connect(master, pki, 0)
    a1 = connect(master, pki, 1)
    wait_hosts(master, 2)
    new = [proto.NewFlow(i, 40000 + i, pki_ip(1), 5001, 0.9, 200_000) for i in range(1, 41)]
    a0.report(proto.Report(1.0, new))
    assert [v for *_, v in a0.decisions()] == pytest.approx([10e6 / 40] * 40)
    a0.report(proto.Report(1.1, gone=[(40, 1_000_000)]))
    dec = a0.decisions()
    assert sorted(fid for fid, _, _ in dec) == list(range(1, 40))
    assert [v for *_, v in dec] == pytest.approx([10e6 / 39] * 39)
    assert not a1.closed


def test_paused_flows_trickle_and_the_favoured_flow_leaves_them_room(start_master, pki):
    # Varys on host 0's 10 MB/s uplink: coflow 1 (1 MB) goes first at the whole
    # link, coflow 2 (5 MB) is paused. The agent sends a paused flow at its
    # floor, 0.5 % of the link (50 kB/s), so the master gives coflow 1 the rest:
    # 9.95 MB/s, and tells flow 2 zero.
    m = start_master("varys", http=None)
    agents = [connect(m, pki, h) for h in range(3)]
    wait_hosts(m, 3)
    from coflowkit.runtime.registration import Registration

    for cid, dst, port, size in ((1, 1, 5001, 1e6), (2, 2, 5002, 5e6)):
        assert m.submit(Registration(cid, ((0, dst, port, size),)))[0] == 201
    agents[0].report(TWO_FLOWS)
    got: dict[int, float] = {}
    while set(got) != {1, 2}:
        got.update({fid: v for fid, _, v in agents[0].decisions()})
    assert got == {1: pytest.approx(10e6 - 0.005 * 10e6), 2: 0.0}


def test_heartbeats_keep_an_idle_agent_session_alive(master, pki):
    a = connect(master, pki, 0)
    wait_hosts(master, 1)
    time.sleep(0.1)  # 10 Δ: at least three heartbeats (an empty DECISIONS every 3 Δ)
    beats = a.read(lambda f: f[0] == proto.DECISIONS and proto.decode_decisions(f[1]) == [])
    assert beats is not None and not a.closed


def test_labels_api_lists_the_flows_a_self_identifying_policy_grouped(start_master, pki):
    # coda:labels=identify with nothing registered (membership=none): every flow
    # is a coflow of its own to the master, and coda labels them itself.
    m = start_master("coda", params={"labels": "identify", "interval_s": "0.01"}, membership="none")
    a0 = connect(m, pki, 0)
    others = [connect(m, pki, 1), connect(m, pki, 2)]
    wait_hosts(m, 3)
    a0.report(TWO_FLOWS)
    a0.decisions()

    got: list = []

    def labelled():
        status, rows = http(m, "/api/labels")
        assert status == 200
        got[:] = rows
        return len(rows) == 2

    wait_for(labelled, "both flows labelled")
    rows = got
    assert sorted((r["src"], r["dst"], r["dst_port"]) for r in rows) == [(0, 1, 5001), (0, 2, 5002)]
    assert all(isinstance(r["label"], int) and r["label"] >= 0 for r in rows)
    # First sight, wall clock: within this test's run.
    assert all(abs(r["seen_s"] - time.time()) < 60 for r in rows)
    status, flows = http(m, "/api/flows")
    assert status == 200 and all("label" in f for f in flows)
    assert len(others) == 2


def test_labels_api_is_empty_for_a_policy_that_does_not_label(master, pki):
    a0 = connect(master, pki, 0)
    others = [connect(master, pki, 1), connect(master, pki, 2)]
    wait_hosts(master, 3)
    a0.report(TWO_FLOWS)
    a0.decisions()
    assert http(master, "/api/labels") == (200, [])
    status, flows = http(master, "/api/flows")
    assert status == 200 and len(flows) == 2 and all("label" not in f for f in flows)
    assert len(others) == 2


def test_decisions_still_reach_an_agent_after_heartbeats(master, pki):
    """An agent told nothing for many Δ gets heartbeats (empty DECISIONS); the
    next real decision is still delivered (the hub once counted its own
    heartbeats against the send queue and then refused every frame)."""
    a0 = connect(master, pki, 0)
    others = [connect(master, pki, 1), connect(master, pki, 2)]
    wait_hosts(master, 3)
    time.sleep(30 * master.interval)  # about 10 heartbeats at 3 Δ each
    a0.report(TWO_FLOWS)
    dec = sorted(a0.decisions())
    assert [(fid, k) for fid, k, _ in dec] == [(1, proto.RATE), (2, proto.RATE)]
    assert all(not a.closed for a in others)


def test_finished_coflows_are_compacted_and_a_registration_survives_it(master, pki):
    """A long-running master holds only the flows alive: once the finished
    coflows are as many as the others, the policy driver drops them (here at
    the first chance). A coflow registered before that still binds its flow
    afterwards, and the API still lists the finished coflows."""
    master.live.set_compaction(1)
    a0 = connect(master, pki, 0)
    a1 = connect(master, pki, 1)
    wait_hosts(master, 2)
    status, body = http(master, "/api/coflows", {"id": 5, "flows": [
        {"src": 0, "dst": 1, "dst_port": 7000, "size": 1e6}]})  # fmt: skip
    assert status == 201 and body["first_slot"] == 0
    for i in range(100):  # 100 flows of their own, each started and ended
        a0.report(proto.Report(1.0, [proto.NewFlow(100 + i, 30000 + i, pki_ip(1), 80, 0.9, 1)]))
        a0.report(proto.Report(1.0, gone=[(100 + i, 300_000)]))
    # The round thread applies the ends (the hub counts reports before that),
    # then a round compacts: only coflow 5's declared flow is held.
    wait_for(lambda: master.metrics["finished_flows"] == 100, "the flows' ends")
    wait_for(lambda: master.live.num_flows == 1, "the finished coflows to be compacted")
    assert master.live.compactions > 0
    a0.report(proto.Report(2.0, [proto.NewFlow(1, 40000, pki_ip(1), 7000, 1.9, 0)]))
    got: dict[int, float] = {}
    while 1 not in got:  # earlier rounds may have told flows of their own
        got.update({fid: v for fid, _, v in a0.decisions()})
    assert got[1] == pytest.approx(10e6)
    a0.report(proto.Report(2.5, gone=[(1, 1_000_000)]))
    wait_for(lambda: not master.reg_slot, "the registered flow's end")
    status, coflows = http(master, "/api/coflows")
    by_id = {c["id"]: c for c in coflows}
    assert status == 200 and len(coflows) == 101
    assert by_id[5]["finish_s"] is not None and by_id[5]["bytes_sent"] == 1_000_000
    assert by_id[5]["size_bytes"] == 1e6 and by_id[5]["progress"] == 1.0
    assert sum(c["bytes_sent"] for c in coflows) == 100 * 300_000 + 1_000_000
    assert not master.pending and not a1.closed
    # Every agent message was applied: nothing waits in the session layer.
    wait_for(lambda: "\ncoflowkit_event_items_pending 0\n" in http(master, "/metrics")[1],
             "an empty backlog")  # fmt: skip


def test_registered_priorities_and_stages_reach_the_policy(start_master, pki):
    """spq serves the registered priorities (0 first): flow 1 (priority 1) and
    flow 2 (priority 0) share host 0's uplink, and flow 2 takes it. The rest of
    a registration's view (stages, DAG, weight, report) is accepted and checked."""
    m = start_master(policy="spq")
    a0 = connect(m, pki, 0)
    others = [connect(m, pki, 1), connect(m, pki, 2)]
    wait_hosts(m, 3)
    reg = {"id": 3, "weight": 2.5, "parents": [[1, 2]],
           "report": [{"host": 0, "link": "up", "demand": 2}, {"host": 2, "link": "down", "demand": 1}],
           "flows": [{"src": 0, "dst": 1, "dst_port": 6000, "stage": 1, "priority": 1},
                     {"src": 0, "dst": 2, "dst_port": 6001, "stage": 2}]}  # fmt: skip
    status, body = http(m, "/api/coflows", reg)
    assert status == 201, body
    a0.report(proto.Report(1.0, [
        proto.NewFlow(1, 40000, pki_ip(1), 6000, 0.9, 200_000),
        proto.NewFlow(2, 40001, pki_ip(2), 6001, 0.9, 200_000),
    ]))  # fmt: skip
    got: dict[int, float] = {}
    while set(got) != {1, 2}:
        got.update({fid: v for fid, _, v in a0.decisions()})
    # Priority 0 has the link but for the paused flow's trickle (0.5 %).
    assert got[2] == pytest.approx(10e6 * 0.995) and got[1] < 0.01 * 10e6
    for bad, msg in [
        ({**reg, "id": 4, "parents": [[1, 7]]}, "parents[0]: parent stage 7 has no flow"),
        ({**reg, "id": 4, "parents": [[2, 2]]}, "stage 2 is its own parent"),
        ({**reg, "id": 4, "weight": 0}, "weight must be a positive number"),
        ({**reg, "id": 4, "report": [{"host": 0, "link": "sideways", "demand": 1}]},
         'report[0].link must be "up" or "down"'),
        ({**reg, "id": 4, "report": [{"host": 0, "link": "up", "demand": 0}]},
         "every demand is 0"),
        ({**reg, "id": 4, "report": [{"host": 0, "link": "up", "demand": 1}] * 2},
         "appears twice"),
        ({**reg, "id": 4, "flows": [{**reg["flows"][0], "stage": -1}]}, "flows[0].stage must be"),
        ({**reg, "id": 4, "flows": [{**reg["flows"][0], "priority": True}]},
         "flows[0].priority must be"),
    ]:  # fmt: skip
        status, body = http(m, "/api/coflows", bad)
        assert status == 400 and msg in body["error"], (bad, body)
    assert len(others) == 2
