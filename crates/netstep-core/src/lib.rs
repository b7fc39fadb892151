//! netstep core: the simulation engine and the network elements, with no I/O.
//!
//! Read top-down: [`units`] (integer time and unit
//! newtypes) → [`rng`] (keyed random streams) → [`packet`] → [`telemetry`] (HPCC's per-hop
//! records) → [`topology`] (generators) → [`network`] (compiled port tables, routing) → the
//! elements: [`queue`] (schedulers and AQM), [`shaping`], [`pfc`], [`balance`], [`failure`],
//! [`nic`] and [`transport`] → [`flow`] → [`engine`] (logical processes with the egress
//! pipeline, the window engine and the sequential reference engine) → [`world`] (the
//! bevy_ecs model: entities, components and systems).

pub mod balance;
pub mod engine;
pub mod failure;
pub mod flow;
pub mod job;
pub mod network;
pub mod nic;
pub mod packet;
pub mod pfc;
pub mod queue;
mod rare_rows;
pub mod rng;
pub mod shaping;
pub mod telemetry;
pub mod topology;
pub mod transport;
pub mod units;
pub mod world;
