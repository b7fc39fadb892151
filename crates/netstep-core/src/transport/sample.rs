//! Congestion-control samples: the rows of `cc_samples.parquet`, taken from each running
//! sender at the sample interval ([`super::Sender::cc_sample`]); the engine only decides when.

/// The congestion-control state of one running TCP or RDMA flow at a sample time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CcSample {
    /// Sample time, ps.
    pub time_ps: u64,
    /// Flow id.
    pub flow: u32,
    /// Congestion window, segments (with NewReno's recovery inflation).
    pub cwnd: f64,
    /// Slow-start threshold, segments (`None` while infinite: no loss yet).
    pub ssthresh: Option<f64>,
    /// Smoothed RTT (RFC 6298), ps (`None` before the first sample).
    pub srtt_ps: Option<u64>,
    /// Retransmission timeout, ps.
    pub rto_ps: u64,
    /// Segments sent and not yet cumulatively acknowledged.
    pub inflight: u32,
    /// Segments cumulatively acknowledged.
    pub acked: u32,
    /// In fast recovery.
    pub in_recovery: bool,
    /// DCTCP's `alpha` (`None` for other algorithms).
    pub alpha: Option<f64>,
    /// CUBIC's `W_max`, segments (`None` for other algorithms, and before CUBIC's first
    /// reduction or congestion-avoidance epoch).
    pub w_max: Option<f64>,
    /// Pacing rate, bit/s (`None` when the flow is not paced).
    pub pacing_rate_bps: Option<f64>,
    /// BBR's bottleneck bandwidth estimate, bit/s (`None` for other algorithms).
    pub btl_bw_bps: Option<f64>,
}
