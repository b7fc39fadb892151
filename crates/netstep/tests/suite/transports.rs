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
    let jain = jain(&bytes);
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
    let reference = exact_on_1_and_4_threads(&s, "dctcp");
    assert!(reference.flows.iter().all(|f| f.end.is_some()));
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
        let at = |t: u64| queue_at(&trace, bottleneck, t);
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

const CUBIC: &str = "scenarios/transports/cubic.toml";

/// Runs with only queue and congestion-control samples at `interval` (no hop records).
fn sampled(
    s: &netstep_scenario::Scenario,
    interval: netstep_core::units::SimTime,
) -> netstep_core::engine::trace::MemoryTrace {
    use netstep_core::engine::EngineConfig;
    use netstep_core::engine::trace::MemoryTrace;
    use netstep_core::engine::window::WindowEngine;
    let mut model = s.model.clone();
    model.trace.queue_samples = Some(interval);
    model.trace.cc_samples = Some(interval);
    let mut trace = MemoryTrace::default();
    let config = EngineConfig {
        threads: 1,
        window: WindowMode::Exact,
        end: s.meta.duration,
    };
    WindowEngine::new(&model, config)
        .unwrap()
        .run_traced(|_| {}, &mut trace)
        .expect("run");
    trace
}

/// The queue sample of global `port` at `time_ps`.
fn queue_at(
    trace: &netstep_core::engine::trace::MemoryTrace,
    port: u32,
    time_ps: u64,
) -> &netstep_core::engine::trace::QueueSample {
    trace
        .samples
        .iter()
        .find(|q| q.port == port && q.time_ps == time_ps)
        .unwrap()
}

/// Segments (packets) `flow` had acknowledged at `time_ps`, from its congestion-control sample.
fn acked_at(trace: &netstep_core::engine::trace::MemoryTrace, flow: u32, time_ps: u64) -> f64 {
    trace
        .cc
        .iter()
        .find(|c| c.flow == flow && c.time_ps == time_ps)
        .unwrap()
        .acked as f64
}

/// Jain's fairness index of `x`.
fn jain(x: &[f64]) -> f64 {
    let sum: f64 = x.iter().sum();
    sum * sum / (x.len() as f64 * x.iter().map(|v| v * v).sum::<f64>())
}

/// CUBIC fills a half-BDP drop-tail bottleneck and two flows of equal RTT share it: over
/// 4.9-14.9 s, utilisation >= 95 % (the bottleneck's transmitted bytes) and Jain fairness >= 0.95
/// (each flow's newly acknowledged segments, from cc_samples).
#[test]
fn cubic_fills_the_bottleneck_and_shares_it_fairly() {
    use netstep_core::units::SimTime;
    let s = scenario_file(CUBIC, &[]);
    let net = s.model.net.clone();
    let bottleneck = net.port_id(4, net.port_towards(4, 5).unwrap());
    let trace = sampled(&s, SimTime::from_ms(100));
    // The last sample is at 14.9 s (the run stops at 15 s).
    let (from, to) = (4_900_000_000_000u64, 14_900_000_000_000u64);
    let port_at = |t: u64| queue_at(&trace, bottleneck, t);
    let utilisation = (port_at(to).tx_bytes - port_at(from).tx_bytes) as f64 * 8.0 / 10.0 / 100e6;
    let acked = |flow: u32, t: u64| acked_at(&trace, flow, t);
    let x: Vec<f64> = (0..2).map(|f| acked(f, to) - acked(f, from)).collect();
    let jain = jain(&x);
    println!("CUBIC: utilisation {utilisation:.4}, Jain {jain:.4}, segments {x:?}");
    assert!(utilisation >= 0.95, "{utilisation}");
    assert!(jain >= 0.95, "{jain}");
}

/// RFC 9438 §4.2 on a clean link (no random loss; drop-tail overflow is the only loss): one
/// flow, 200 Mb/s, 100 ms RTT (BDP 1,667 segments), 500 KB buffer. In every congestion-avoidance
/// epoch between two reductions, sampled every 10 ms, the window is within 5 % of
/// `W(t) = C (t - K)^3 + W_max` with `W_max` the sampled plateau, `K = cbrt((W_max - W0) / C)`
/// from the window W0 the epoch starts at, and t from the first sample after recovery (at most
/// 10 ms late: under 0.1 % of the window here). Reno's linear growth (0.5 segment per round
/// trip) would be 25 % below the curve by the end of the concave epoch.
#[test]
fn cubic_window_follows_the_cubic_curve_between_losses() {
    use netstep_core::units::SimTime;
    let s = scenario_file(
        CUBIC,
        &[
            "topology.fabric_links.rate=\"200Mbps\"",
            "topology.fabric_links.delay=\"50ms\"",
            "topology.fabric_links.buffer=\"500KB\"",
            "traffic.0.flows=[{ src = \"l0\", dst = \"r0\", size = \"100GB\" }]",
            "simulation.duration=\"25s\"",
        ],
    );
    let trace = sampled(&s, SimTime::from_ms(10));
    let cc: Vec<_> = trace.cc.iter().filter(|c| c.flow == 0).collect();
    // A reduction is a sample whose ssthresh differs from the previous one's.
    let reductions: Vec<usize> = (1..cc.len())
        .filter(|&i| cc[i].ssthresh != cc[i - 1].ssthresh)
        .collect();
    let mut epochs = 0;
    for pair in reductions.windows(2) {
        let samples: Vec<_> = cc[pair[0]..pair[1]]
            .iter()
            .filter(|c| !c.in_recovery)
            .collect();
        // Two reductions in a row (losses found during one recovery) leave no epoch.
        if samples.len() < 2 {
            continue;
        }
        let first = samples[0];
        // The epoch's plateau, fixed at its first avoidance ACK (which may follow the first
        // sample: with a window above W_max, W_max becomes the window and K = 0).
        let w_max = samples[1].w_max.expect("CUBIC samples W_max");
        let w0 = first.ssthresh.unwrap();
        let k = ((w_max - w0).max(0.0) / 0.4).cbrt();
        let mut worst = 0.0f64;
        for c in &samples {
            if c.time_ps > first.time_ps {
                assert_eq!(c.w_max, Some(w_max), "W_max is constant within an epoch");
            }
            let t = (c.time_ps - first.time_ps) as f64 * 1e-12;
            let expected = 0.4 * (t - k).powi(3) + w_max;
            worst = worst.max((c.cwnd - expected).abs() / expected);
        }
        let span = (samples.last().unwrap().time_ps - first.time_ps) as f64 * 1e-12;
        println!(
            "epoch from {:.2} s for {span:.2} s: W_max {w_max:.1}, W0 {w0:.1}, K {k:.2} s, worst error {worst:.5}",
            first.time_ps as f64 * 1e-12
        );
        assert!(worst <= 0.05, "{worst}");
        epochs += 1;
    }
    assert!(epochs >= 2, "{epochs} complete epochs");
}

