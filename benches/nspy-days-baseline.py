#!/usr/bin/env python3
"""Time ns.py (PyPI `ns-py`) on the "Days baseline": FatTree-16 with 512 open-loop flows.

This runs the scenario in `scenarios/days-baseline/fattree-k16-f512.toml` in ns.py, built
with ns.py's own parts and set up the way its `examples/fattree_fifo.py` does it, so that
netstep's `wall_seconds` can be compared with ns.py's wall time on the same machine. Written
against ns-py 0.4.3 (simpy 4.1.2); needs `pip install ns-py`.

What it models, next to the netstep scenario:

* Topology: `ns.topos.fattree.build(16)` (networkx graph), i.e. k = 16 pods, k/2 = 8 hosts per
  edge switch, 1024 hosts, 128 edge + 128 aggregation + 64 core switches, as netstep's
  `[topology] kind = "fat_tree", k = 16`.
* Links: 320 kb/s (`rate = "320kbps"`), so a 1000-byte packet takes 25 ms to serialize. Zero
  propagation delay (`delay = "0s"`): ns.py's `Port` has no delay of its own and no `Wire` is
  inserted, so a packet reaches the next node the instant its transmission ends.
* Buffers: every node, hosts included, is an `ns.switch.switch.SimplePacketSwitch` (exactly as
  in ns.py's fat-tree example), i.e. a `FIBDemux` in front of one FIFO tail-drop `Port` per
  neighbour. So ns.py *does* model a host NIC queue: the source host's port towards its edge
  switch. netstep's `buffer = "100pkts"` counts packets *waiting* (the packet being serialized
  has left the buffer); ns.py's packet `qlimit` counts the packet in service too (it drops when
  `len(waiting) >= qlimit - 1`), so this script passes `qlimit = 101` to get the same 100
  waiting packets. (In this scenario queues stay short, so the limit should never bind.)
  The example gives every node k ports; here each node gets one port per neighbour (hosts 1,
  switches k), which only saves idle simpy processes on hosts.
* Traffic: `ns.topos.utils.generate_flows` draws each flow's (src, dst) with
  `random.sample(sorted(hosts), 2)` (so src != dst) and its single path uniformly among all
  shortest paths (`random.sample(list(nx.all_shortest_paths(...)), 1)`); `generate_fib` then
  installs per-flow forwarding entries. netstep instead draws pairs with its own PCG stream
  and picks the path by a per-flow ECMP hash at each up-going hop. On a FatTree both give a
  uniformly random shortest path per flow, but the concrete pairs and paths differ, so hop
  totals differ slightly from netstep's (same distribution, different sample). `--seed` seeds
  Python's `random` module, which is all that ns.py's flow generation uses.
* Sources: one `DistPacketGenerator` per flow (constant 1000-byte size, constant 1 s
  inter-arrival, `size = packets * 1000` bytes so it stops after exactly `--packets` packets).
  Its loop creates a packet, waits one inter-arrival time, then sends it; with
  `initial_delay = 0` the first packet therefore leaves at t = 1 s and the last at
  t = `packets` s, as netstep's `start = "1s"`, `interval = "1s"`. (Packets carry their
  creation time, one interval before they are sent; the recorded waits are therefore 1 s too
  long, which does not affect the timing.)
* Sinks: one default `PacketSink` per flow at the destination host, attached through the
  destination's `demux.ends` as in the example. The default sink records per-packet waits,
  sizes, times, per-hop times and arrivals; this bookkeeping is part of what is timed, as it
  is part of a stock ns.py run.
* End: `env.run(until=packets + 2)`, i.e. well after the last packet (sent at t = packets)
  has crossed at most 6 links of 25 ms each.

Printed: wall-clock seconds of `env.run` only (`time.perf_counter`), packets sent, dropped
and delivered (sum over the sinks), and packet-hops = transmissions over all egress ports
(packets accepted by a `Port`, i.e. `packets_received - packets_dropped`, summed; counts the
host NIC hop like netstep's packet-hops), plus setup time and hops per second for reference.

Usage: `python3 benches/nspy-days-baseline.py [--packets 1500] [--flows 512] [--seed 1]`.
Run one at a time on a shared machine: it is single-threaded and memory grows with the
number of delivered packets (the sinks keep per-packet records).
"""

