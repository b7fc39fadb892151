//! Property tests: packets are conserved, queues stay within capacity, time never runs
//! backwards, and the thread count never changes results.

use netstep_core::engine::WindowMode;
use proptest::prelude::*;

use crate::common::*;

fn random_dumbbell(
    pairs: u32,
    buffer_pkts: u32,
    packets: u32,
    gap_ns: u32,
    fast: bool,
    exponential: bool,
) -> String {
    let flows: Vec<String> = (0..pairs)
        .map(|i| {
            format!(
                "{{ src = \"l{i}\", dst = \"r{}\", packets = {packets}, start = \"{}ns\" }}",
                (i + 1) % pairs,
                i * 37
            )
        })
        .collect();
    format!(
        r#"
[topology]
kind = "dumbbell"
left = {pairs}
right = {pairs}
[topology.links]
rate = "{rate}"
delay = "1us"
buffer = "{buffer_pkts}pkts"
[topology.fabric_links]
rate = "1Gbps"
[nic]
buffer = "{buffer_pkts}pkts"
[transport]
kind = "open_loop"
packet_size = "500B"
interval = "{gap_ns}ns"
exponential = {exponential}
[[traffic]]
kind = "flows"
flows = [{flows}]
"#,
        rate = if fast { "10Gbps" } else { "1Gbps" },
        flows = flows.join(", ")
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn conservation_bounds_and_thread_invariance(
        pairs in 1u32..5,
        buffer_pkts in 1u32..12,
        packets in 1u32..60,
        gap_ns in 50u32..8000,
        fast in any::<bool>(),
        exponential in any::<bool>(),
    ) {
        let mut s = scenario(&random_dumbbell(pairs, buffer_pkts, packets, gap_ns, fast, exponential), &[]);
        s.model.record_deliveries = true;
        let one = run_window(&s, 1, WindowMode::Exact);
        let two = run_window(&s, 2, WindowMode::Exact);
        prop_assert_eq!(&one.flows, &two.flows);
        prop_assert_eq!(&one.ports, &two.ports);
        prop_assert_eq!(&one.deliveries, &two.deliveries);
        for f in &one.flows {
            // Run to completion: nothing in flight, so sent = delivered + dropped.
            prop_assert_eq!(f.packets_sent, packets as u64);
            prop_assert_eq!(f.packets_sent, f.packets_delivered + f.packets_dropped, "flow {:?}", f);
        }
        let total_drops: u64 = one.ports.iter().map(|p| p.drops).sum();
        prop_assert_eq!(total_drops, one.stats.drops);
        for p in &one.ports {
            prop_assert!(p.max_queue_packets <= buffer_pkts as u64, "port {:?} exceeded {} packets", p, buffer_pkts);
            prop_assert_eq!(p.queued_at_end, 0);
        }
        for d in &one.deliveries {
            prop_assert!(d.arrived_ps > d.sent_ps, "time ran backwards: {:?}", d);
        }
    }
}