#[test]
fn cubic_is_exact_and_thread_invariant() {
    let s = scenario_file(
        CUBIC,
        &[
            "traffic.0.flows.0.size=\"3MB\"",
            "traffic.0.flows.1.size=\"3MB\"",
            "topology.fabric_links.buffer=\"20KB\"",
        ],
    );
    let reference = exact_on_1_and_4_threads(&s, "cubic");
    assert!(reference.flows.iter().all(|f| f.end.is_some()));
    assert!(reference.stats.drops > 0, "losses exercise the reductions");
}

const REAL: &str = "scenarios/transports/real-sources.toml";

/// What REAL's gateway saw over `[from, to)` (seconds; sampled every 100 ms): utilisation,
/// mean packets waiting, drops, and each flow's share of the acknowledged segments.
struct Gateway {
    utilisation: f64,
    mean_queue: f64,
    drops: u64,
    shares: Vec<f64>,
}

fn gateway(s: &netstep_scenario::Scenario, from: f64, to: f64) -> Gateway {
    use netstep_core::units::SimTime;
    let net = s.model.net.clone();
    let port = net.port_id(4, net.port_towards(4, 5).unwrap());
    let trace = sampled(s, SimTime::from_ms(100));
    let (from, to) = ((from * 1e12) as u64, (to * 1e12) as u64);
    let samples: Vec<_> = trace
        .samples
        .iter()
        .filter(|q| q.port == port && (from..=to).contains(&q.time_ps))
        .collect();
    let (first, last) = (samples[0], samples[samples.len() - 1]);
    assert_eq!(
        (first.time_ps, last.time_ps),
        (from, to),
        "samples at both ends"
    );
    let acked = |flow: u32, t: u64| acked_at(&trace, flow, t);
    let delivered: Vec<f64> = (0..2).map(|f| acked(f, to) - acked(f, from)).collect();
    let total: f64 = delivered.iter().sum();
    Gateway {
        utilisation: (last.tx_bytes - first.tx_bytes) as f64 * 8.0
            / ((to - from) as f64 * 1e-12)
            / 10e6,
        mean_queue: samples.iter().map(|q| q.queue_packets as f64).sum::<f64>()
            / samples.len() as f64,
        drops: last.drops - first.drops,
        shares: delivered.iter().map(|d| d / total).collect(),
    }
}

/// Keshav 1988 / Ramakrishnan and Jain: DEC sources keep the gateway's queue short. The
/// DECbit is set when the average number of packets in the gateway (the one in service
/// included) reaches one, so sources that obey it hold the average queue below one packet,
/// without a drop. Paced (as the scenario is written) they share the gateway fairly; unpaced,
/// each window reaches the 10 Mb/s gateway as a 100 Mb/s burst, the bit reacts to the bursts,
/// and the windows settle lower and unevenly (measured: utilisation 0.88 paced, 0.72 unpaced;
/// shares 0.53/0.47 and 0.37/0.63). JK sources on the same gateway (they ignore the bit) fill
/// the buffer until it drops.
#[test]
fn real_dec_sources_keep_the_gateway_queue_short() {
    for pacing in [true, false] {
        let dec = gateway(
            &scenario_file(
                REAL,
                &[
                    &format!("traffic.0.transport.pacing={pacing}"),
                    &format!("traffic.1.transport.pacing={pacing}"),
                ],
            ),
            5.0,
            19.9,
        );
        println!(
            "DEC (pacing {pacing}): utilisation {:.3}, mean queue {:.2} packets, drops {}, shares {:?}",
            dec.utilisation, dec.mean_queue, dec.drops, dec.shares
        );
        assert!(dec.mean_queue < 1.0, "{}", dec.mean_queue);
        assert_eq!(dec.drops, 0);
        if pacing {
            assert!(jain(&dec.shares) >= 0.95, "{:?}", dec.shares);
        }
    }
    let jk = gateway(
        &scenario_file(
            REAL,
            &[
                "traffic.0.transport.cc=\"jk\"",
                "traffic.1.transport.cc=\"jk\"",
                "traffic.0.transport.pacing=false",
                "traffic.1.transport.pacing=false",
            ],
        ),
        5.0,
        19.9,
    );
    println!(
        "JK on the same gateway: mean queue {:.2} packets, drops {}",
        jk.mean_queue, jk.drops
    );
    assert!(
        jk.mean_queue >= 32.0,
        "half the 64-packet buffer: {}",
        jk.mean_queue
    );
    assert!(jk.drops > 0);
}

/// Keshav 1988: JK sources converge. Two Jacobson-Karels sources (slow start, congestion
/// avoidance, timeouts with go-back-N) on a drop-tail gateway reach a fair, full share over
/// 20-60 s: Jain >= 0.95 and utilisation >= 95 % (the issue's thresholds; measured 0.961
/// and 0.957), with the buffer mostly full.
#[test]
fn real_jk_sources_converge_to_a_fair_full_share() {
    let jk = gateway(
        &scenario_file(
            REAL,
            &[
                "traffic.0.transport.cc=\"jk\"",
                "traffic.1.transport.cc=\"jk\"",
                "traffic.0.transport.pacing=false",
                "traffic.1.transport.pacing=false",
                "simulation.duration=\"60s\"",
            ],
        ),
        20.0,
        59.9,
    );
    println!(
        "JK: utilisation {:.3}, mean queue {:.2}, drops {}, shares {:?}, Jain {:.3}",
        jk.utilisation,
        jk.mean_queue,
        jk.drops,
        jk.shares,
        jain(&jk.shares)
    );
    assert!(jain(&jk.shares) >= 0.95, "{:?}", jk.shares);
    assert!(jk.utilisation >= 0.95, "{}", jk.utilisation);
}

