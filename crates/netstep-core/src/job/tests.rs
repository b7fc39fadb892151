//! The walker against hand-computed timelines: a toy driver delivers every flow `TRANSIT`
//! after it starts and acknowledges it `ACK` after that.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::*;

const TRANSIT: SimTime = SimTime(1_000);
const ACK: SimTime = SimTime(100);
const LAT: SimTime = SimTime(10);

fn op(compute: u64, queue: Queue, blocking: bool) -> Op {
    Op {
        compute: SimTime(compute),
        collective: true,
        queue,
        blocking,
        update: SimTime(5),
        gap: SimTime(1),
    }
}

/// Adds a ring of `steps` steps over `ranks` (in ring order) for op `k`: step s from each
/// rank to the next, released by step s-1's arrival at it; records each flow's ends.
fn ring(b: &mut JobBuilder, ends: &mut Vec<(u32, u32)>, k: u32, ranks: &[u32], steps: u32) {
    let n = ranks.len();
    let mut prev: Vec<Option<u32>> = vec![None; n];
    for _ in 0..steps {
        let mut into = vec![None; n];
        for i in 0..n {
            let (from, to) = (ranks[i], ranks[(i + 1) % n]);
            into[(i + 1) % n] = Some(b.add(k, from, to, prev[i]));
            ends.push((from, to));
        }
        prev = into;
    }
}

/// Runs every walker to the end; returns each flow's start time and the walkers.
fn drive(job: &JobSpec, ends: &[(u32, u32)]) -> (Vec<Option<SimTime>>, Vec<Walker>) {
    #[derive(PartialEq, Eq, PartialOrd, Ord)]
    enum Ev {
        Wake(u32, u32),
        Start(u32),
        Arrive(u32),
        Acked(u32),
    }
    fn push(heap: &mut BinaryHeap<Reverse<(SimTime, Ev)>>, out: &mut Vec<Action>, rank: u32) {
        for a in out.drain(..) {
            match a {
                Action::Start { flow, at } => heap.push(Reverse((at, Ev::Start(flow)))),
                Action::Wake { at, token } => heap.push(Reverse((at, Ev::Wake(rank, token)))),
            }
        }
    }
    let mut walkers: Vec<Walker> = (0..job.ranks()).map(|r| Walker::new(job, r)).collect();
    let mut heap = BinaryHeap::new();
    for r in 0..job.ranks() {
        heap.push(Reverse((SimTime::ZERO, Ev::Wake(r, 0))));
    }
    let mut starts = vec![None; job.flows.len()];
    let mut out = Vec::new();
    while let Some(Reverse((now, ev))) = heap.pop() {
        let first = job.flows.start;
        let rank = match ev {
            Ev::Wake(r, token) => {
                walkers[r as usize].wake(job, token, now, &mut out);
                r
            }
            Ev::Start(f) => {
                assert!(
                    starts[(f - first) as usize].is_none(),
                    "flow {f} started twice"
                );
                starts[(f - first) as usize] = Some(now);
                heap.push(Reverse((now + TRANSIT, Ev::Arrive(f))));
                heap.push(Reverse((now + TRANSIT + ACK, Ev::Acked(f))));
                continue;
            }
            Ev::Arrive(f) => {
                let to = ends[(f - first) as usize].1;
                walkers[to as usize].arrived(job, f, now, &mut out);
                to
            }
            Ev::Acked(f) => {
                let from = ends[(f - first) as usize].0;
                walkers[from as usize].sent(job, f, now, &mut out);
                from
            }
        };
        push(&mut heap, &mut out, rank);
    }
    (starts, walkers)
}

