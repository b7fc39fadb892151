//! TCP behaviour: utilisation, fairness, loss recovery with and without SACK, delayed ACKs.

use netstep_core::engine::WindowMode;

use crate::common::*;

/// Node ids of the dumbbell switches for `pairs` host pairs.
fn switches(pairs: u32) -> (u32, u32) {
    (2 * pairs, 2 * pairs + 1)
}

#[test]
fn one_flow_fills_a_bottleneck_with_a_bdp_buffer() {
    // RTT = 2 x 3 x 100 us = 600 us; BDP at 1 Gb/s = 75 KB.
    let text = dumbbell_tcp(1, "1Gbps", "100us", "75KB", "100MB", "");
    let s = scenario(&text, &[]);
    let out = run_window(&s, 1, WindowMode::Exact);
    let flow = &out.flows.get(0);
    let end = flow.end.expect("flow completes");
    let (sl, sr) = switches(1);
    let port = s
        .model
        .net
        .port_id(sl, s.model.net.port_towards(sl, sr).unwrap());
    let bottleneck = out.ports.iter().find(|p| p.port == port).unwrap();
    let utilisation = bottleneck.tx_bytes as f64 * 8.0 / (1e9 * end.as_secs_f64());
    assert!(
        flow.packets_dropped > 0,
        "the buffer must overflow at some point for the test to mean anything"
    );
    assert!(
        utilisation >= 0.95,
        "utilisation {utilisation:.4} (drops {}, timeouts {})",
        flow.packets_dropped,
        flow.timeouts
    );
}

#[test]
fn eight_flows_share_a_bottleneck_fairly() {
    let text = dumbbell_tcp(
        8,
        "1Gbps",
        "20us",
        "120KB",
        "1GB",
        "[simulation]\nduration = \"1s\"\n",
    );
    let s = scenario(&text, &[]);
    let out = run_window(&s, 2, WindowMode::Exact);
    let x: Vec<f64> = out
        .flows
        .iter()
        .map(|f| f.packets_delivered as f64)
        .collect();
    let jain =
        x.iter().sum::<f64>().powi(2) / (x.len() as f64 * x.iter().map(|v| v * v).sum::<f64>());
    let total_bits = x.iter().sum::<f64>() * 1500.0 * 8.0;
    assert!(
        total_bits > 0.9e9 * 0.9,
        "the 8 flows together fill the link: {total_bits:.3e} bits in 1 s"
    );
    assert!(jain >= 0.95, "Jain index {jain:.4} over {x:?}");
}

#[test]
fn random_loss_triggers_fast_retransmit() {
    let text = dumbbell_tcp(1, "1Gbps", "20us", "1MB", "3MB", "");
    let s = scenario(&text, &["topology.fabric_links.loss=0.005"]);
    let out = run_window(&s, 1, WindowMode::Exact);
    let flow = &out.flows.get(0);
    assert!(flow.end.is_some(), "flow completes despite loss");
    assert!(flow.packets_dropped > 0);
    assert!(flow.fast_retransmits > 0, "{flow:?}");
    assert!(flow.retransmits >= flow.fast_retransmits);
}

#[test]
fn losing_a_whole_window_triggers_a_timeout() {
    // 10 segments leave at once into a 2-packet buffer in front of a 100x slower link: the
    // tail of the window is lost with too few duplicate ACKs to recover, so only the RTO helps.
    let text = dumbbell_tcp(1, "100Mbps", "20us", "2pkts", "14600B", "");
    let s = scenario(&text, &[]);
    let out = run_window(&s, 1, WindowMode::Exact);
    let flow = &out.flows.get(0);
    assert!(flow.end.is_some(), "flow completes after the timeout");
    assert!(flow.timeouts >= 1, "{flow:?}");
    assert_eq!(flow.packets_delivered, 10);
    // The timeout fires no earlier than the configured 10 ms initial RTO.
    assert!(flow.end.unwrap().as_secs_f64() >= 0.010, "{:?}", flow.end);
}