/// Keshav 1988, Demers, Keshav and Shenker 1989: generic sources (fixed windows, no
/// congestion control) segregate under FCFS: with windows of 6 and 24 segments and a standing
/// queue, both see the same round trip, so each gets `W_i / sum(W)` of the gateway: 0.2 and
/// 0.8. Fair queueing gives each half. Tolerance: a flow's count at either end of the interval
/// is off by at most its window, so a share by at most `sum(W) / segments counted` (0.25 %).
#[test]
fn real_generic_sources_segregate_under_fcfs_and_share_under_fair_queueing() {
    let text = std::fs::read_to_string(repo().join(REAL))
        .unwrap()
        .replace("aqm = { kind = \"decbit\" }", "");
    let generic = |scheduler: &str| {
        let s = scenario(
            &text,
            &[
                "traffic.0.transport.cc=\"generic\"",
                "traffic.1.transport.cc=\"generic\"",
                "traffic.0.transport.pacing=false",
                "traffic.1.transport.pacing=false",
                "traffic.0.transport.initial_cwnd=6",
                "traffic.1.transport.initial_cwnd=24",
                &format!("topology.fabric_links.scheduler={{ kind = \"{scheduler}\" }}"),
            ],
        );
        gateway(&s, 5.0, 19.9)
    };
    // 10 Mb/s of 1,500-byte packets for 14.9 s: about 12,400 segments counted.
    let tolerance = 30.0 / 12_000.0;
    let fcfs = generic("fifo");
    println!(
        "generic, FCFS: shares {:?}, utilisation {:.3}",
        fcfs.shares, fcfs.utilisation
    );
    assert!(
        (fcfs.shares[0] - 0.2).abs() <= tolerance,
        "{:?}",
        fcfs.shares
    );
    assert!(fcfs.utilisation >= 0.95 && fcfs.drops == 0);
    let fq = generic("fair_queueing");
    println!(
        "generic, FQ: shares {:?}, utilisation {:.3}",
        fq.shares, fq.utilisation
    );
    assert!((fq.shares[0] - 0.5).abs() <= tolerance, "{:?}", fq.shares);
    assert!(fq.utilisation >= 0.95);
}

#[test]
fn real_sources_are_exact_and_thread_invariant() {
    for cc in ["dec", "jk", "generic"] {
        let s = scenario_file(
            REAL,
            &[
                &format!("traffic.0.transport.cc=\"{cc}\""),
                &format!("traffic.1.transport.cc=\"{cc}\""),
                "traffic.1.transport.initial_cwnd=40",
                "traffic.0.flows.0.size=\"1MB\"",
                "traffic.1.flows.0.size=\"1MB\"",
                "topology.fabric_links.buffer=\"16pkts\"",
            ],
        );
        let reference = exact_on_1_and_4_threads(&s, cc);
        assert!(reference.flows.iter().all(|f| f.end.is_some()), "{cc}");
    }
}

#[test]
fn real_sources_refuse_sack() {
    let err = load_error(REAL, &["traffic.0.transport.sack=true"]);
    assert!(err.contains("go-back-N"), "{err}");
}

const BBR: &str = "scenarios/transports/bbr.toml";

/// BBR v1 on a deep buffer: two flows of equal RTT fill the bottleneck (utilisation >= 95 %,
/// Jain >= 0.95 over 4.9-14.9 s, no drop) while the queue stays near one BDP. Bound: BBR caps
/// each flow's data in flight at `2 x BtlBw x RTprop + 3` segments; with the flows' BtlBw
/// estimates adding up to at most 1.05 C (the 5 % of the estimate test), the data in flight is
/// at most 2.1 C x RTprop + 6 segments, so the queue (in flight beyond the pipe's C x RTprop)
/// stays within 1.1 BDP + 6 segments once Startup is over, and within Startup's gain
/// `2 / ln 2` times the BDP during it: far below the 1.25 MB (10 BDP) buffer.
#[test]
fn bbr_fills_the_bottleneck_fairly_with_a_bounded_queue() {
    use netstep_core::units::SimTime;
    let s = scenario_file(BBR, &[]);
    let net = s.model.net.clone();
    let bottleneck = net.port_id(4, net.port_towards(4, 5).unwrap());
    let trace = sampled(&s, SimTime::from_ms(10));
    let (from, to) = (4_900_000_000_000u64, 14_900_000_000_000u64);
    let port: Vec<_> = trace
        .samples
        .iter()
        .filter(|q| q.port == bottleneck)
        .collect();
    let at = |t: u64| port.iter().find(|q| q.time_ps == t).unwrap();
    let utilisation = (at(to).tx_bytes - at(from).tx_bytes) as f64 * 8.0 / 10.0 / 100e6;
    let acked = |flow: u32, t: u64| acked_at(&trace, flow, t);
    let x: Vec<f64> = (0..2).map(|f| acked(f, to) - acked(f, from)).collect();
    let jain = jain(&x);
    let bdp = 100e6 / 8.0 * 0.010;
    let after_startup = port
        .iter()
        .filter(|q| q.time_ps >= 1_000_000_000_000)
        .map(|q| q.queue_bytes)
        .max()
        .unwrap() as f64;
    let overall = port.iter().map(|q| q.queue_bytes).max().unwrap() as f64;
    println!(
        "BBR: utilisation {utilisation:.4}, Jain {jain:.4}, largest queue {after_startup} B after Startup, {overall} B overall, drops {}",
        at(to).drops
    );
    assert!(utilisation >= 0.95, "{utilisation}");
    assert!(jain >= 0.95, "{jain}");
    assert_eq!(at(to).drops, 0);
    assert!(after_startup <= 1.1 * bdp + 6.0 * 1500.0, "{after_startup}");
    assert!(overall <= 2.885 * bdp, "{overall}");
}