#[test]
fn a_blocking_ring_runs_step_by_step_then_the_rank_goes_on() {
    let ops = vec![op(100, Queue::Model, true), op(50, Queue::Model, true)];
    let mut b = JobBuilder::new(vec![7, 9], ops, LAT, 0);
    let mut ends = Vec::new();
    ring(&mut b, &mut ends, 0, &[0, 1], 2);
    ring(&mut b, &mut ends, 1, &[0, 1], 2);
    let job = b.finish();
    assert_eq!(job.flows, 0..8);
    assert_eq!(job.rank_of(9), Some(1));
    assert_eq!(job.rank_of(8), None);
    let (starts, walkers) = drive(&job, &ends);
    // Op 0: compute 100, step 0 at 110, step 1 at 110 + 1000 + 10 = 1120; done at the
    // last ACK of step 1: 1120 + 1000 + 100 = 2220.
    assert_eq!(starts[0], Some(SimTime(110)));
    assert_eq!(starts[2], Some(SimTime(1_120)));
    let t = walkers[0].times()[0];
    assert_eq!(t.done, Some(SimTime(2_220)));
    // Op 1 begins after update 5 and gap 1, computes 50, starts its flows 10 later.
    assert_eq!(walkers[0].times()[1].begin, Some(SimTime(2_226)));
    assert_eq!(starts[4], Some(SimTime(2_286)));
    // The walk ends after the last op's update and gap (SimAI's last +1 ns state change).
    let end = SimTime(2_286 + 2 * 1_000 + 10 + 100 + 5 + 1);
    assert_eq!(walkers[0].finished(&job), Some(end));
    assert_eq!(walkers[1].finished(&job), Some(end));
}

#[test]
fn waiting_collectives_of_a_queue_start_newest_first() {
    // Three non-blocking ops on the data queue issued 1 ns apart (gap) while the first runs.
    let ops = vec![
        op(0, Queue::Data, false),
        op(0, Queue::Data, false),
        op(0, Queue::Data, false),
    ];
    let mut b = JobBuilder::new(vec![0, 1], ops, LAT, 0);
    let mut ends = Vec::new();
    for k in 0..3 {
        ring(&mut b, &mut ends, k, &[0, 1], 1);
    }
    let job = b.finish();
    let (_, walkers) = drive(&job, &ends);
    let t: Vec<OpTimes> = walkers[0].times().to_vec();
    let first_done = t[0].done.unwrap();
    assert_eq!(t[0].started, Some(SimTime(0)));
    assert_eq!(
        t[2].started,
        Some(first_done),
        "the newest waiting op goes next"
    );
    assert_eq!(t[1].started, t[2].done, "the oldest goes last");
    // The rank is finished when the last collective is done, plus its update time.
    assert_eq!(
        walkers[0].finished(&job),
        Some(t[1].done.unwrap() + SimTime(5))
    );
}

#[test]
fn a_flow_that_arrives_before_its_collective_starts_waits_for_it() {
    // Op 0 is a ring of ranks 1 and 2 only; op 1 a ring of all three. Rank 0 starts op 1 at
    // once, so its first step reaches rank 1 while rank 1 is still in op 0: rank 1 forwards
    // it only when op 1 starts there.
    let ops = vec![op(0, Queue::Model, true), op(0, Queue::Model, true)];
    let mut b = JobBuilder::new(vec![0, 1, 2], ops, LAT, 100);
    let mut ends = Vec::new();
    ring(&mut b, &mut ends, 0, &[1, 2], 1);
    ring(&mut b, &mut ends, 1, &[0, 1, 2], 2);
    let job = b.finish();
    let (starts, walkers) = drive(&job, &ends);
    // Rank 0 issues op 1 after op 0's gap (no flows there): its step 0 at 1 + 10.
    assert_eq!(starts[2], Some(SimTime(11)));
    // Rank 1: op 0 done at 10 + 1000 + 100 (its send acknowledged), op 1 starts after update
    // 5 and gap 1 at 1116; rank 0's step 0 arrived at 1011, early.
    let start1 = SimTime(1_116);
    assert_eq!(walkers[1].times()[1].started, Some(start1));
    // Rank 1's step 1 (flow 2 + 3 + 1: the ring's second step from rank 1) goes at its start.
    assert_eq!(starts[6], Some(start1 + LAT));
    assert!(walkers.iter().all(|w| w.finished(&job).is_some()));
}

#[test]
fn a_compute_only_op_takes_its_compute_and_gap() {
    let mut only = op(300, Queue::Model, true);
    only.collective = false;
    let job = JobBuilder::new(vec![3], vec![only, only], LAT, 10).finish();
    let (_, walkers) = drive(&job, &[]);
    assert_eq!(walkers[0].times()[1].begin, Some(SimTime(301)));
    assert_eq!(walkers[0].finished(&job), Some(SimTime(602)));
}
