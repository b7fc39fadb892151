//! netstep integration tests: one binary, one module per concern.

mod bad_input;
mod cli;
mod common;
mod compare;
mod determinism;
mod differential;
mod elements;
mod failures;
mod fuzz;
mod golden;
mod ground_truth;
mod hpcc_import;
mod load_balancing;
mod mixes;
mod pfc;
mod properties;
mod queueing;
mod shaping;
mod signals;
mod sweeps;
mod tcp;
mod topologies;
mod traces;
mod training;
mod transports;
mod workloads;