/// One BBR flow alone: its bottleneck-bandwidth estimate (the max delivery rate over 10 round
/// trips, in wire bits) is within 5 % of the 100 Mb/s link in every sample after Startup.
#[test]
fn bbr_estimates_the_bottleneck_bandwidth_within_five_percent() {
    use netstep_core::units::SimTime;
    let s = scenario_file(
        BBR,
        &[
            "traffic.0.flows=[{ src = \"l0\", dst = \"r0\", size = \"1GB\" }]",
            "simulation.duration=\"5s\"",
        ],
    );
    let trace = sampled(&s, SimTime::from_ms(10));
    let estimates: Vec<f64> = trace
        .cc
        .iter()
        .filter(|c| c.time_ps >= 1_000_000_000_000)
        .map(|c| c.btl_bw_bps.expect("BBR samples BtlBw"))
        .collect();
    assert!(estimates.len() > 300);
    let worst = estimates
        .iter()
        .map(|e| (e - 100e6).abs() / 100e6)
        .fold(0.0, f64::max);
    println!(
        "BBR alone: BtlBw {:.2}-{:.2} Mb/s, worst error {worst:.4}",
        estimates.iter().cloned().fold(f64::MAX, f64::min) / 1e6,
        estimates.iter().cloned().fold(0.0, f64::max) / 1e6
    );
    assert!(worst <= 0.05, "{worst}");
}

#[test]
fn bbr_is_exact_and_thread_invariant() {
    let s = scenario_file(
        BBR,
        &[
            "traffic.0.flows.0.size=\"3MB\"",
            "traffic.0.flows.1.size=\"3MB\"",
            "topology.fabric_links.buffer=\"30KB\"",
        ],
    );
    let reference = exact_on_1_and_4_threads(&s, "bbr");
    assert!(reference.flows.iter().all(|f| f.end.is_some()));
}

const DCQCN: &str = "scenarios/transports/dcqcn.toml";

/// DCQCN (Zhu et al. 2015, the HPCC simulator's reaction point): a flow running alone at the
/// 10 Gb/s line rate is joined by a second at 5 ms. Converged means the two flows' rates,
/// measured as acknowledged bytes per 5 ms window (the sending rates themselves saw-tooth
/// between cuts and increases), within 10 % of each other; they are in every window from
/// 5 ms after the join (10 ms) to the end (59 ms), and the bottleneck is used at >= 95 % with
/// Jain fairness >= 0.95 over the same span, without a drop (ECN marking by RED, Kmin 5 KB,
/// Kmax 200 KB, Pmax 1 %).
#[test]
fn dcqcn_flows_converge_to_equal_rates() {
    use netstep_core::units::SimTime;
    let s = scenario_file(DCQCN, &[]);
    let net = s.model.net.clone();
    let bottleneck = net.port_id(4, net.port_towards(4, 5).unwrap());
    let trace = sampled(&s, SimTime::from_ms(1));
    let (from, to) = (10_000_000_000u64, 59_000_000_000u64);
    let rate = |flow: u32, t: u64| {
        trace
            .cc
            .iter()
            .find(|c| c.flow == flow && c.time_ps == t)
            .and_then(|c| c.pacing_rate_bps)
            .unwrap()
    };
    let mut instantaneous = 0.0f64;
    for t in (from..=to).step_by(1_000_000_000) {
        let (a, b) = (rate(0, t), rate(1, t));
        instantaneous = instantaneous.max((a - b).abs() / a.max(b));
    }
    let port_at = |t: u64| queue_at(&trace, bottleneck, t);
    let utilisation = (port_at(to).tx_bytes - port_at(from).tx_bytes) as f64 * 8.0
        / ((to - from) as f64 * 1e-12)
        / 10e9;
    let acked = |flow: u32, t: u64| acked_at(&trace, flow, t);
    let mut worst = 0.0f64;
    for start in (from..to - 4_000_000_000).step_by(5_000_000_000) {
        let end = start + 5_000_000_000;
        let (a, b) = (
            acked(0, end) - acked(0, start),
            acked(1, end) - acked(1, start),
        );
        worst = worst.max((a - b).abs() / a.max(b));
    }
    let x: Vec<f64> = (0..2).map(|f| acked(f, to) - acked(f, from)).collect();
    let jain = jain(&x);
    println!(
        "DCQCN: largest gap per 5 ms window {worst:.3} (sending rates, 1 ms samples: {instantaneous:.3}), utilisation {utilisation:.4}, Jain {jain:.4}, drops {}",
        port_at(to).drops
    );
    assert!(worst <= 0.10, "{worst}");
    assert!(utilisation >= 0.95, "{utilisation}");
    assert!(jain >= 0.95, "{jain}");
    assert_eq!(port_at(to).drops, 0);
}

/// DCQCN with PFC: eight senders into one receiver through a 150 KB buffer. Lossless (PFC on
/// the data class) nothing is dropped and every flow completes; lossy, the line-rate start
/// overflows the buffer and go-back-N recovers the losses.
#[test]
fn dcqcn_with_pfc_drops_nothing_in_an_incast() {
    let incast = |pfc: bool| {
        let flows = (0..8)
            .map(|i| format!("{{ src = \"l{i}\", dst = \"r0\", size = \"2MB\" }}"))
            .collect::<Vec<_>>()
            .join(", ");
        let mut sets = vec![
            "topology.left=8".to_string(),
            "topology.right=1".to_string(),
            "topology.fabric_links.buffer=\"150KB\"".to_string(),
            "topology.fabric_links.aqm={ kind = \"red\", min = \"5KB\", max = \"100KB\", max_p = 0.01, weight = 1, ecn = true }".to_string(),
            format!("traffic.0.flows=[{flows}]"),
            "simulation.duration=\"200ms\"".to_string(),
        ];
        if pfc {
            sets.push(
                "switch.pfc={ classes = [0], xoff = \"60KB\", xon = \"30KB\", headroom = \"40KB\" }"
                    .to_string(),
            );
        }
        let refs: Vec<&str> = sets.iter().map(String::as_str).collect();
        let s = scenario_file(DCQCN, &refs);
        run_window(&s, 1, WindowMode::Exact)
    };
    let lossless = incast(true);
    println!(
        "PFC: drops {}, completed {}",
        lossless.stats.drops,
        lossless.flows.iter().filter(|f| f.end.is_some()).count()
    );
    assert_eq!(lossless.stats.drops, 0);
    assert!(lossless.flows.iter().all(|f| f.end.is_some()));
    let lossy = incast(false);
    println!(
        "no PFC: drops {}, completed {}",
        lossy.stats.drops,
        lossy.flows.iter().filter(|f| f.end.is_some()).count()
    );
    assert!(lossy.stats.drops > 0);
    assert!(
        lossy.flows.iter().all(|f| f.end.is_some()),
        "go-back-N recovers"
    );
}