/// Arrival times of the segments of `flow` that filled a gap (arrived after a higher segment,
/// for the first time): on a single path these are the retransmissions that repaired a loss.
fn hole_fills(out: &netstep_core::engine::RunOutput, flow: u32) -> Vec<u64> {
    let mut seen = std::collections::HashSet::new();
    let mut highest = None;
    let mut fills = Vec::new();
    let mut deliveries: Vec<_> = out.deliveries.iter().filter(|d| d.flow == flow).collect();
    deliveries.sort_by_key(|d| d.arrived_ps);
    for d in deliveries {
        if !seen.insert(d.seq) {
            continue;
        }
        if highest.is_some_and(|h| d.seq < h) {
            fills.push(d.arrived_ps);
        }
        highest = highest.max(Some(d.seq));
    }
    fills
}

/// Most hole fills within any interval of length `window_ps`.
fn most_fills_within(fills: &[u64], window_ps: u64) -> usize {
    (0..fills.len())
        .map(|i| fills[i..].partition_point(|&t| t < fills[i] + window_ps))
        .max()
        .unwrap_or(0)
}

#[test]
fn sack_repairs_several_holes_per_round_trip_newreno_one() {
    // Slow start overshoots a 30 KB buffer in front of a 10x slower link: one window loses
    // many segments. Propagation RTT = 6 links x 20 us = 120 us. NewReno (sack = false)
    // learns of the next hole only from the partial ACK of the previous repair, so two repairs
    // reach the receiver at least one RTT apart (at most one per 120 us, analytically); with
    // SACK the scoreboard marks every hole lost at once and the repairs go out back to back.
    let text = dumbbell_tcp(1, "1Gbps", "20us", "30KB", "3MB", "");
    let rtt_ps = 120_000_000;
    let run = |sack: bool| {
        let mut s = scenario(&text, &[&format!("transport.sack={sack}")]);
        s.model.record_deliveries = true;
        run_window(&s, 1, WindowMode::Exact)
    };
    let (with, without) = (run(true), run(false));
    for (name, out) in [("sack", &with), ("newreno", &without)] {
        let f = &out.flows.get(0);
        assert!(f.end.is_some(), "{name}: {f:?}");
        assert_eq!(
            f.timeouts, 0,
            "{name}: fast recovery only, for the bound to hold: {f:?}"
        );
        assert!(
            f.packets_dropped >= 10,
            "{name}: a multi-loss window: {f:?}"
        );
    }
    let (fs, fn_) = (hole_fills(&with, 0), hole_fills(&without, 0));
    let (ms, mn) = (
        most_fills_within(&fs, rtt_ps),
        most_fills_within(&fn_, rtt_ps),
    );
    assert_eq!(
        mn,
        1,
        "NewReno repairs one hole per round trip ({} fills)",
        fn_.len()
    );
    assert!(
        ms >= 5,
        "SACK repairs several holes per round trip: {ms} ({} fills)",
        fs.len()
    );
    let (es, en) = (
        with.flows.get(0).end.unwrap(),
        without.flows.get(0).end.unwrap(),
    );
    assert!(es < en, "SACK finishes first: {es:?} vs {en:?}");
    eprintln!(
        "holes per RTT: sack {ms}, newreno {mn}; fct sack {es:?}, newreno {en:?}; drops {} / {}",
        with.flows.get(0).packets_dropped,
        without.flows.get(0).packets_dropped
    );
}

