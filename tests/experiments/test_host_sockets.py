"""benches/host_sockets.py: ss -tin samples read by hand."""

import json

from conftest import load_bench

S1 = (
    "0 0 10.77.0.4:42798 10.77.0.3:20025\n"
    "\t reno cwnd:14 ssthresh:4 bytes_sent:1000 bytes_retrans:0 retrans:0/0\n"
    "0 0 10.78.0.4:39452 10.78.0.254:7470\n"
    "\t reno cwnd:10 bytes_sent:99 bytes_retrans:9 retrans:0/3\n"
)
S2 = (
    "0 0 10.77.0.4:42798 10.77.0.3:20025\n"
    "\t reno cwnd:7 bytes_sent:5000 bytes_retrans:2896 retrans:0/2\n"
    "7240 0 10.77.0.4:20016 10.77.0.2:38686\n"
    "\t reno cwnd:10 bytes_received:19799952\n"
)


def test_the_last_sample_of_each_data_socket_counts():
    b = load_bench("host_sockets")
    lines = [json.dumps({"t": 1.0, "ss": S1}), json.dumps({"t": 2.0, "ss": S2})]
    # The management socket (10.78) and the receiving socket (no bytes_sent) are left out.
    assert b.retrans(lines, "10.77.0.4") == {
        ("10.77.0.4:42798", "10.77.0.3:20025"): (5000, 2896, 2)
    }


def test_sockets_are_matched_to_planned_flows_and_summed_per_bin(tmp_path):
    b = load_bench("host_sockets")
    # Host 3 (10.77.0.4) sends flow 0 to host 2 port 20025 (coflow 5, SN) and
    # flows 1-2 to host 1 ports 20016-20017 (coflow 6, LW); host 1 also sends
    # to host 2 port 20025, which is not host 3's and must not match.
    plan = {
        "hosts": [f"10.77.0.{i + 1}" for i in range(4)],
        "flows": [
            {"id": 0, "coflow": 5, "src": 3, "dst": 2, "port": 20025},
            {"id": 1, "coflow": 6, "src": 3, "dst": 1, "port": 20016},
            {"id": 2, "coflow": 6, "src": 3, "dst": 1, "port": 20017},
            {"id": 3, "coflow": 6, "src": 1, "dst": 2, "port": 20026},
        ],
    }
    (tmp_path / "traffic-plan.json").write_text(json.dumps(plan))
    (tmp_path / "coflows.csv").write_text("coflow_id,bin\n5,SN\n6,LW\n")
    got = {
        ("10.77.0.4:1", "10.77.0.3:20025"): (5000, 2896, 2),
        ("10.77.0.4:2", "10.77.0.2:20016"): (100, 0, 0),
        ("10.77.0.4:3", "10.77.0.2:20017"): (200, 1448, 1),
        ("10.77.0.4:4", "10.77.0.3:20026"): (7, 0, 0),  # matches no flow of host 3
    }
    assert b.by_bin(got, str(tmp_path), 3) == {
        "SN": [1, 5000, 2896, 2],
        "LW": [2, 300, 1448, 1],
        "?": [1, 7, 0, 0],
    }
