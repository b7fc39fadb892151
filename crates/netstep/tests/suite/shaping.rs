//! Shaping and policing: a token-bucket shaper's output conforms to its arrival curve
//! `burst + rate * t` (and reaches it), then runs at exactly the token rate; a trTCM policer's
//! colors follow RFC 2698's long-run shares; a host NIC shaper paces TCP without drops;
//! exactness and thread invariance; bad parameters refused.

use netstep_core::engine::WindowMode;
use netstep_core::engine::trace::DropReason;

use crate::common::*;

#[test]
fn token_bucket_output_conforms_to_its_arrival_curve() {
    let mut s = scenario_file("scenarios/elements/token-bucket.toml", &[]);
    let net = s.model.net.clone();
    // Dumbbell: l0 = 0, r0 = 1, sl = 2, sr = 3; the shaped port is sl -> sr.
    let shaped = net.port_id(2, net.port_towards(2, 3).unwrap());
    let (out, trace) = traced(&mut s);
    assert_eq!(out.stats.drops, 0);
    let mut hops: Vec<_> = trace.hops.iter().filter(|h| h.port == shaped).collect();
    hops.sort_by_key(|h| h.dequeue_ps);
    assert_eq!(hops.len(), 2000);
    let (rate_bytes_per_ps, burst) = (1e9 / 8.0 / 1e12, 15_000.0);
    // Every interval between two starts: bytes started <= burst + rate * length (a packet's
    // tokens are taken when it starts). The largest excess is the burst, within a packet.
    let starts: Vec<f64> = hops.iter().map(|h| h.dequeue_ps.unwrap() as f64).collect();
    let mut worst = f64::MIN;
    for i in 0..starts.len() {
        let mut bytes = 0.0;
        for j in i..starts.len() {
            bytes += 1500.0;
            let excess = bytes - rate_bytes_per_ps * (starts[j] - starts[i]);
            worst = worst.max(excess);
        }
    }
    println!("largest bytes above rate x interval: {worst:.1} B (burst {burst} B)");
    assert!(worst <= burst + 1e-6, "{worst}");
    assert!(worst > burst - 1500.0, "{worst}");
    // The first 12 packets start as they arrive (the 15 KB bucket plus 300 B per 2.4 us gap),
    // the 13th waits; from then on starts are exactly 12 us apart (1500 B at 1 Gb/s).
    for h in &hops[..12] {
        assert_eq!(h.dequeue_ps, Some(h.arrive_ps), "packet {}", h.packet_id);
    }
    assert!(hops[12].dequeue_ps.unwrap() > hops[12].arrive_ps);
    for pair in hops[12..].windows(2) {
        assert_eq!(
            pair[1].dequeue_ps.unwrap() - pair[0].dequeue_ps.unwrap(),
            12_000_000
        );
    }
    assert_eq!(out.flows.get(0).end.unwrap().0, 23_886_600_000);
}

#[test]
fn trtcm_colors_follow_rfc_2698_shares() {
    let mut s = scenario_file("scenarios/elements/trtcm-policer.toml", &[]);
    let net = s.model.net.clone();
    let policed = net.port_id(2, net.port_towards(2, 3).unwrap());
    let (out, trace) = traced(&mut s);
    let port = out.ports.iter().find(|p| p.port == policed).unwrap();
    let (red, yellow) = (port.drops, port.yellow);
    let green = port.tx_packets - yellow;
    println!("green {green}, yellow {yellow}, red {red}");
    // Input R = 4 Gb/s > PIR: green CIR/R, yellow (PIR - CIR)/R, red 1 - PIR/R of 40,000
    // packets. The buckets start full (15 KB = 15 packets each), which can move at most 15
    // packets per bucket from one color to another.
    for (got, want) in [(green, 10_000), (yellow, 10_000), (red, 20_000)] {
        assert!(
            got.abs_diff(want) <= 30,
            "green {green} yellow {yellow} red {red}"
        );
    }
    assert_eq!(green + yellow + red, 40_000);
    // Red packets are dropped on arrival with reason "policed", nowhere else.
    let policed_drops = trace
        .hops
        .iter()
        .filter(|h| h.drop == Some(DropReason::Policed))
        .count() as u64;
    assert_eq!(policed_drops, red);
    assert_eq!(out.stats.drops, red);
    // Below CIR nothing is policed.
    let slow = scenario_file(
        "scenarios/elements/trtcm-policer.toml",
        &["traffic.0.transport.rate=\"900Mbps\""],
    );
    let out = run_window(&slow, 1, WindowMode::Exact);
    assert_eq!(out.stats.drops, 0);
    assert!(out.ports.iter().all(|p| p.yellow == 0));
}

