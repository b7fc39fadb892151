//! `kind = "request_response"`: closed-loop clients, as REAL's interactive sources and ns-3's
//! request-response applications: each client sends a request to the server; the server
//! answers with a response (a size drawn from a CDF, or fixed); when the response has arrived
//! the client thinks (exponential, mean `think`) and sends the next request, `exchanges` times.
//! Expressed as flows with dependencies: a response waits for its request (the server is the
//! request's receiver), the next request for the response plus the think time (the client is
//! the response's receiver), so each host hears at once and the loop is exact.

use std::sync::Arc;

use netstep_core::flow::{Dependencies, FlowSpec};
use netstep_core::rng::{STREAM_THINK, stream};
use netstep_core::transport::TransportSpec;
use netstep_core::units::{Bytes, SimTime};
use rand::{Rng, RngExt};
use serde::{Deserialize, Serialize};

use super::common::{host_list, require_two_hosts, resolve_cdf_path};
use super::{Block, Counting, TrafficKind};
use crate::cdf::SizeCdf;
use crate::error::{FieldPath, Invalid};
use crate::fields::{duration_at, size_at, traffic_class};
use crate::transport::TransportConfig;

/// Closed-loop request/response clients. Example: `kind = "request_response"`,
/// `exchanges = 10`, `response = "20KB"`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RequestResponseConfig {
    /// Traffic class (0-7) of the block's flows.
    ///
    /// Unit: integer · Default: 0 · Example: `class = 3`
    pub class: Option<u8>,
    /// The server's host name.
    ///
    /// Unit: name · Default: a host drawn from the seed · Example: `server = "h0"`
    pub server: Option<String>,
    /// Client host names (distinct hosts, not the server).
    ///
    /// Unit: list of names · Default: every host but the server · Example:
    /// `clients = ["h1", "h2"]`
    pub clients: Option<Vec<String>>,
    /// Requests each client sends, one after the other; at least 1.
    ///
    /// Unit: integer · Default: required · Example: `exchanges = 20`
    pub exchanges: u32,
    /// Request size.
    ///
    /// Unit: size · Default: `"1KB"` · Example: `request = "200B"`
    pub request: Option<String>,
    /// Response size; give `response` or `cdf`, not both.
    ///
    /// Unit: size · Default: — (give this or `cdf`) · Example: `response = "20KB"`
    pub response: Option<String>,
    /// Response sizes drawn from this CDF file, resolved as for `poisson`; give `response` or
    /// `cdf`, not both.
    ///
    /// Unit: path · Default: — (give this or `response`) · Example:
    /// `cdf = "../../datasets/websearch.toml"`
    pub cdf: Option<String>,
    /// Mean of the exponential think time between a response's arrival and the next request.
    ///
    /// Unit: duration · Default: `"0s"` · Example: `think = "20us"`
    pub think: Option<String>,
    /// Start of the first requests.
    ///
    /// Unit: duration · Default: `"0s"` · Example: `start = "1ms"`
    pub start: Option<String>,
    /// Transport of the block's flows: a table with the fields of `[transport]` (`kind` and
    /// that kind's fields).
    ///
    /// Unit: table · Default: the top-level `[transport]` · Example:
    /// `transport = { kind = "tcp", cc = "dctcp" }`
    pub transport: Option<TransportConfig>,
}

impl TrafficKind for RequestResponseConfig {
    fn transport(&self) -> Option<&TransportConfig> {
        self.transport.as_ref()
    }

    fn count(&self, on: &Counting<'_>, _path: &FieldPath) -> Result<u64, Invalid> {
        let clients = self
            .clients
            .as_ref()
            .map_or(on.hosts.saturating_sub(1), |c| c.len() as u64);
        Ok(clients.saturating_mul(2 * self.exchanges as u64))
    }