#[test]
fn dcqcn_is_exact_and_thread_invariant() {
    let s = scenario_file(
        DCQCN,
        &[
            "traffic.0.flows.0.size=\"2MB\"",
            "traffic.0.flows.1.size=\"2MB\"",
            "traffic.0.flows.1.start=\"100us\"",
            "topology.fabric_links.buffer=\"60KB\"",
            "topology.fabric_links.aqm={ kind = \"red\", min = \"5KB\", max = \"50KB\", max_p = 0.01, weight = 1, ecn = true }",
        ],
    );
    let reference = exact_on_1_and_4_threads(&s, "dcqcn");
    assert!(reference.flows.iter().all(|f| f.end.is_some()));
    assert!(reference.stats.drops > 0, "go-back-N exercised");
}

/// TIMELY (Mittal et al. 2015, the HPCC simulator's version) on the DCQCN dumbbell: alone,
/// the first flow's RTT stays below `t_low` (50 us) and it sends at the 10 Gb/s line rate;
/// when the second flow joins at 5 ms the queue, hence the RTT, rises, the RTT gradient turns
/// positive, and both flows cut their rates below half the line rate within a millisecond.
/// Over 10-59 ms TIMELY keeps oscillating (it has no single fixed point; the HPCC paper shows
/// the same): measured shares and utilisation are printed and the flows' throughputs checked
/// for fairness (Jain >= 0.95).
#[test]
fn timely_cuts_its_rate_when_the_rtt_gradient_rises() {
    use netstep_core::units::SimTime;
    let s = scenario_file(DCQCN, &["transport.cc=\"timely\""]);
    let net = s.model.net.clone();
    let bottleneck = net.port_id(4, net.port_towards(4, 5).unwrap());
    let trace = sampled(&s, SimTime::from_ms(1));
    let at = |flow: u32, ms: u64| {
        trace
            .cc
            .iter()
            .find(|c| c.flow == flow && c.time_ps == ms * 1_000_000_000)
            .unwrap()
    };
    let rate = |flow: u32, ms: u64| at(flow, ms).pacing_rate_bps.unwrap();
    assert!(rate(0, 4) >= 9.99e9, "alone at line rate: {}", rate(0, 4));
    assert!(
        rate(0, 6) < 5e9 && rate(1, 6) < 5e9,
        "{} {}",
        rate(0, 6),
        rate(1, 6)
    );
    let port_at = |ms: u64| {
        trace
            .samples
            .iter()
            .find(|q| q.port == bottleneck && q.time_ps == ms * 1_000_000_000)
            .unwrap()
    };
    let utilisation = (port_at(59).tx_bytes - port_at(10).tx_bytes) as f64 * 8.0 / 0.049 / 10e9;
    let x: Vec<f64> = (0..2)
        .map(|f| (at(f, 59).acked - at(f, 10).acked) as f64)
        .collect();
    let jain = jain(&x);
    println!(
        "TIMELY: at 4 ms {:.2} Gb/s, at 6 ms {:.2} / {:.2} Gb/s; over 10-59 ms utilisation {utilisation:.3}, Jain {jain:.4}",
        rate(0, 4) / 1e9,
        rate(0, 6) / 1e9,
        rate(1, 6) / 1e9
    );
    assert!(jain >= 0.95, "{jain}");
}

#[test]
fn timely_is_exact_and_thread_invariant() {
    let s = scenario_file(
        DCQCN,
        &[
            "transport.cc=\"timely\"",
            "traffic.0.flows.0.size=\"2MB\"",
            "traffic.0.flows.1.size=\"2MB\"",
            "traffic.0.flows.1.start=\"100us\"",
        ],
    );
    let reference = exact_on_1_and_4_threads(&s, "timely");
    assert!(reference.flows.iter().all(|f| f.end.is_some()));
}

/// RDMA loss recovery on a lossy link (0.2 % of packets lost on the wire between the
/// switches, no congestion: one flow, no marking): go-back-N resends everything after each
/// hole, selective repeat only the holes. Both deliver the flow; selective repeat resends at
/// least one packet per data packet lost on the forward link (each hole costs one) and far
/// fewer than go-back-N.
#[test]
fn rdma_selective_repeat_resends_only_the_holes() {
    let run = |recovery: &str| {
        let s = scenario_file(
            DCQCN,
            &[
                "traffic.0.flows=[{ src = \"l0\", dst = \"r0\", size = \"5MB\" }]",
                "topology.fabric_links.loss=0.002",
                &format!("transport.recovery=\"{recovery}\""),
            ],
        );
        let net = s.model.net.clone();
        let forward = net.port_id(4, net.port_towards(4, 5).unwrap());
        (run_window(&s, 1, WindowMode::Exact), forward)
    };
    let (gbn, _) = run("go_back_n");
    let (sr, forward) = run("selective_repeat");
    let lost = sr.ports.iter().find(|p| p.port == forward).unwrap().lost;
    println!(
        "go-back-N: {} resent; selective repeat: {} resent for {lost} lost",
        gbn.flows.get(0).retransmits,
        sr.flows.get(0).retransmits
    );
    assert!(gbn.flows.get(0).end.is_some() && sr.flows.get(0).end.is_some());
    assert!(lost > 0);
    assert!(sr.flows.get(0).retransmits >= lost);
    assert!(sr.flows.get(0).retransmits * 5 < gbn.flows.get(0).retransmits);
    assert!(sr.flows.get(0).end <= gbn.flows.get(0).end);
}

#[test]
fn rdma_selective_repeat_is_exact_and_thread_invariant() {
    let s = scenario_file(
        DCQCN,
        &[
            "traffic.0.flows.0.size=\"2MB\"",
            "traffic.0.flows.1.size=\"2MB\"",
            "traffic.0.flows.1.start=\"100us\"",
            "topology.fabric_links.loss=0.002",
            "transport.recovery=\"selective_repeat\"",
        ],
    );
    let reference = exact_on_1_and_4_threads(&s, "sr");
    assert!(reference.flows.iter().all(|f| f.end.is_some()));
    assert!(reference.flows.iter().any(|f| f.retransmits > 0));
}

const HPCC: &str = "scenarios/transports/hpcc.toml";