#[test]
fn delayed_ack_halves_the_acks_of_a_clean_transfer() {
    // 100 full segments over a clean path: with delayed ACKs every second in-order segment is
    // acknowledged (RFC 5681 §4.2), plus the segments left alone when a window ends, which the
    // 200 us timer acknowledges: between n/2 and n ACKs, and fewer than without.
    let text = dumbbell_tcp(1, "1Gbps", "20us", "1MB", "146000B", "");
    let acks = |delayed: &str| {
        let s = scenario(&text, &[&format!("transport.delayed_ack=\"{delayed}\"")]);
        let out = run_window(&s, 1, WindowMode::Exact);
        let receiver = s.model.net.port_id(1, 0); // r0 (node 1): a host's only port
        let port = out.ports.iter().find(|p| p.port == receiver).unwrap();
        (port.tx_packets, out.flows.get(0).end.unwrap())
    };
    let (immediate, end_immediate) = acks("0s");
    let (delayed, end_delayed) = acks("200us");
    assert_eq!(immediate, 100, "one ACK per segment");
    assert!(
        (50..=60).contains(&delayed),
        "about every second segment: {delayed}"
    );
    assert!(end_delayed >= end_immediate);
}

#[test]
fn pacing_spreads_the_window_and_keeps_the_bottleneck_queue_short() {
    // One flow, 10 Gb/s host link into a 1 Gb/s bottleneck, RTT 3 ms (BDP 375 KB), 300 KB
    // sent in slow start. Unpaced, every ACK releases two segments at 10 Gb/s, so the
    // bottleneck queue grows by one segment per ACK (about cwnd/2 per round: 40 segments in
    // the round of 80). Paced at 2 x cwnd / RTT the segments reach it slower than 1 Gb/s while
    // cwnd < BDP/2, which holds to the end; only the first window, sent before any RTT sample,
    // queues (9 of its 10 segments).
    let text = dumbbell_tcp(1, "1Gbps", "500us", "10MB", "300KB", "");
    let queue = |pacing: bool| {
        let s = scenario(&text, &[&format!("transport.pacing={pacing}")]);
        let out = run_window(&s, 1, WindowMode::Exact);
        let (sl, sr) = switches(1);
        let port = s
            .model
            .net
            .port_id(sl, s.model.net.port_towards(sl, sr).unwrap());
        let bottleneck = out.ports.iter().find(|p| p.port == port).unwrap();
        let f = &out.flows.get(0);
        assert!(f.end.is_some() && f.packets_dropped == 0, "{f:?}");
        (bottleneck.max_queue_bytes, f.end.unwrap())
    };
    let (unpaced, end_unpaced) = queue(false);
    let (paced, end_paced) = queue(true);
    assert!(
        paced * 2 < unpaced,
        "max bottleneck queue paced {paced} B vs unpaced {unpaced} B"
    );
    // Pacing costs at most one RTT on this transfer.
    assert!(
        end_paced.0 < end_unpaced.0 + 3_000_000_000,
        "{end_paced:?} vs {end_unpaced:?}"
    );
    eprintln!(
        "max queue paced {paced} B unpaced {unpaced} B; end {end_paced:?} vs {end_unpaced:?}"
    );
}

/// The loss-recovery details of `profile = "ns3"`, on a bottleneck that loses data and ACKs:
/// exact on 1 and 4 threads (the further SACK blocks travel in the ACKs' side records, across
/// chunks), every flow completes after its handshake, and ACKs that carry blocks grow by the
/// option's bytes.
#[test]
fn the_ns3_profile_is_exact_and_its_acks_carry_the_sack_option() {
    const FILE: &str = "scenarios/tcp/sack-lossy-dumbbell.toml";
    let ns3 = scenario_file(FILE, &["transport.profile=\"ns3\""]);
    let out = exact_on_1_and_4_threads(&ns3, "profile ns3");
    assert!(
        out.flows
            .iter()
            .all(|f| f.end.is_some() && f.failure.is_none())
    );
    // The profile opens with a handshake: done after at least the 120 us round trip.
    for f in &out.flows {
        let done = f.handshake.expect("handshake completed");
        assert!(done >= netstep_core::units::SimTime::from_us(120), "{done}");
    }
    // The right switch's port towards the left one carries only ACKs.
    let ack_port = |s: &netstep_scenario::Scenario, out: &netstep_core::engine::RunOutput| {
        let (sl, sr) = switches(4);
        let net = &s.model.net;
        let port = net.port_id(sr, net.port_towards(sr, sl).unwrap());
        let p = out.ports.iter().find(|p| p.port == port).unwrap();
        p.tx_bytes as f64 / p.tx_packets as f64
    };
    let mean_ack = ack_port(&ns3, &out);
    // 40-byte headers; an ACK with n blocks adds 12, 20, 28 or 36 bytes.
    assert!(mean_ack > 40.0 && mean_ack < 76.0, "mean ACK {mean_ack} B");
    let bare = scenario_file(
        FILE,
        &[
            "transport.profile=\"ns3\"",
            "transport.sack_option_bytes=false",
            "transport.syn_options=\"0B\"",
        ],
    );
    let bare_out = run_window(&bare, 2, WindowMode::Exact);
    assert_eq!(
        ack_port(&bare, &bare_out),
        40.0,
        "every ACK is the header alone"
    );
    // The profile changes the recovery: not the default run.
    let default = run_window(&scenario_file(FILE, &[]), 1, WindowMode::Exact);
    assert_ne!(default.flows, out.flows);
}