    fn generate<'a>(&'a self, b: &mut Block<'_, 'a>) -> Result<(), Invalid> {
        let path = b.path.clone();
        let template = b.transport(&self.transport)?;
        let class = traffic_class(self.class, &path.key("class"))?;
        if self.exchanges == 0 {
            return Err(Invalid::new(path.key("exchanges"), "must be at least 1"));
        }
        let start = duration_at(&self.start, path.key("start"), SimTime::ZERO)?;
        let think = duration_at(&self.think, path.key("think"), SimTime::ZERO)?;
        let request_size = size_at(&self.request, path.key("request"), Bytes(1_000))?;
        let request = template.for_flow(Some(request_size), None, &path.key("request"))?;
        b.names();
        require_two_hosts(b.hosts, &path)?;
        let (server, clients) = self.hosts(b)?;
        let sizes = self.sizes(b)?;
        b.check_flows(
            clients.len() as u64 * 2 * self.exchanges as u64,
            &path.key("exchanges"),
        )?;
        let mut failed = None;
        for host in clients {
            let client = Client {
                host,
                server,
                start,
            };
            let rng = &mut b.rng;
            let mut response = |_| {
                let size = match &sizes {
                    Err(fixed) => *fixed,
                    Ok(cdf) => Bytes(cdf.sample(1.0 - rng.random::<f64>()).max(1)),
                };
                template
                    .for_flow(Some(size), None, &path.key("response"))
                    .unwrap_or_else(|e| {
                        failed.get_or_insert(e);
                        (request.0.clone(), size)
                    })
            };
            let mut think_rng = stream(
                b.ctx.seed,
                STREAM_THINK,
                ((b.index as u64) << 32) | host as u64,
            );
            let mut think_time = |_| {
                let u = 1.0 - think_rng.random::<f64>();
                SimTime((-u.ln() * think.0 as f64) as u64)
            };
            exchanges(
                &client,
                self.exchanges,
                class,
                &request,
                &mut response,
                &mut think_time,
                &mut b.out.flows,
            );
        }
        match failed {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl RequestResponseConfig {
    /// The server (named, or drawn from the block's stream) and the clients.
    fn hosts(&self, b: &mut Block<'_, '_>) -> Result<(u32, Vec<u32>), Invalid> {
        let path = &b.path;
        let topology = b.ctx.topology;
        let names = b.out.names.as_ref().expect("built by the caller");
        let server = match &self.server {
            Some(name) => host_list(
                std::slice::from_ref(name),
                names,
                topology,
                &path.key("server"),
            )
            .map_err(|e| Invalid::new(path.key("server"), e.message))?[0],
            None => b.hosts[(b.rng.next_u64() % b.hosts.len() as u64) as usize],
        };
        let clients = match &self.clients {
            Some(list) => host_list(list, names, topology, &path.key("clients"))?,
            None => b.hosts.iter().copied().filter(|&h| h != server).collect(),
        };
        if let Some(i) = clients.iter().position(|&c| c == server) {
            return Err(Invalid::new(
                path.key("clients").index(i),
                "is the server; a client sends to another host",
            ));
        }
        Ok((server, clients))
    }

    /// The response sizes: fixed (`Err`) or from a CDF (`Ok`), whose text joins the inputs.
    fn sizes(&self, b: &mut Block<'_, '_>) -> Result<Result<SizeCdf, Bytes>, Invalid> {
        let path = &b.path;
        match (&self.response, &self.cdf) {
            (Some(_), Some(_)) => Err(Invalid::new(
                path.key("cdf"),
                "give response or cdf, not both",
            )),
            (None, None) => Err(Invalid::new(
                path.key("response"),
                "give the response size (e.g. \"20KB\") or a cdf of sizes",
            )),
            (Some(_), None) => Ok(Err(size_at(
                &self.response,
                path.key("response"),
                Bytes(0),
            )?)),
            (None, Some(cdf)) => {
                let cdf_path = resolve_cdf_path(cdf, b.ctx.base_dir);
                let sizes =
                    SizeCdf::load(&cdf_path).map_err(|e| Invalid::new(path.key("cdf"), e))?;
                b.out
                    .inputs
                    .push(std::fs::read_to_string(&cdf_path).unwrap_or_default());
                Ok(Ok(sizes))
            }
        }
    }
}

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