/// Over `from..=to` ps at the HPCC dumbbell's bottleneck (sl -> sr), from 100 us samples:
/// (utilisation, standard deviation of the 1 ms utilisations, p99 of the sampled queue in
/// bytes, drops at the end, the bottleneck's bandwidth-delay product in bytes).
struct HpccRun {
    trace: netstep_core::engine::trace::MemoryTrace,
    utilisation: f64,
    per_ms_std: f64,
    queue_p99: u64,
    drops: u64,
    bdp: f64,
}

fn hpcc_run(overrides: &[&str], from: u64, to: u64) -> HpccRun {
    use netstep_core::units::SimTime;
    let s = scenario_file(HPCC, overrides);
    let net = s.model.net.clone();
    let bottleneck = net.port_id(4, net.port_towards(4, 5).unwrap());
    let base_rtt = netstep_core::flow::base_rtt(&s.model.net, &s.model.flows, 0).unwrap();
    let trace = sampled(&s, SimTime::from_us(100));
    let at = |t: u64| queue_at(&trace, bottleneck, t);
    let util = |a: u64, b: u64| {
        (at(b).tx_bytes - at(a).tx_bytes) as f64 * 8.0 / ((b - a) as f64 * 1e-12) / 10e9
    };
    let utilisation = util(from, to);
    let per_ms: Vec<f64> = (from..to)
        .step_by(1_000_000_000)
        .map(|t| util(t, t + 1_000_000_000))
        .collect();
    let mean = per_ms.iter().sum::<f64>() / per_ms.len() as f64;
    let per_ms_std =
        (per_ms.iter().map(|u| (u - mean).powi(2)).sum::<f64>() / (per_ms.len() - 1) as f64).sqrt();
    let mut queue: Vec<u64> = (from..=to)
        .step_by(100_000_000)
        .map(|t| at(t).queue_bytes)
        .collect();
    queue.sort_unstable();
    let queue_p99 = queue[(queue.len() * 99).div_ceil(100) - 1];
    let drops = at(to).drops;
    HpccRun {
        utilisation,
        per_ms_std,
        queue_p99,
        drops,
        bdp: 10e9 * base_rtt.as_secs_f64() / 8.0,
        trace,
    }
}

/// HPCC (Li et al. 2019) on its example dumbbell: the second flow joins at 5 ms; from 6 ms on
/// every 100 us sample of the two sending rates is within 5 % (they converge within a
/// millisecond, about a hundred base RTTs); over 10-29 ms the bottleneck runs at HPCC's
/// target utilisation eta with the queue near zero (p99 of the 100 us samples below one BDP),
/// the flows share it fairly and nothing is dropped.
///
/// The utilisation check: HPCC's fixed point is U = eta, and with an empty queue U is the
/// link's utilisation, so the 19 ms average must sit within the band of its own 1 ms
/// fluctuations (4 standard deviations of the 1 ms utilisations, measured in the same run).
#[test]
fn hpcc_flows_converge_at_eta_with_the_queue_near_empty() {
    let (from, to) = (10_000_000_000u64, 29_000_000_000u64);
    let r = hpcc_run(&[], from, to);
    let rate = |flow: u32, t: u64| {
        r.trace
            .cc
            .iter()
            .find(|c| c.flow == flow && c.time_ps == t)
            .and_then(|c| c.pacing_rate_bps)
            .unwrap()
    };
    let mut gap = 0.0f64;
    // From 2 ms after the join (HPCC's U starts at 1, as in the HPCC simulator, so the
    // newcomer's first updates are multiplicative).
    for t in (7_000_000_000u64..=to).step_by(100_000_000) {
        let (a, b) = (rate(0, t), rate(1, t));
        gap = gap.max((a - b).abs() / a.max(b));
    }
    let x: Vec<f64> = (0..2)
        .map(|f| acked_at(&r.trace, f, to) - acked_at(&r.trace, f, from))
        .collect();
    let jain = jain(&x);
    println!(
        "HPCC eta 0.95: utilisation {:.4} (1 ms std {:.5}), queue p99 {} B (BDP {:.0} B), rate gap {gap:.4}, Jain {jain:.4}, drops {}",
        r.utilisation, r.per_ms_std, r.queue_p99, r.bdp, r.drops
    );
    assert!(gap <= 0.05, "{gap}");
    assert!(
        (r.utilisation - 0.95).abs() <= 4.0 * r.per_ms_std,
        "{} vs eta 0.95 (1 ms std {})",
        r.utilisation,
        r.per_ms_std
    );
    assert!((r.queue_p99 as f64) < r.bdp, "{} vs {}", r.queue_p99, r.bdp);
    assert!(jain >= 0.95, "{jain}");
    assert_eq!(r.drops, 0);
}

/// The issue's bar, utilisation >= 95 % with the queue near zero, with eta = 0.98 (eta is the
/// operator's headroom choice; the paper's default 0.95 sits exactly on the bar, see above).
#[test]
fn hpcc_with_eta_098_fills_95_percent_with_the_queue_near_empty() {
    let r = hpcc_run(
        &["transport.eta=0.98"],
        10_000_000_000u64,
        29_000_000_000u64,
    );
    println!(
        "HPCC eta 0.98: utilisation {:.4}, queue p99 {} B (BDP {:.0} B), drops {}",
        r.utilisation, r.queue_p99, r.bdp, r.drops
    );
    assert!(r.utilisation >= 0.95, "{}", r.utilisation);
    assert!((r.queue_p99 as f64) < r.bdp, "{} vs {}", r.queue_p99, r.bdp);
    assert_eq!(r.drops, 0);
}

/// The telemetry names the slowest hop: with 10 Gb/s host links and a 2.5 Gb/s link between
/// the switches, a lone HPCC flow settles at eta x 2.5 Gb/s (its records from the host-side
/// hops say "idle 10 Gb/s link", the bottleneck's say "full"), not at a fraction of 10 Gb/s.
#[test]
fn hpcc_settles_at_eta_of_the_slowest_hop() {
    use netstep_core::units::SimTime;
    let s = scenario_file(
        HPCC,
        &[
            "topology.fabric_links.rate=\"2.5Gbps\"",
            "traffic.0.flows=[{ src = \"l0\", dst = \"r0\", size = \"100MB\" }]",
            "simulation.duration=\"10ms\"",
        ],
    );
    let trace = sampled(&s, SimTime::from_ms(1));
    let rate = |ms: u64| {
        trace
            .cc
            .iter()
            .find(|c| c.flow == 0 && c.time_ps == ms * 1_000_000_000)
            .and_then(|c| c.pacing_rate_bps)
            .unwrap()
    };
    let rates: Vec<f64> = (2..=9).map(rate).collect();
    println!("HPCC alone behind 2.5 Gb/s: rates {rates:?}");
    for r in rates {
        // eta x 2.5 Gb/s, plus at most one additive step (line rate / 2500 = 4 Mb/s).
        assert!((r - 0.95 * 2.5e9).abs() <= 0.01 * 2.5e9, "{r}");
    }
}

