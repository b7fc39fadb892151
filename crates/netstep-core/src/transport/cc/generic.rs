//! REAL's generic source (Keshav 1988): a fixed window and no congestion control. The window
//! never changes, whatever the losses; the sender recovers by go-back-N after a timeout (the
//! scenario loader turns fast retransmit and SACK off for REAL's sources).

use super::{AckSample, Algorithm};

/// A fixed window, in segments.
#[derive(Clone, Debug)]
pub struct Generic {
    /// The window.
    pub cwnd: f64,
}

impl Generic {
    /// A fixed window of `window` segments (at least one).
    pub fn new(window: u32) -> Generic {
        Generic {
            cwnd: window.max(1) as f64,
        }
    }
}

/// Nothing changes the window (REAL's sources never enter fast recovery: no fast retransmit).
impl Algorithm for Generic {
    fn cwnd(&self) -> f64 {
        self.cwnd
    }

    fn on_ack(&mut self, _ack: &AckSample) {}

    fn on_congestion(&mut self, _flight: u32) {}

    fn on_timeout(&mut self, _flight: u32) {}
}
