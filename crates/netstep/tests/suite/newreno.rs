//! TCP NewReno behaviour: utilisation, fairness, loss recovery.

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
    let flow = &out.flows[0];
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
    let flow = &out.flows[0];
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
    let flow = &out.flows[0];
    assert!(flow.end.is_some(), "flow completes after the timeout");
    assert!(flow.timeouts >= 1, "{flow:?}");
    assert_eq!(flow.packets_delivered, 10);
    // The timeout fires no earlier than the configured 10 ms initial RTO.
    assert!(flow.end.unwrap().as_secs_f64() >= 0.010, "{:?}", flow.end);
}