from __future__ import annotations

import argparse
import random
import time

import simpy
from ns.packet.dist_generator import DistPacketGenerator
from ns.packet.sink import PacketSink
from ns.switch.switch import SimplePacketSwitch
from ns.topos.fattree import build as build_fattree
from ns.topos.utils import generate_fib, generate_flows

K = 16
LINK_RATE_BPS = 320_000.0  # 320 kb/s
PACKET_BYTES = 1000
INTERVAL_S = 1.0
START_S = 1.0
# netstep's "100pkts" counts waiting packets; ns.py's qlimit also counts the one in service.
NETSTEP_BUFFER_PACKETS = 100
NSPY_QLIMIT = NETSTEP_BUFFER_PACKETS + 1
SLACK_S = 2.0


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--packets", type=int, default=1500, help="packets per flow (default 1500)")
    p.add_argument("--flows", type=int, default=512, help="number of flows (default 512)")
    p.add_argument("--seed", type=int, default=1, help="seed for Python's random (default 1)")
    return p.parse_args()


def main() -> None:
    args = parse_args()
    random.seed(args.seed)

    t_setup = time.perf_counter()
    env = simpy.Environment()
    ft = build_fattree(K)
    hosts = {n for n in ft.nodes() if ft.nodes[n]["type"] == "host"}
    all_flows = generate_flows(ft, hosts, args.flows)

    for fid, flow in all_flows.items():
        flow.pkt_gen = DistPacketGenerator(
            env,
            f"flow_{fid}",
            arrival_dist=lambda: INTERVAL_S,
            size_dist=lambda: PACKET_BYTES,
            # The generator waits one interval before sending each packet it creates.
            initial_delay=START_S - INTERVAL_S,
            size=args.packets * PACKET_BYTES,
            flow_id=fid,
        )
        flow.pkt_sink = PacketSink(env)

    ft = generate_fib(ft, all_flows)

    for n in ft.nodes():
        node = ft.nodes[n]
        node["device"] = SimplePacketSwitch(
            env,
            nports=len(node["port_to_nexthop"]),
            port_rate=LINK_RATE_BPS,
            buffer_size=NSPY_QLIMIT,
            element_id=f"{n}",
        )
        node["device"].demux.fib = node["flow_to_port"]

    for n in ft.nodes():
        node = ft.nodes[n]
        for port_number, next_hop in node["port_to_nexthop"].items():
            node["device"].ports[port_number].out = ft.nodes[next_hop]["device"]

    for fid, flow in all_flows.items():
        flow.pkt_gen.out = ft.nodes[flow.src]["device"]
        ft.nodes[flow.dst]["device"].demux.ends[fid] = flow.pkt_sink
    setup_s = time.perf_counter() - t_setup

    until = START_S + (args.packets - 1) * INTERVAL_S + SLACK_S
    t0 = time.perf_counter()
    env.run(until=until)
    wall_s = time.perf_counter() - t0

    sent = sum(f.pkt_gen.packets_sent for f in all_flows.values())
    delivered = sum(sum(f.pkt_sink.packets_received.values()) for f in all_flows.values())
    received = dropped = 0
    for n in ft.nodes():
        for port in ft.nodes[n]["device"].ports:
            received += port.packets_received
            dropped += port.packets_dropped
    hops = received - dropped
    path_links = sum(len(f.path) - 1 for f in all_flows.values())

    print(f"ns.py days-baseline: FatTree k={K}, {len(hosts)} hosts, {args.flows} flows")
    print(f"packets per flow: {args.packets}, seed: {args.seed}, simulated until t={until:g} s")
    print(f"setup seconds: {setup_s:.3f}")
    print(f"wall seconds (env.run): {wall_s:.3f}")
    print(f"packets sent: {sent}")
    print(f"packets delivered: {delivered}")
    print(f"packets dropped: {dropped}")
    print(f"packet-hops: {hops} (mean path {path_links / max(args.flows, 1):.3f} links)")
    if wall_s > 0:
        print(f"M packet-hops/s: {hops / wall_s / 1e6:.4f}")


if __name__ == "__main__":
    main()
