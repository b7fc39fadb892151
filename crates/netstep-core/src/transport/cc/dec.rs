//! REAL's DEC source (Keshav 1988): the DECbit window rule of Ramakrishnan and Jain ("A Binary
//! Feedback Scheme for Congestion Avoidance in Computer Networks", 1990). Routers set the
//! congestion bit in packets when their average queue is at least one packet
//! ([`crate::queue::DecBit`]); the receiver copies it into its ACK. The sender changes its
//! window once every two round trips: after a change it waits one window (the packets sent
//! before the change), then counts the bits of the ACKs for the next window; if at least half
//! of them carry the bit the window becomes `0.875 cwnd` (at least one segment), otherwise
//! `cwnd + 1`. A timeout sets the window to one segment, and the sender goes back N (no fast
//! retransmit: the scenario loader turns it and SACK off).

use super::{AckSample, Algorithm};

/// Multiplicative decrease factor of the DECbit rule.
pub const DECREASE: f64 = 0.875;

/// DEC window state, in segments.
#[derive(Clone, Debug)]
pub struct Dec {
    /// Congestion window.
    pub cwnd: f64,
    /// Segments below this were sent before the last change: their bits are not counted.
    wait_until: u32,
    /// The window whose ACKs are being counted ends at this segment (`None`: still waiting).
    count_until: Option<u32>,
    /// Segments acknowledged in the counted window.
    acked: u32,
    /// Of which acknowledged with the congestion bit.
    marked: u32,
    /// One past the highest segment sent, as of the last ACK.
    last_high: u32,
}

impl Dec {
    /// Starts with `initial_cwnd` segments.
    pub fn new(initial_cwnd: u32) -> Dec {
        Dec {
            cwnd: initial_cwnd.max(1) as f64,
            wait_until: 0,
            count_until: None,
            acked: 0,
            marked: 0,
            last_high: 0,
        }
    }

    fn count(&mut self, ack: &AckSample) {
        if let Some(end) = self.count_until {
            self.acked += ack.acked;
            if ack.congestion {
                self.marked += ack.acked;
            }
            if ack.una >= end {
                if 2 * self.marked >= self.acked && self.acked > 0 {
                    self.cwnd = (self.cwnd * DECREASE).max(1.0);
                } else {
                    self.cwnd += 1.0;
                }
                self.wait_until = ack.high;
                self.count_until = None;
            }
        }
    }
}

impl Algorithm for Dec {
    fn cwnd(&self) -> f64 {
        self.cwnd
    }

    /// New data acknowledged.
    fn on_ack(&mut self, ack: &AckSample) {
        self.last_high = ack.high;
        match self.count_until {
            None => {
                if ack.una >= self.wait_until {
                    // The packets sent after the last change start arriving: count this ACK
                    // and those of everything in flight now (one window).
                    self.count_until = Some(ack.high.max(ack.una));
                    self.acked = 0;
                    self.marked = 0;
                    self.count(ack);
                }
            }
            Some(_) => self.count(ack),
        }
    }

    /// No fast recovery: a loss is treated as a timeout.
    fn on_congestion(&mut self, flight: u32) {
        self.on_timeout(flight);
    }

    /// A timeout: one segment, and a fresh cycle after the packets already sent.
    fn on_timeout(&mut self, _flight: u32) {
        self.cwnd = 1.0;
        self.wait_until = self.last_high;
        self.count_until = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(una: u32, high: u32, congestion: bool) -> AckSample {
        AckSample {
            congestion,
            una,
            high,
            ..AckSample::test(1)
        }
    }

    /// One ACK per segment; the sender keeps `cwnd` segments in flight.
    fn acks(d: &mut Dec, una: &mut u32, n: u32, marked: bool) {
        for _ in 0..n {
            *una += 1;
            let high = *una + d.cwnd as u32;
            d.on_ack(&ack(*una, high, marked));
        }
    }

    #[test]
    fn the_window_changes_every_two_round_trips_by_the_majority_of_bits() {
        let mut d = Dec::new(8);
        let mut una = 0;
        // The first ACK opens a count over everything in flight (segments 1..=8 after it):
        // 3 of 9 marked, under half: +1 at the ACK that covers the window.
        acks(&mut d, &mut una, 3, true);
        acks(&mut d, &mut una, 5, false);
        assert_eq!(d.cwnd, 8.0);
        acks(&mut d, &mut una, 1, false);
        assert_eq!(d.cwnd, 9.0);
        // The next window was sent before the change: its bits are ignored.
        acks(&mut d, &mut una, 7, true);
        assert_eq!(d.cwnd, 9.0);
        // Then a counted window with every bit set: x 0.875.
        acks(&mut d, &mut una, 11, true);
        assert!((d.cwnd - 9.0 * 0.875).abs() < 1e-9, "{}", d.cwnd);
        d.on_timeout(0);
        assert_eq!(d.cwnd, 1.0);
    }
}