/// ns-3 3.44's runs of two scenarios' flow lists (each file's header says how they were made):
/// per flow, drops, retransmissions, timeouts and the FCT (first data byte handed to IP to
/// the last byte at the sink) in ps.
/// Per flow: drops, retransmissions, timeouts, FCT in ps.
type Ns3Flow = (u64, u64, u64, u64);

const NS3_RUNS: [(&str, &[Ns3Flow]); 2] = [
    (
        "scenarios/tcp/ns3-two-flows.toml",
        &[(2, 2, 0, 16_730_992_399), (217, 217, 5, 33_006_323_199)],
    ),
    (
        "scenarios/tcp/ns3-incast-300kb.toml",
        &[
            (29, 29, 1, 1_469_596_799),
            (1, 1, 1, 1_721_011_998),
            (0, 0, 0, 938_825_596),
            (1, 1, 1, 1_962_959_996),
        ],
    ),
];

/// With `profile = "ns3"` netstep follows ns-3 3.44 through every loss of these flows: each
/// drop, retransmission and timeout, and the FCT to within 2 ns (ns-3 counts from the `Tx`
/// trace of its first data segment, a picosecond after the SYN-ACK's arrival where netstep
/// counts from the arrival; the rest is the ns-3 times' rounding to the ps).
#[test]
fn the_ns3_profile_loses_and_recovers_what_ns3_does() {
    for (file, reference) in NS3_RUNS {
        let s = scenario_file(file, &[]);
        let out = exact_on_1_and_4_threads(&s, file);
        for (f, &(drops, retransmits, timeouts, fct_ps)) in out.flows.iter().zip(reference) {
            let fct = (f.end.unwrap() - f.handshake.unwrap()).0;
            assert_eq!(
                (f.packets_dropped, f.retransmits, f.timeouts),
                (drops, retransmits, timeouts),
                "{file} flow {}",
                f.flow
            );
            assert!(
                fct.abs_diff(fct_ps) <= 2_000,
                "{file} flow {}: FCT {fct} ps",
                f.flow
            );
        }
    }
    // Each detail of the profile matters here: without it the run parts from ns-3's.
    let file = NS3_RUNS[0].0;
    let out = run_window(&scenario_file(file, &[]), 1, WindowMode::Exact);
    for revert in [
        "transport.ssthresh_from=\"flight\"",
        "transport.recovery_rto=\"restart\"",
        "transport.partial_ack_retransmit=false",
    ] {
        let other = run_window(&scenario_file(file, &[revert]), 1, WindowMode::Exact);
        assert_ne!(other.flows, out.flows, "{revert} changes nothing");
    }
}