/// HPCC with PFC: eight senders into one receiver through a 30 KB buffer. All start at line
/// rate with a window of one BDP, so the first round trip overflows the buffer without PFC;
/// with PFC on the data class nothing is dropped and every flow completes.
#[test]
fn hpcc_with_pfc_drops_nothing_in_an_incast() {
    let incast = |pfc: bool| {
        let flows = (0..8)
            .map(|i| format!("{{ src = \"l{i}\", dst = \"r0\", size = \"1MB\" }}"))
            .collect::<Vec<_>>()
            .join(", ");
        let mut sets = vec![
            "topology.left=8".to_string(),
            "topology.right=1".to_string(),
            "topology.fabric_links.buffer=\"30KB\"".to_string(),
            format!("traffic.0.flows=[{flows}]"),
            "simulation.duration=\"100ms\"".to_string(),
        ];
        if pfc {
            sets.push(
                "switch.pfc={ classes = [0], xoff = \"10KB\", xon = \"5KB\", headroom = \"15KB\" }"
                    .to_string(),
            );
        }
        let refs: Vec<&str> = sets.iter().map(String::as_str).collect();
        let s = scenario_file(HPCC, &refs);
        run_window(&s, 1, WindowMode::Exact)
    };
    let lossless = incast(true);
    let lossy = incast(false);
    println!(
        "HPCC incast: PFC drops {}, without PFC {}",
        lossless.stats.drops, lossy.stats.drops
    );
    assert_eq!(lossless.stats.drops, 0);
    assert!(lossless.flows.iter().all(|f| f.end.is_some()));
    assert!(
        lossy.stats.drops > 0,
        "the buffer is small enough to overflow"
    );
    assert!(
        lossy.flows.iter().all(|f| f.end.is_some()),
        "go-back-N recovers"
    );
}

/// Exactness with telemetry: stacks move between LPs with their packets (and are discarded
/// with the packets lost on a lossy link), so the window engine on 1 and 4 threads must
/// reproduce the reference engine exactly: on the dumbbell with loss, and on a FatTree-4
/// where telemetry crosses five switches and every chunk boundary.
#[test]
fn hpcc_is_exact_and_thread_invariant() {
    let s = scenario_file(
        HPCC,
        &[
            "traffic.0.flows.0.size=\"2MB\"",
            "traffic.0.flows.1.size=\"2MB\"",
            "traffic.0.flows.1.start=\"100us\"",
            "topology.fabric_links.loss=0.002",
        ],
    );
    let reference = exact_on_1_and_4_threads(&s, "hpcc");
    assert!(reference.flows.iter().all(|f| f.end.is_some()));
    assert!(reference.flows.iter().any(|f| f.retransmits > 0));
    let fat = scenario(
        r#"
        [simulation]
        seed = 3
        [topology]
        kind = "fat_tree"
        k = 4
        [topology.links]
        rate = "10Gbps"
        delay = "1us"
        buffer = "100KB"
        [transport]
        kind = "rdma"
        cc = "hpcc"
        [[traffic]]
        kind = "poisson"
        load = 0.6
        cdf = "../datasets/websearch.toml"
        duration = "5ms"
        "#,
        &[],
    );
    let reference = exact_on_1_and_4_threads(&fat, "ft");
    assert!(reference.flows.len() > 20);
}

#[test]
fn hpcc_settings_are_checked() {
    let e = load_error(HPCC, &["transport.eta=1.5"]);
    assert!(e.contains("eta") && e.contains("(0, 1]"), "{e}");
    let e = load_error(HPCC, &["transport.cc=\"dcqcn\"", "transport.eta=0.9"]);
    assert!(e.contains("eta") && e.contains("hpcc"), "{e}");
    let e = load_error(HPCC, &["transport.base_rtt=\"0us\""]);
    assert!(e.contains("base_rtt") && e.contains("positive"), "{e}");
    let e = load_error(HPCC, &["transport.rate_hai=\"1Gbps\""]);
    assert!(e.contains("rate_hai"), "{e}");
    // A flow across more switches than a telemetry stack holds is refused with its ends.
    let e = load_error(
        "scenarios/elements/torus.toml",
        &[
            "topology.dims=[20, 2]",
            "traffic.0.transport={ kind = \"rdma\", cc = \"hpcc\" }",
            "traffic.0.flows=[{ src = \"h0\", dst = \"h10\", packets = 10 }]",
        ],
    );
    assert!(
        e.contains("h0") && e.contains("h10") && e.contains("11 switches"),
        "{e}"
    );
}

/// Coalesced RDMA ACKs (`ack_every`, the HPCC simulator's ACK interval): a lone 1,001-packet
/// flow gets 1,001 ACKs with per-packet acknowledgement and ceil(1001 / 4) = 251 with
/// `ack_every = 4` (every fourth packet and the last), counted as the receiver NIC's
/// transmissions; the flow completes either way and the run is exact on 1 and 4 threads.
/// (The ECN echo of coalesced ACKs: `transport::rdma` unit tests.)
#[test]
fn rdma_coalesced_acks_acknowledge_every_nth_packet() {
    let run = |every: u32| {
        let s = scenario_file(
            DCQCN,
            &[
                "traffic.0.flows=[{ src = \"l0\", dst = \"r0\", size = \"1001000B\" }]",
                &format!("transport.ack_every={every}"),
            ],
        );
        let net = s.model.net.clone();
        let receiver_nic = net.port_id(2, 0);
        let out = run_window(&s, 1, WindowMode::Exact);
        let acks = out
            .ports
            .iter()
            .find(|p| p.port == receiver_nic)
            .unwrap()
            .tx_packets;
        (out, acks, s)
    };
    let (one, acks_one, _) = run(1);
    let (four, acks_four, s) = run(4);
    println!("ACKs: {acks_one} per packet, {acks_four} with ack_every = 4");
    assert_eq!(acks_one, 1001);
    assert_eq!(acks_four, 251);
    assert!(one.flows.get(0).end.is_some() && four.flows.get(0).end.is_some());
    assert_same_simulation(
        &exact_on_1_and_4_threads(&s, "coalesced"),
        &four,
        "coalesced",
    );
    let e = load_error(DCQCN, &["transport.ack_every=0"]);
    assert!(e.contains("ack_every") && e.contains("at least 1"), "{e}");
}

