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
