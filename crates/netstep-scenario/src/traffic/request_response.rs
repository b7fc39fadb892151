//! `kind = "request_response"`: closed-loop clients, as REAL's interactive sources and ns-3's
//! request-response applications: each client sends a request to the server; the server
//! answers with a response (a size drawn from a CDF, or fixed); when the response has arrived
//! the client thinks (exponential, mean `think`) and sends the next request, `exchanges` times.
//! Expressed as flows with dependencies: a response waits for its request (the server is the
//! request's receiver), the next request for the response plus the think time (the client is
//! the response's receiver), so each host hears at once and the loop is exact.

use std::sync::Arc;

use netstep_core::flow::{Dependencies, FlowSpec};
use netstep_core::transport::TransportSpec;
use netstep_core::units::{Bytes, SimTime};

/// One client's exchanges.
pub struct Client {
    /// Client host.
    pub host: u32,
    /// Server host.
    pub server: u32,
    /// First request's start.
    pub start: SimTime,
}

/// Appends the flows of `client`'s `exchanges` (request, response, request, ...) to `flows`:
/// `request` gives each request's transport and size, `response(i)` the i-th response's, and
/// `think(i)` the think time before request `i + 1`.
pub fn exchanges(
    client: &Client,
    exchanges: u32,
    class: u8,
    request: &(Arc<TransportSpec>, Bytes),
    response: &mut dyn FnMut(u32) -> (Arc<TransportSpec>, Bytes),
    think: &mut dyn FnMut(u32) -> SimTime,
    flows: &mut Vec<FlowSpec>,
) {
    let flow = |src,
                dst,
                (transport, size): (Arc<TransportSpec>, Bytes),
                after: Option<(u32, SimTime)>| FlowSpec {
        src,
        dst,
        start: client.start,
        size,
        transport,
        path: None,
        class,
        after: after.map(|(dep, delay)| {
            Box::new(Dependencies {
                flows: Box::new([dep]),
                delay,
            })
        }),
        ports: None,
    };
    let mut previous: Option<(u32, SimTime)> = None;
    for i in 0..exchanges {
        let request_id = flows.len() as u32;
        flows.push(flow(client.host, client.server, request.clone(), previous));
        flows.push(flow(
            client.server,
            client.host,
            response(i),
            Some((request_id, SimTime::ZERO)),
        ));
        previous = Some((request_id + 1, think(i)));
    }
}