/// An RDMA (DCQCN) dumbbell, l0 on the left, r0 and r1 on the right, hop records traced;
/// `nic` is the `[nic]` table, `flows` the flow list's entries.
fn rdma_dumbbell(nic: &str, flows: &str) -> netstep_scenario::Scenario {
    let text = format!(
        r#"
[topology]
kind = "dumbbell"
left = 1
right = 2
[topology.links]
rate = "10Gbps"
delay = "1us"
buffer = "1MB"
[nic]
{nic}
[transport]
kind = "rdma"
cc = "dcqcn"
[trace]
tables = ["packet_hops"]
[[traffic]]
kind = "flows"
flows = [{flows}]
"#
    );
    scenario(&text, &[])
}

/// Host l0 sends two RDMA flows (to r0 and r1) and r0 sends one back to l0, so l0 and r0
/// each send data and ACKs; `nic` is the `[nic]` table.
fn two_way_rdma(nic: &str) -> netstep_scenario::Scenario {
    rdma_dumbbell(
        nic,
        r#"
  { src = "l0", dst = "r0", size = "200KB" },
  { src = "l0", dst = "r1", size = "200KB" },
  { src = "r0", dst = "l0", size = "200KB" },
"#,
    )
}

/// `[nic] scheduler = "pull"` (the HPCC simulator's NIC): nothing waits in a host's egress
/// queue; an ACK waits at most for the packet on the wire (feedback goes first); two
/// backlogged queue pairs at line rate take strict turns. The default NIC (a queue of up to
/// two packets per flow) does none of these, so the test tells the two apart.
#[test]
fn pulling_nic_sends_feedback_first_and_takes_turns() {
    let wire = |bytes: u64| bytes * 8 * 100; // ps at 10 Gb/s
    let mut s = two_way_rdma("scheduler = \"pull\"");
    let (out, trace) = traced(&mut s);
    assert!(out.flows.iter().all(|f| f.end.is_some()), "{:?}", out.flows);
    let first_hops: Vec<_> = trace.hops.iter().filter(|h| h.hop == 0).collect();
    assert!(first_hops.len() > 600);
    for h in &first_hops {
        let wait = h.dequeue_ps.unwrap() - h.arrive_ps;
        assert_eq!(h.queue_packets, 0, "nothing queued at a pulling NIC: {h:?}");
        if h.kind != netstep_core::packet::PacketKind::Data {
            assert!(wait < wire(1100), "feedback waits for the wire only: {h:?}");
        } else {
            assert_eq!(wait, 0, "a pulled packet is built as it starts: {h:?}");
        }
    }
    // l0's data departures alternate between its two flows while both have data.
    let mut l0: Vec<_> = first_hops
        .iter()
        .filter(|h| h.kind == netstep_core::packet::PacketKind::Data && h.flow < 2)
        .collect();
    l0.sort_by_key(|h| h.dequeue_ps);
    let both = 2 * l0
        .iter()
        .filter(|h| h.flow == 0)
        .count()
        .min(l0.iter().filter(|h| h.flow == 1).count());
    assert!(both > 300);
    for pair in l0[..both].windows(2) {
        assert_ne!(pair[0].flow, pair[1].flow, "turns: {:?}", pair);
    }

    // The default NIC queues data ahead of ACKs.
    let mut s = two_way_rdma("");
    let (_, trace) = traced(&mut s);
    let late_feedback = trace
        .hops
        .iter()
        .filter(|h| h.hop == 0 && h.kind != netstep_core::packet::PacketKind::Data)
        .filter(|h| h.dequeue_ps.unwrap() - h.arrive_ps >= wire(1100))
        .count();
    assert!(
        late_feedback > 10,
        "the default NIC delays ACKs behind data"
    );
}

/// A pulling NIC whose link is busy wakes for a queue pair that may send at once: here flow
/// 1 starts at 0 while flow 0's only packet is on the wire, and sends as that packet ends,
/// not a round trip later when flow 0's ACK comes back.
#[test]
fn pulling_nic_wakes_for_a_flow_that_starts_while_the_link_is_busy() {
    let mut s = rdma_dumbbell(
        "scheduler = \"pull\"",
        r#"
  { src = "l0", dst = "r0", size = "1000B" },
  { src = "l0", dst = "r1", size = "20KB" },
"#,
    );
    let (out, trace) = traced(&mut s);
    assert!(out.flows.iter().all(|f| f.end.is_some()), "{:?}", out.flows);
    let first = |flow: u32| {
        trace
            .hops
            .iter()
            .filter(|h| h.hop == 0 && h.flow == flow)
            .map(|h| h.dequeue_ps.unwrap())
            .min()
            .unwrap()
    };
    // Flow 0's packet leaves at 0; flow 1's first follows it on the wire (one packet's
    // serialization, under 1.3 us at 10 Gb/s), far before an ACK could return (6 us of
    // link delay alone).
    assert_eq!(first(0), 0);
    assert!(
        first(1) > 0 && first(1) < 1_300_000,
        "flow 1 first sent at {} ps",
        first(1)
    );
}

#[test]
fn pulling_nic_refuses_flows_it_cannot_pull() {
    let text = r#"
[topology]
kind = "dumbbell"
left = 1
right = 1
[nic]
scheduler = "pull"
[[traffic]]
kind = "flows"
flows = [{ src = "l0", dst = "r0", size = "10KB" }]
"#;
    let err = text_error(text);
    for part in ["nic.scheduler", "rdma", "flow 0", "\"l0\"", "tcp"] {
        assert!(err.contains(part), "{part:?} in {err}");
    }
}
