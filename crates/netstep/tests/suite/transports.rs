//! Congestion control beyond NewReno, against the published behaviour: DCTCP keeps the
//! bottleneck queue around the marking threshold K at full utilisation and shares it fairly
//! (Alizadeh et al. 2010, RFC 8257); NewReno on the same path fills the buffer.

use netstep_core::engine::WindowMode;

use crate::common::*;

const DCTCP: &str = "scenarios/transports/dctcp.toml";

/// Over 5-40 ms at the bottleneck (sl -> sr): utilisation, mean queue (bytes), Jain fairness
/// of the two flows' delivered bytes, drops.
fn dumbbell_steady_state(overrides: &[&str]) -> (f64, f64, f64, u64) {
    let mut s = scenario_file(DCTCP, overrides);
    s.model.record_deliveries = true;
    let net = s.model.net.clone();
    // Dumbbell left = right = 2: l0 0, l1 1, r0 2, r1 3, sl 4, sr 5.
    let bottleneck = net.port_id(4, net.port_towards(4, 5).unwrap());
    let (out, trace) = traced(&mut s);
    let (from, to) = (5_000_000_000u64, 40_000_000_000u64);
    let samples: Vec<_> = trace
        .samples
        .iter()
        .filter(|q| q.port == bottleneck && (from..=to).contains(&q.time_ps))
        .collect();
    let (first, last) = (samples.first().unwrap(), samples.last().unwrap());
    let utilisation = (last.tx_bytes - first.tx_bytes) as f64 * 8.0
        / ((last.time_ps - first.time_ps) as f64 * 1e-12)
        / 10e9;
    let mean_queue =
        samples.iter().map(|q| q.queue_bytes as f64).sum::<f64>() / samples.len() as f64;
    let mut bytes = [0f64; 2];
    for d in out
        .deliveries
        .iter()
        .filter(|d| (from..to).contains(&d.arrived_ps))
    {
        bytes[d.flow as usize] += d.size_bytes as f64;
    }
    let jain = (bytes[0] + bytes[1]).powi(2) / (2.0 * (bytes[0].powi(2) + bytes[1].powi(2)));
    (utilisation, mean_queue, jain, out.stats.drops)
}

#[test]
fn dctcp_holds_the_queue_near_k_at_full_utilisation() {
    let k = 30_000.0;
    let (utilisation, queue, jain, drops) = dumbbell_steady_state(&[]);
    println!(
        "DCTCP: utilisation {utilisation:.4}, mean queue {queue:.0} B (K = {k}), Jain {jain:.4}, drops {drops}"
    );
    assert!(utilisation >= 0.95, "{utilisation}");
    assert!((k / 2.0..=2.0 * k).contains(&queue), "{queue}");
    assert!(jain >= 0.95, "{jain}");
    assert_eq!(drops, 0);
    // NewReno ignores the marks: it fills the 1 MB buffer and loses packets.
    let (_, reno_queue, _, reno_drops) = dumbbell_steady_state(&["transport.cc=\"newreno\""]);
    println!("NewReno: mean queue {reno_queue:.0} B, drops {reno_drops}");
    assert!(reno_queue > 10.0 * k && reno_drops > 0);
}

#[test]
fn dctcp_is_exact_and_thread_invariant() {
    let s = scenario_file(
        DCTCP,
        &[
            "traffic.0.flows.0.size=\"2MB\"",
            "traffic.0.flows.1.size=\"2MB\"",
            "transport.delayed_ack=\"20us\"",
        ],
    );
    let reference = run_reference(&s);
    assert!(reference.flows.iter().all(|f| f.end.is_some()));
    assert_same_simulation(&reference, &run_window(&s, 1, WindowMode::Exact), "dctcp");
    assert_same_simulation(
        &reference,
        &run_window(&s, 4, WindowMode::Exact),
        "dctcp, 4 threads",
    );
}

#[test]
fn dctcp_settings_are_checked() {
    for (overrides, needle) in [
        (
            &["transport.cc=\"newreno\"", "transport.dctcp_g=0.5"][..],
            "applies to cc = \"dctcp\" only",
        ),
        (
            &["transport.cc=\"dctcp\"", "transport.dctcp_g=0"],
            "transport.dctcp_g: must be in (0, 1], got 0",
        ),
    ] {
        let err = load_error(DCTCP, overrides);
        assert!(err.contains(needle), "{overrides:?}: {err}");
    }
}

/// DCTCP's `alpha`, read end to end from `cc_samples`, tracks the fraction of packets the
/// bottleneck marks (RFC 8257 §3.3: alpha is an EWMA of the marked fraction per window).
/// Over 5-40 ms, cut into 10 batches of 3.5 ms (about 40 round trips, longer than alpha's
/// 1/g = 16-round-trip memory, so batches are nearly independent), the paired difference
/// mean(alpha) - marked fraction per batch must not be significant: |mean| <= t(0.995, 9)
/// x its standard error, t = 3.25 (a 1 % two-sided test). A window-weighted alpha against a
/// packet-weighted fraction may differ slightly; the test admits only what the sample's own
/// variability explains. It fails if alpha stopped updating (it would stay near its start
/// value 1) or tracked anything else.
#[test]
fn dctcp_alpha_tracks_the_marked_fraction_in_cc_samples() {
    let mut s = scenario_file(DCTCP, &[]);
    let net = s.model.net.clone();
    let bottleneck = net.port_id(4, net.port_towards(4, 5).unwrap());
    let (_, trace) = traced(&mut s);
    let batches = 10;
    let (from, to) = (5_000_000_000u64, 40_000_000_000u64);
    let width = (to - from) / batches;
    let mut differences = Vec::new();
    for b in 0..batches {
        let (lo, hi) = (from + b * width, from + (b + 1) * width);
        let alphas: Vec<f64> = trace
            .cc
            .iter()
            .filter(|c| (lo..hi).contains(&c.time_ps))
            .map(|c| c.alpha.expect("DCTCP samples alpha"))
            .collect();
        assert!(alphas.len() >= 2 * 30, "two flows sampled every 100 us");
        let at = |t: u64| {
            trace
                .samples
                .iter()
                .find(|q| q.port == bottleneck && q.time_ps == t)
                .unwrap()
        };
        let (a, z) = (at(lo), at(hi));
        let fraction = (z.ecn_marks - a.ecn_marks) as f64 / (z.tx_packets - a.tx_packets) as f64;
        let mean_alpha = alphas.iter().sum::<f64>() / alphas.len() as f64;
        differences.push(mean_alpha - fraction);
    }
    let n = differences.len() as f64;
    let mean = differences.iter().sum::<f64>() / n;
    let sd = (differences.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    let se = sd / n.sqrt();
    println!("alpha - marked fraction: {mean:.4} (standard error {se:.4})");
    assert!(mean.abs() <= 3.25 * se, "{mean} vs {se}: {differences:?}");
    // And the samples are a real window: cwnd stays within the path's BDP + K.
    let cwnd = trace.cc.iter().map(|c| c.cwnd).fold(0.0, f64::max);
    assert!(cwnd > 10.0 && cwnd < 200.0, "{cwnd}");
}