const NIC_SHAPED: &str = r#"
[simulation]
seed = 2
[topology]
kind = "dumbbell"
left = 2
right = 1
[topology.links]
rate = "10Gbps"
delay = "2us"
[nic]
shaper = { rate = "1Gbps", burst = "15KB" }
[[traffic]]
kind = "flows"
flows = [{ src = "l0", dst = "r0", size = "5MB" }, { src = "l1", dst = "r0", size = "5MB" }]
"#;

#[test]
fn a_nic_shaper_paces_tcp_without_drops() {
    let s = scenario(NIC_SHAPED, &[]);
    let out = run_window(&s, 1, WindowMode::Exact);
    assert_eq!(out.stats.drops, 0, "hosts never drop their own packets");
    for f in &out.flows {
        // 5 MB of payload plus headers at 1 Gb/s is a little over 40 ms; ACKs and slow start
        // add a few round trips of 10 us.
        let fct = f.end.unwrap().0 as f64 / 1e9;
        println!("flow {}: {fct:.3} ms", f.flow);
        assert!((40.0..42.5).contains(&fct), "flow {}: {fct} ms", f.flow);
    }
    let unshaped = scenario(
        NIC_SHAPED,
        &["nic.shaper={ rate = \"10Gbps\", burst = \"15KB\" }"],
    );
    let fast = run_window(&unshaped, 1, WindowMode::Exact);
    assert!(fast.flows.iter().all(|f| f.end.unwrap().0 < 12_000_000_000));
}

#[test]
fn shaping_and_policing_are_exact_and_thread_invariant() {
    let cases = [
        scenario_file("scenarios/elements/token-bucket.toml", &[]),
        scenario_file(
            "scenarios/elements/trtcm-policer.toml",
            &["traffic.0.flows.0.packets=5000"],
        ),
        scenario(
            NIC_SHAPED,
            &[
                "traffic.0.flows.0.size=\"300KB\"",
                "traffic.0.flows.1.size=\"300KB\"",
            ],
        ),
    ];
    for (i, s) in cases.iter().enumerate() {
        exact_on(s, &format!("case {i}"), &[1, 3]);
    }
}

#[test]
fn bad_shaper_and_policer_parameters_are_refused() {
    for (set, needle) in [
        (
            r#"topology.fabric_links.policer={ kind = "trtcm", cir = "2Gbps", cbs = "1KB", pir = "1Gbps", pbs = "1KB" }"#,
            "topology.fabric_links.policer.pir: the peak rate must be at least the committed rate",
        ),
        (
            r#"topology.fabric_links.policer={ kind = "srtcm", cir = "1Gbps", cbs = "1KB", pir = "1Gbps", pbs = "1KB" }"#,
            "unknown variant `srtcm`",
        ),
        (
            r#"topology.fabric_links.shaper={ rate = "0Gbps", burst = "1KB" }"#,
            "topology.fabric_links.shaper.rate: must be positive",
        ),
        (
            r#"topology.fabric_links.shaper={ rate = "1Gbps", burst = "0B" }"#,
            "topology.fabric_links.shaper.burst: must be positive",
        ),
        (
            r#"nic.shaper={ rate = "fast", burst = "1KB" }"#,
            "nic.shaper.rate",
        ),
    ] {
        let err = load_error("scenarios/elements/trtcm-policer.toml", &[set]);
        assert!(err.contains(needle), "{set}: {err}");
    }
}
