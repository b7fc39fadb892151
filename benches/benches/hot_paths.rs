//! Criterion micro-benchmarks of the hot paths: the FIFO queue and the class schedulers, forwarding (routing + ECMP
//! hash, serialization), an LP's event queue, one window step of the engine, and the data-layout question behind ARCHITECTURE.md
//! (per-port state as bevy components vs a dense Vec, touched through a sparse worklist).

use std::hint::black_box;

use bevy_ecs::prelude::*;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use netstep_benches::load_scenario;
use netstep_core::engine::window::WindowEngine;
use netstep_core::engine::{EngineConfig, WindowMode};
use netstep_core::network::{Network, ecmp_hash};
use netstep_core::packet::Ecn;
use netstep_core::packet::{Packet, PacketKind};
use netstep_core::queue::{
    Admission, AqmSpec, Entry, FifoQueue, Queue, QueueCtx, RedSpec, SchedulerSpec,
};
use netstep_core::rng::LazyStream;
use netstep_core::shaping::{TokenBucket, TokenBucketSpec, TrTcm, TrTcmSpec};
use netstep_core::topology::{FatTree, LinkClass, fat_tree};
use netstep_core::units::{BitsPerSec, BufferSize, Bytes, SimTime};

fn packet(n: u32) -> Packet {
    Packet::new(PacketKind::Data, n % 64, n, n, 0, 1500)
}

fn entry(n: u32) -> Entry {
    Entry {
        packet: packet(n),
        arrived_ps: n as u64,
        ahead_bytes: 0,
        ahead_packets: 0,
        traced: false,
        pfc: false,
        marked: false,
    }
}

fn queue(c: &mut Criterion) {
    let mut group = c.benchmark_group("queue");
    group.throughput(Throughput::Elements(1));
    group.bench_function("fifo_enqueue_dequeue", |b| {
        let mut q = FifoQueue::default();
        let mut slot = None;
        let mut ctx = port_ctx(LazyStream::new(&mut slot, 1, 0, 0));
        for n in 0..32 {
            assert_eq!(q.enqueue(entry(n), &mut ctx), Admission::Accepted);
        }
        let mut n = 0;
        b.iter(|| {
            black_box(q.enqueue(black_box(entry(n)), &mut ctx));
            n = n.wrapping_add(1);
            black_box(q.dequeue(&mut ctx))
        })
    });
    // Each class scheduler with 32 packets waiting over three classes, one in, one out.
    let mut weights = [1u16; 8];
    weights[1] = 2;
    weights[2] = 3;
    for spec in [
        SchedulerSpec::StrictPriority,
        SchedulerSpec::Drr {
            quantum: 1500,
            weights,
        },
        SchedulerSpec::Wrr { weights },
        SchedulerSpec::Wfq { weights },
        SchedulerSpec::VirtualClock { weights },
        SchedulerSpec::FairQueueing,
    ] {
        group.bench_function(format!("{}_enqueue_dequeue", spec.name()), |b| {
            let mut q = Queue::new(&spec);
            let mut slot = None;
            let mut ctx = port_ctx(LazyStream::new(&mut slot, 1, 0, 0));
            // Three classes (and three flows, for fair queueing); time advances 1.2 us (one
            // 1500 B packet at 10 Gb/s) per step.
            let classed = |n: u32| {
                let mut e = entry(n);
                e.packet.set_class((n % 3) as u8);
                e.packet.flow = n % 3;
                e
            };
            for n in 0..32 {
                assert_eq!(q.enqueue(classed(n), &mut ctx), Admission::Accepted);
            }
            let mut n = 32;
            b.iter(|| {
                ctx.now = SimTime(ctx.now.0 + 1_200_000);
                black_box(q.enqueue(black_box(classed(n)), &mut ctx));
                n = n.wrapping_add(1);
                black_box(q.dequeue(&mut ctx))
            })
        });
    }
    // Each AQM on a FIFO with 32 ECN-capable packets waiting (RED and step mark above their
    // thresholds: every packet takes the marking path), one in, one out.
    for (name, aqm) in [
        (
            "red",
            AqmSpec::Red(RedSpec {
                min_bytes: 3_000,
                max_bytes: 300_000,
                max_p_ppm: 100_000,
                weight_ppm: 2_000,
                ecn: true,
                spread: true,
                at_dequeue: false,
            }),
        ),
        (
            "red_at_dequeue",
            AqmSpec::Red(RedSpec {
                min_bytes: 3_000,
                max_bytes: 300_000,
                max_p_ppm: 100_000,
                weight_ppm: 1_000_000,
                ecn: true,
                spread: false,
                at_dequeue: true,
            }),
        ),
        (
            "step",
            AqmSpec::Step {
                k_bytes: 3_000,
                at_dequeue: false,
            },
        ),
        (
            "step_at_dequeue",
            AqmSpec::Step {
                k_bytes: 3_000,
                at_dequeue: true,
            },
        ),
        ("decbit", AqmSpec::DecBit),
    ] {
        group.bench_function(format!("{name}_enqueue_dequeue"), |b| {
            let mut q = Queue::for_port(&SchedulerSpec::Fifo, &aqm);
            let mut slot = None;
            let mut ctx = port_ctx(LazyStream::new(&mut slot, 1, 0, 0));
            let ect = |n: u32| {
                let mut e = entry(n);
                e.packet.ecn = Ecn::Ect0;
                e
            };
            for n in 0..32 {
                q.enqueue(ect(n), &mut ctx);
            }
            let mut n = 32;
            b.iter(|| {
                ctx.now = SimTime(ctx.now.0 + 1_200_000);
                black_box(q.enqueue(black_box(ect(n)), &mut ctx));
                n = n.wrapping_add(1);
                black_box(q.dequeue(&mut ctx))
            })
        });
    }
    group.finish();
}