#[test]
fn recovery_settings_that_need_sack_are_refused_without_it() {
    let base = dumbbell_tcp(1, "1Gbps", "10us", "100KB", "1MB", "");
    for (set, field) in [
        ("sack_blocks = 2", "sack_blocks"),
        ("recovery = \"prr\"", "recovery"),
        ("partial_ack_retransmit = true", "partial_ack_retransmit"),
    ] {
        let text = base.replace("[transport]", &format!("[transport]\nsack = false\n{set}"));
        let err = text_error(&text);
        assert!(
            err.contains(&format!("transport.{field}")) && err.contains("sack = false"),
            "{err}"
        );
    }
    let text = base.replace("[transport]", "[transport]\nsack_blocks = 5");
    let err = text_error(&text);
    assert!(
        err.contains("transport.sack_blocks") && err.contains("1 to 4"),
        "{err}"
    );
}

/// What each `profile` sets, each field given explicitly winning, and without SACK only the
/// details that apply.
#[test]
fn profiles_set_their_documented_values_unless_a_field_is_given() {
    use netstep_core::transport::TransportSpec;
    use netstep_core::transport::tcp::{Recovery, RecoveryExit, RttSampling, SsthreshFrom};
    use netstep_core::units::SimTime;
    let spec = |overrides: &[&str]| {
        let text = dumbbell_tcp(1, "1Gbps", "10us", "100KB", "10KB", "");
        let s = scenario(&text, overrides);
        match &*s.model.flows.flows[0].transport {
            TransportSpec::Tcp(t) => t.clone(),
            other => panic!("not TCP: {other:?}"),
        }
    };
    let summary = |t: &netstep_core::transport::tcp::TcpSpec| {
        (
            t.sack_blocks,
            t.sack_option_bytes,
            t.rtt_sampling,
            t.recovery,
            t.recovery_exit,
            t.abc_limit,
            (t.handshake, t.syn_option_bytes, t.syn_rto),
            (
                t.ssthresh_from,
                t.recovery_restarts_rto,
                t.partial_ack_retransmit,
            ),
        )
    };
    let ns3 = spec(&["transport.profile=\"ns3\""]);
    assert_eq!(
        summary(&ns3),
        (
            4,
            true,
            RttSampling::Karn,
            Recovery::PrrNs3,
            RecoveryExit::Ssthresh,
            1,
            (true, 8, SimTime::from_secs(3)),
            (SsthreshFrom::Pipe, false, true)
        )
    );
    let linux = spec(&["transport.profile=\"linux\""]);
    assert_eq!(
        summary(&linux),
        (
            3,
            true,
            RttSampling::Echo,
            Recovery::Prr,
            RecoveryExit::Ssthresh,
            0,
            (true, 20, SimTime::from_secs(1)),
            (SsthreshFrom::Cwnd, true, false)
        )
    );
    let default = spec(&[]);
    assert_eq!(
        summary(&spec(&["transport.profile=\"netstep\""])),
        summary(&default)
    );
    // Without SACK: one block, the default recovery, the rest as the profile says.
    let no_sack = spec(&["transport.profile=\"ns3\"", "transport.sack=false"]);
    assert_eq!(
        (
            no_sack.sack_blocks,
            no_sack.recovery,
            no_sack.rtt_sampling,
            no_sack.partial_ack_retransmit
        ),
        (1, default.recovery, RttSampling::Karn, false)
    );
    // A field given explicitly wins over its profile.
    let mixed = spec(&[
        "transport.profile=\"ns3\"",
        "transport.abc_limit=2",
        "transport.sack_blocks=2",
        "transport.rtt_sampling=\"echo\"",
        "transport.handshake=false",
        "transport.syn_rto=\"1ms\"",
    ]);
    assert_eq!(
        (
            mixed.abc_limit,
            mixed.sack_blocks,
            mixed.rtt_sampling,
            mixed.handshake,
            mixed.syn_rto,
            mixed.recovery
        ),
        (
            2,
            2,
            RttSampling::Echo,
            false,
            SimTime::from_ms(1),
            Recovery::PrrNs3
        )
    );
}