/// A 10 Gb/s port with 1 MB of buffer at time zero.
fn port_ctx(rng: LazyStream<'_>) -> QueueCtx<'_> {
    QueueCtx {
        now: SimTime::ZERO,
        limit: BufferSize::Bytes(Bytes(1_000_000)),
        rate: BitsPerSec(10_000_000_000),
        rng,
    }
}

fn shaping(c: &mut Criterion) {
    let mut group = c.benchmark_group("shaping");
    group.throughput(Throughput::Elements(1));
    // A token bucket at 1 Gb/s fed 1500 B packets every 12 us: each conforms when it asks.
    let tb = TokenBucketSpec {
        rate: BitsPerSec(1_000_000_000),
        burst: Bytes(15_000),
    };
    group.bench_function("token_bucket_ready_take", |b| {
        let mut bucket = TokenBucket::new(&tb);
        let mut now = SimTime::ZERO;
        b.iter(|| {
            now = SimTime(now.0 + 12_000_000);
            let at = bucket.ready_at(&tb, black_box(now), 1500);
            bucket.take(&tb, at, 1500);
            black_box(at)
        })
    });
    // trTCM metering a 4 Gb/s stream against CIR 1 Gb/s, PIR 2 Gb/s (all three colors).
    let spec = TrTcmSpec {
        cir: BitsPerSec(1_000_000_000),
        cbs: Bytes(15_000),
        pir: BitsPerSec(2_000_000_000),
        pbs: Bytes(15_000),
    };
    group.bench_function("trtcm_meter", |b| {
        let mut meter = TrTcm::new(&spec);
        let mut now = SimTime::ZERO;
        b.iter(|| {
            now = SimTime(now.0 + 2_000_000);
            black_box(meter.meter(&spec, black_box(now), 1000))
        })
    });
    group.finish();
}

fn forwarding(c: &mut Criterion) {
    let class = LinkClass::new(
        BitsPerSec(100_000_000_000),
        SimTime::from_us(1),
        BufferSize::Packets(100),
    );
    let mut group = c.benchmark_group("forwarding");
    group.throughput(Throughput::Elements(1));
    for k in [16u32, 64] {
        let shape = FatTree {
            k,
            hosts_per_edge: k / 2,
        };
        let net = Network::compile(&fat_tree(shape, class, class)).unwrap();
        let hosts = shape.n_hosts();
        let switches: Vec<u32> = (hosts..shape.n_nodes()).collect();
        group.bench_with_input(BenchmarkId::new("fat_tree_route", k), &k, |b, _| {
            let mut i = 0u32;
            b.iter(|| {
                i = i.wrapping_add(1);
                let node = switches[(i as usize * 7919) % switches.len()];
                let dst = (i.wrapping_mul(2_654_435_761)) % hosts;
                black_box(net.route(node, dst, ecmp_hash(i, false, node)))
            })
        });
    }
    // Serialization at 2,880 Gb/s (SimAI's NVLink), 25 / 9 ps per byte: the rate's own
    // division and the port tables' reduced fraction, each time fed by the last result (a
    // chain, as a transmitter's next start depends on its last).
    let nvlink = LinkClass::new(
        BitsPerSec(2_880_000_000_000),
        SimTime::from_ns(25),
        BufferSize::Packets(100),
    );
    let net = Network::compile(&fat_tree(
        FatTree {
            k: 4,
            hosts_per_edge: 2,
        },
        nvlink,
        nvlink,
    ))
    .unwrap();
    group.bench_function("serialization_2880gbps/rate_division", |b| {
        // Opaque, as the rate read from a port's class is (no division by a constant).
        let rate = black_box(nvlink.rate);
        let mut last = 0u64;
        b.iter(|| {
            last = rate.serialization(Bytes(1_048 + (last & 1))).0;
            black_box(last)
        })
    });
    // What the port tables did before the fraction: the division, out of line.
    #[inline(never)]
    fn divide(rate: BitsPerSec, size: u32) -> SimTime {
        rate.serialization(Bytes(size as u64))
    }
    group.bench_function("serialization_2880gbps/division_out_of_line", |b| {
        let rate = black_box(nvlink.rate);
        let mut last = 0u64;
        b.iter(|| {
            last = divide(rate, 1_048 + (last & 1) as u32).0;
            black_box(last)
        })
    });
    group.bench_function("serialization_2880gbps/port_tables", |b| {
        let mut last = 0u64;
        b.iter(|| {
            last = net.serialization(0, 1_048 + (last & 1) as u32).0;
            black_box(last)
        })
    });
    group.finish();
}

fn window_step(c: &mut Criterion) {
    let mut group = c.benchmark_group("engine");
    group.sample_size(10);
    let scenario = load_scenario(
        "scenarios/days-baseline/fattree-k8-f64.toml",
        &["traffic.0.packets=20"],
    );
    let hops = WindowEngine::new(
        &scenario.model,
        EngineConfig {
            threads: 1,
            window: WindowMode::Exact,
            end: None,
        },
    )
    .unwrap()
    .run(|_| {})
    .expect("run")
    .stats
    .packet_hops;
    group.throughput(Throughput::Elements(hops));
    for threads in [1usize, 2] {
        group.bench_with_input(
            BenchmarkId::new("days_k8_f64_20pkts", threads),
            &threads,
            |b, &threads| {
                b.iter(|| {
                    let engine = WindowEngine::new(
                        &scenario.model,
                        EngineConfig {
                            threads,
                            window: WindowMode::Exact,
                            end: None,
                        },
                    )
                    .unwrap();
                    black_box(engine.run(|_| {}).expect("run").stats.packet_hops)
                })
            },
        );
    }
    group.finish();
}

/// Per-port transmitter state as the layout benchmark moves it.
#[derive(Component, Clone, Copy, Default)]
struct PortClock {
    busy_until: u64,
    tx_packets: u64,
    tx_bytes: u64,
}

fn layout(c: &mut Criterion) {
    let n_ports = 1 << 20;
    let active = 4096;
    let worklist: Vec<u32> = (0..active)
        .map(|i| ((i as u64 * 2_654_435_761) % n_ports as u64) as u32)
        .collect();
    let mut group = c.benchmark_group("layout_sparse_port_update");
    group.throughput(Throughput::Elements(active as u64));
    let mut dense = vec![PortClock::default(); n_ports];
    group.bench_function("vec_worklist", |b| {
        b.iter(|| {
            for &p in &worklist {
                let s = &mut dense[p as usize];
                s.busy_until += 1200;
                s.tx_packets += 1;
                s.tx_bytes += 1500;
            }
        })
    });
    let mut world = World::new();
    let entities: Vec<Entity> = world
        .spawn_batch((0..n_ports).map(|_| PortClock::default()))
        .collect();
    let targets: Vec<Entity> = worklist.iter().map(|&p| entities[p as usize]).collect();
    let mut query = world.query::<&mut PortClock>();
    group.bench_function("bevy_query_get_mut", |b| {
        b.iter(|| {
            for &e in &targets {
                let mut s = query.get_mut(&mut world, e).unwrap();
                let s = s.bypass_change_detection();
                s.busy_until += 1200;
                s.tx_packets += 1;
                s.tx_bytes += 1500;
            }
        })
    });
    group.finish();
}

/// An LP's event queue against the binary heap it replaced, with the sizes the Days baseline
/// sees (one to four pending events, new events mostly the latest, sometimes earlier than a
/// pending timer): per step, push two events and pop two.
fn lp_queue(c: &mut Criterion) {
    use netstep_core::engine::event::{Event, EventKey, EventKind, Phase};
    use netstep_core::engine::lp_queue::LpQueue;
    use std::collections::BinaryHeap;
    let mut group = c.benchmark_group("lp_queue");
    group.throughput(Throughput::Elements(2));
    let event = |t: u64, n: u32| Event {
        key: EventKey::new(SimTime(t), Phase::Arrive, SimTime(t / 2)),
        kind: EventKind::Arrive(packet(n)),
    };
    // One step: push two events (before the pending timer), pop two.
    fn push2_pop2<Q>(
        b: &mut criterion::Bencher,
        mut q: Q,
        event: impl Fn(u64, u32) -> Event,
        push: impl Fn(&mut Q, Event),
        pop: impl Fn(&mut Q) -> Option<Event>,
    ) {
        // A pending timer far ahead; the arrivals come before it.
        push(&mut q, event(u64::MAX / 4, u32::MAX));
        let mut t = 0u64;
        b.iter(|| {
            push(&mut q, black_box(event(t + 10, t as u32)));
            push(&mut q, black_box(event(t + 5, t as u32 + 1)));
            t += 20;
            black_box(pop(&mut q));
            black_box(pop(&mut q))
        })
    }
    group.bench_function("sorted_vec_push2_pop2", |b| {
        push2_pop2(b, LpQueue::default(), event, LpQueue::push, LpQueue::pop)
    });
    group.bench_function("binary_heap_push2_pop2", |b| {
        push2_pop2(
            b,
            BinaryHeap::new(),
            event,
            BinaryHeap::push,
            BinaryHeap::pop,
        )
    });
    group.finish();

    // A busy switch of the permutation benchmark (issue 19): per window 64 links deliver 9
    // packets each (sorted per link, in step across links: equal times and creation times
    // are common), and every popped arrival leaves a port wake-up of the LP's own one
    // transmission later, popped in turn. Per window: 576 remote pushes, 576 own pushes,
    // 1,152 pops.
    let mut group = c.benchmark_group("lp_queue_busy_switch");
    const LINKS: u64 = 64;
    const PER_LINK: u64 = 9;
    const GAP: u64 = 120_000; // ps between packets on a link
    group.throughput(Throughput::Elements(2 * LINKS * PER_LINK));
    let arrival = |t: u64, n: u32| Event {
        key: EventKey::new(SimTime(t), Phase::Arrive, SimTime(t - 1_000_000)),
        kind: EventKind::Arrive(packet(n)),
    };
    let wake = |t: u64, seq: u64| Event {
        key: EventKey::new(SimTime(t), Phase::PortReady, SimTime(t - GAP)),
        kind: EventKind::PortReady {
            port: (seq % LINKS) as u32,
            seq,
        },
    };
    fn window<Q>(
        b: &mut criterion::Bencher,
        mut q: Q,
        arrival: impl Fn(u64, u32) -> Event,
        wake: impl Fn(u64, u64) -> Event,
        remote: impl Fn(&mut Q, Event),
        own: impl Fn(&mut Q, Event),
        pop: impl Fn(&mut Q) -> Option<Event>,
    ) {
        let mut start = 1_000_000u64;
        let mut n = 0u32;
        let mut seq = 0u64;
        b.iter(|| {
            for link in 0..LINKS {
                for k in 0..PER_LINK {
                    n = n.wrapping_add(1);
                    remote(&mut q, arrival(start + k * GAP + link % 3, n));
                }
            }
            let mut pops = 0;
            while let Some(e) = pop(&mut q) {
                if let EventKind::Arrive(_) = e.kind {
                    seq += 1;
                    own(&mut q, wake(e.key.time.0 + GAP, seq));
                }
                pops += 1;
                black_box(e);
            }
            start += PER_LINK * GAP;
            pops
        })
    }
    group.bench_function("lp_queue", |b| {
        window(
            b,
            LpQueue::default(),
            arrival,
            wake,
            LpQueue::push_remote,
            LpQueue::push,
            LpQueue::pop,
        )
    });
    group.bench_function("binary_heap", |b| {
        window(
            b,
            BinaryHeap::new(),
            arrival,
            wake,
            BinaryHeap::push,
            BinaryHeap::push,
            BinaryHeap::pop,
        )
    });
    group.finish();
}

criterion_group!(
    benches,
    queue,
    shaping,
    forwarding,
    lp_queue,
    window_step,
    layout
);
criterion_main!(benches);
