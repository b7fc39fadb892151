// FatTree TCP cross-check, ns-3 side (benches/ns3-crosscheck/run compiles and runs it).
//
// A k-ary FatTree (Al-Fares: k pods of k/2 edge and k/2 aggregation switches, (k/2)^2 cores,
// k/2 hosts per edge), numbered as netstep's fat_tree.rs: hosts [0, H), edge [H, H+E),
// aggregation [H+E, H+2E), core [H+2E, H+2E+C); every link PointToPoint at --rate / --delay.
// Switch egress: the device's DropTail queue of --buffer bytes with no queue disc (the traffic
// control layer drops what arrives while the device queue is stopped); host egress: a
// FifoQueueDisc that never drops in front of the device queue. Each flow follows its own
// explicit path (PathRouting below: the data packets' destination port, or the ACKs' source
// port, names the flow). TCP NewReno per flow: BulkSendApplication -> PacketSink.
//
// Usage: fattree_tcp --k=4 --flows=FLOWS.csv --out=RESULT.csv --summary=SUMMARY.json
//                    [--rate=10Gbps] [--delay=1us] [--buffer=256000] [--recovery=prr|classic]
// FLOWS.csv: header line, then `flow_id,src,dst,size,start_ps,path` with path the node ids
// from src to dst separated by spaces.

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <unordered_map>
#include <vector>

using namespace ns3;

namespace
{

/// The first flow's port; flow i is served on port kBasePort + i (below ns-3's ephemeral range).
constexpr uint32_t kBasePort = 1000;
constexpr uint32_t kEphemeralFirst = 49152;

struct Flow
{
    uint32_t src = 0;
    uint32_t dst = 0;
    uint64_t size = 0;
    int64_t startPs = 0;
    std::vector<uint32_t> path;
    Ptr<BulkSendApplication> app;
    int64_t firstDataTxPs = -1; // first segment with payload handed to IP
    int64_t lastRxPs = -1;      // the sink has every byte
    uint64_t rxBytes = 0;
    uint32_t timeouts = 0;   // CA_EVENT_LOSS ("loss timeout") events of the sender's cc
    uint32_t lossStates = 0; // CongState transitions into CA_LOSS
    uint32_t retransmissions = 0;
    uint32_t dropsData = 0; // dropped packets towards the sink (SYN, data, FIN)
    uint32_t dropsAck = 0;  // dropped packets towards the sender (SYN-ACK, ACKs)
};

std::vector<Flow> g_flows;
uint64_t g_deviceDrops = 0;   // device queue (DropTail) drops, every device
uint64_t g_tcDrops = 0;       // traffic-control layer drops: device queue stopped, no qdisc
uint64_t g_qdiscDrops = 0;    // host FifoQueueDisc drops (expected 0)
uint64_t g_ipv4Drops = 0;     // Ipv4L3Protocol drops (no route, TTL; expected 0)
uint64_t g_unattributed = 0;  // drops whose flow could not be read from the headers
uint64_t g_phyTx = 0;         // transmissions started on every device (packet-hops)

/// The flow and direction (0 = towards the sink, 1 = towards the sender) of a TCP segment
/// from its ports, or -1 when the ports name no flow.
int64_t
FlowKey(uint16_t sport, uint16_t dport)
{
    const uint64_t n = g_flows.size();
    if (dport >= kBasePort && dport < kBasePort + n)
        return int64_t(dport - kBasePort) * 2;
    if (sport >= kBasePort && sport < kBasePort + n && dport >= kEphemeralFirst)
        return int64_t(sport - kBasePort) * 2 + 1;
    return -1;
}

/// The first bytes of a dropped packet that may start with a PPP header and/or an IPv4
/// header, and where its TCP header starts among them.
struct TcpView
{
    uint8_t b[64];
    uint32_t n;   // bytes copied
    uint32_t off; // start of the TCP header
};

TcpView
ViewTcp(Ptr<const Packet> p)
{
    TcpView v;
    v.n = p->CopyData(v.b, sizeof v.b);
    v.off = v.n >= 2 && v.b[0] == 0x00 && v.b[1] == 0x21 ? 2 : 0; // PPP, protocol IPv4
    const uint8_t* ip = v.b + v.off;
    const uint32_t ipLen = v.n > v.off + 4 ? (uint32_t(ip[2]) << 8) | ip[3] : 0;
    if (v.n >= v.off + 20 && (ip[0] >> 4) == 4 && ip[9] == 6 && ipLen == p->GetSize() - v.off)
        v.off += (ip[0] & 0x0f) * 4; // an IPv4 header (protocol TCP, its length matching)
    return v;
}

/// The flow key of a dropped packet (-1 when its ports name no flow).
int64_t
FlowKeyOf(const TcpView& v)
{
    if (v.n < v.off + 4)
        return -1;
    const uint8_t* t = v.b + v.off;
    return FlowKey((uint16_t(t[0]) << 8) | t[1], (uint16_t(t[2]) << 8) | t[3]);
}

/// `--sends`: one line per segment a sender hands to IP (time, flow, sequence number, payload).
std::ofstream g_txLog;

/// `--drops`: one line per dropped packet (time, node, flow, direction, TCP sequence and
/// acknowledgement numbers, size), for tracing where two simulators part.
std::ofstream g_dropLog;

/// The TCP sequence and acknowledgement numbers of a dropped packet (0, 0 when it has no
/// TCP header).
std::pair<uint32_t, uint32_t>
TcpNumbers(const TcpView& v)
{
    if (v.n < v.off + 12)
        return {0, 0};
    auto word = [&](uint32_t at) {
        const uint8_t* w = v.b + v.off + at;
        return (uint32_t(w[0]) << 24) | (uint32_t(w[1]) << 16) | (uint32_t(w[2]) << 8) | w[3];
    };
    return {word(4), word(8)};
}

void
CountDrop(uint32_t node, Ptr<const Packet> p)
{
    const TcpView view = ViewTcp(p);
    const int64_t key = FlowKeyOf(view);
    if (key < 0)
        ++g_unattributed;
    else
        (key % 2 == 0 ? g_flows[key / 2].dropsData : g_flows[key / 2].dropsAck)++;
    if (g_dropLog.is_open())
    {
        const auto [seq, ack] = TcpNumbers(view);
        g_dropLog << Simulator::Now().GetPicoSeconds() << ',' << node << ','
                  << (key < 0 ? -1 : key / 2) << ',' << (key < 0 ? -1 : key % 2) << ',' << seq
                  << ',' << ack << ',' << p->GetSize() << '\n';
    }
}

void OnDeviceDrop(uint32_t node, Ptr<const Packet> p) { ++g_deviceDrops; CountDrop(node, p); }
void OnTcDrop(uint32_t node, Ptr<const Packet> p) { ++g_tcDrops; CountDrop(node, p); }
void OnQdiscDrop(Ptr<const QueueDiscItem>) { ++g_qdiscDrops; }
void OnIpv4Drop(const Ipv4Header&, Ptr<const Packet>, Ipv4L3Protocol::DropReason, Ptr<Ipv4>,
                uint32_t) { ++g_ipv4Drops; }
void OnPhyTx(Ptr<const Packet>) { ++g_phyTx; }

/// NewReno that counts its socket's retransmission timeouts: TcpSocketState documents
/// CA_EVENT_LOSS as "loss timeout", the event TcpSocketBase::ReTxTimeout gives the congestion
/// control on every timeout (also the repeated ones while already in CA_LOSS).
class CountingNewReno : public TcpNewReno
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::CountingNewReno")
                                .SetParent<TcpNewReno>()
                                .SetGroupName("Internet")
                                .AddConstructor<CountingNewReno>();
        return tid;
    }

    CountingNewReno() = default;

    CountingNewReno(const CountingNewReno& other)
        : TcpNewReno(other),
          m_flow(other.m_flow)
    {
    }

    std::string GetName() const override { return "CountingNewReno"; }

    void CwndEvent(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCAEvent_t event) override
    {
        if (event == TcpSocketState::CA_EVENT_LOSS && m_flow >= 0)
        {
            ++g_flows[m_flow].timeouts;
        }
        TcpNewReno::CwndEvent(tcb, event);
    }

    Ptr<TcpCongestionOps> Fork() override { return CopyObject<CountingNewReno>(this); }

    int64_t m_flow = -1;
};

/// Routes every flow along its own path: a switch reads the TCP ports of a packet it forwards
/// (data: destination port = the flow's port; ACKs: source port = the flow's port) and sends it
/// out of the interface its table gives for that flow and direction. A host sends everything
/// out of its one link.
class PathRouting : public Ipv4RoutingProtocol
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::PathRouting")
                                .SetParent<Ipv4RoutingProtocol>()
                                .SetGroupName("Internet")
                                .AddConstructor<PathRouting>();
        return tid;
    }

    /// The route out of `interface` to the neighbour at `gateway`.
    void SetNeighbor(uint32_t interface, Ipv4Address gateway)
    {
        if (m_routes.size() <= interface)
        {
            m_routes.resize(interface + 1);
        }
        Ptr<Ipv4Route> r = Create<Ipv4Route>();
        r->SetDestination(gateway);
        r->SetGateway(gateway);
        r->SetSource(m_ipv4->GetAddress(interface, 0).GetLocal());
        r->SetOutputDevice(m_ipv4->GetNetDevice(interface));
        m_routes[interface] = r;
    }

    void AddHop(int64_t key, uint32_t interface) { m_next[key] = interface; }

    Ptr<Ipv4Route> RouteOutput(Ptr<Packet>,
                               const Ipv4Header& header,
                               Ptr<NetDevice>,
                               Socket::SocketErrno& sockerr) override
    {
        // Only hosts originate packets, and a host has one link (interface 1).
        if (m_routes.size() != 2 || !m_routes[1])
        {
            NS_FATAL_ERROR("RouteOutput on a switch, to " << header.GetDestination());
        }
        sockerr = Socket::ERROR_NOTERROR;
        return m_routes[1];
    }

    bool RouteInput(Ptr<const Packet> p,
                    const Ipv4Header& header,
                    Ptr<const NetDevice> idev,
                    const UnicastForwardCallback& ucb,
                    const MulticastForwardCallback&,
                    const LocalDeliverCallback& lcb,
                    const ErrorCallback&) override
    {
        const uint32_t iif = m_ipv4->GetInterfaceForDevice(idev);
        if (m_ipv4->IsDestinationAddress(header.GetDestination(), iif))
        {
            lcb(p, header, iif);
            return true;
        }
        uint8_t b[4];
        if (header.GetProtocol() != 6 || p->CopyData(b, 4) != 4)
        {
            NS_FATAL_ERROR("not a TCP segment: " << header);
        }
        const int64_t key =
            FlowKey((uint16_t(b[0]) << 8) | b[1], (uint16_t(b[2]) << 8) | b[3]);
        auto it = m_next.find(key);
        if (it == m_next.end())
        {
            NS_FATAL_ERROR("no path entry at node " << m_ipv4->GetObject<Node>()->GetId()
                                                    << " for " << header);
        }
        ucb(m_routes[it->second], p, header);
        return true;
    }

    void NotifyInterfaceUp(uint32_t) override {}
    void NotifyInterfaceDown(uint32_t) override {}
    void NotifyAddAddress(uint32_t, Ipv4InterfaceAddress) override {}
    void NotifyRemoveAddress(uint32_t, Ipv4InterfaceAddress) override {}
    void SetIpv4(Ptr<Ipv4> ipv4) override { m_ipv4 = ipv4; }
    void PrintRoutingTable(Ptr<OutputStreamWrapper>, Time::Unit) const override {}

  protected:
    void DoDispose() override
    {
        m_ipv4 = nullptr;
        m_routes.clear();
        m_next.clear();
        Ipv4RoutingProtocol::DoDispose();
    }

  private:
    Ptr<Ipv4> m_ipv4;
    std::vector<Ptr<Ipv4Route>> m_routes;      // by interface
    std::unordered_map<int64_t, uint32_t> m_next; // flow key -> interface
};

class PathRoutingHelper : public Ipv4RoutingHelper
{
  public:
    PathRoutingHelper* Copy() const override { return new PathRoutingHelper(*this); }
    Ptr<Ipv4RoutingProtocol> Create(Ptr<Node>) const override
    {
        return CreateObject<PathRouting>();
    }
};

void
OnTx(uint32_t flow, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    if (g_txLog.is_open())
    {
        g_txLog << Simulator::Now().GetPicoSeconds() << ',' << flow << ','
                << h.GetSequenceNumber().GetValue() << ',' << p->GetSize() << '\n';
    }
    Flow& f = g_flows[flow];
    if (f.firstDataTxPs < 0 && p->GetSize() > 0)
    {
        f.firstDataTxPs = Simulator::Now().GetPicoSeconds();
    }
}

void
OnCongState(uint32_t flow, TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now)
{
    if (now == TcpSocketState::CA_LOSS)
    {
        ++g_flows[flow].lossStates;
    }
}

void
OnRetransmission(uint32_t flow,
                 Ptr<const Packet>,
                 const TcpHeader&,
                 const Address&,
                 const Address&,
                 Ptr<const TcpSocketBase>)
{
    ++g_flows[flow].retransmissions;
}

void
OnSinkRx(uint32_t flow, Ptr<const Packet> p, const Address&)
{
    Flow& f = g_flows[flow];
    f.rxBytes += p->GetSize();
    if (f.lastRxPs < 0 && f.rxBytes >= f.size)
    {
        f.lastRxPs = Simulator::Now().GetPicoSeconds();
    }
}

/// `--windows`: every change of a sender's cwnd, ssthresh and bytes in flight (time, flow,
/// which, old, new), for tracing where two simulators part.
std::ofstream g_windowLog;

void
OnWindow(uint32_t flow, const char* which, uint32_t before, uint32_t after)
{
    g_windowLog << Simulator::Now().GetPicoSeconds() << ',' << flow << ',' << which << ','
                << before << ',' << after << '\n';
}

void OnCwnd(uint32_t flow, uint32_t a, uint32_t b) { OnWindow(flow, "cwnd", a, b); }
void OnSsthresh(uint32_t flow, uint32_t a, uint32_t b) { OnWindow(flow, "ssthresh", a, b); }
void OnInFlight(uint32_t flow, uint32_t a, uint32_t b) { OnWindow(flow, "inflight", a, b); }

void
OnRto(uint32_t flow, Time a, Time b)
{
    g_windowLog << Simulator::Now().GetPicoSeconds() << ',' << flow << ",rto_ps,"
                << a.GetPicoSeconds() << ',' << b.GetPicoSeconds() << '\n';
}

/// Runs right after the flow's BulkSendApplication::StartApplication (same instant, later
/// event): its socket exists and has sent only the SYN. Hooks the traces and the counting
/// congestion control onto it.
void
AttachSender(uint32_t flow)
{
    Ptr<TcpSocketBase> sock = DynamicCast<TcpSocketBase>(g_flows[flow].app->GetSocket());
    NS_ABORT_MSG_IF(!sock, "flow " << flow << ": no TCP socket after the application started");
    Ptr<CountingNewReno> cc = CreateObject<CountingNewReno>();
    cc->m_flow = flow;
    sock->SetCongestionControlAlgorithm(cc);
    bool ok = sock->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnTx, flow));
    ok = ok && sock->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnCongState, flow));
    ok = ok && sock->TraceConnectWithoutContext("Retransmission",
                                                MakeBoundCallback(&OnRetransmission, flow));
    if (g_windowLog.is_open())
    {
        ok = ok && sock->TraceConnectWithoutContext("CongestionWindow",
                                                    MakeBoundCallback(&OnCwnd, flow));
        ok = ok && sock->TraceConnectWithoutContext("SlowStartThreshold",
                                                    MakeBoundCallback(&OnSsthresh, flow));
        ok = ok && sock->TraceConnectWithoutContext("BytesInFlight",
                                                    MakeBoundCallback(&OnInFlight, flow));
        ok = ok && sock->TraceConnectWithoutContext("RTO", MakeBoundCallback(&OnRto, flow));
    }
    NS_ABORT_MSG_IF(!ok, "a TcpSocketBase trace source is missing");
}

void
ScheduleAttach(uint32_t flow)
{
    // StartApplication for this instant was scheduled during node initialization, after this
    // event; ScheduleNow queues behind it.
    Simulator::ScheduleNow(&AttachSender, flow);
}

std::vector<Flow>
ReadFlows(const std::string& file)
{
    std::ifstream in(file);
    NS_ABORT_MSG_IF(!in, "cannot read " << file);
    std::vector<Flow> flows;
    std::string line;
    std::getline(in, line); // header
    while (std::getline(in, line))
    {
        if (line.empty())
        {
            continue;
        }
        std::stringstream row(line);
        std::string cell[6];
        for (auto& c : cell)
        {
            std::getline(row, c, ',');
        }
        Flow f;
        NS_ABORT_MSG_IF(std::stoul(cell[0]) != flows.size(), "flow ids must be 0, 1, 2, ...");
        f.src = std::stoul(cell[1]);
        f.dst = std::stoul(cell[2]);
        f.size = std::stoull(cell[3]);
        f.startPs = std::stoll(cell[4]);
        std::stringstream hops(cell[5]);
        for (uint32_t n; hops >> n;)
        {
            f.path.push_back(n);
        }
        NS_ABORT_MSG_IF(f.path.size() < 3 || f.path.front() != f.src || f.path.back() != f.dst,
                        "flow " << flows.size() << ": bad path");
        flows.push_back(std::move(f));
    }
    NS_ABORT_MSG_IF(flows.size() > kEphemeralFirst - kBasePort, "too many flows for the ports");
    return flows;
}

/// TCP as the workload asks (see the script's docstring); ns-3 defaults otherwise.
void
ConfigureTcp(const std::string& recovery)
{
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(recovery == "prr" ? TcpPrrRecovery::GetTypeId()
                                                     : TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1460));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1u << 30));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1u << 30));
    Config::SetDefault("ns3::TcpSocket::DataRetries", UintegerValue(15));
    // SYN and SYN-ACK retransmissions wait ConnTimeout (default 3 s): set to the data RTO floor.
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(MilliSeconds(1)));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(1)));
    // RTO = max(MinRto, SRTT + max(G, 4 RTTVAR)) with G the clock granularity (default 1 ms).
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(Time(0)));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    // TIME_WAIT lasts 2 MSL (default 2 x 120 s): shortened so closed connections free their
    // endpoints, which ns-3 searches linearly per packet (each flow has its own port).
    Config::SetDefault("ns3::TcpSocketBase::MaxSegLifetime", DoubleValue(0.001));
}

struct Network
{
    NodeContainer nodes;
    std::vector<std::unordered_map<uint32_t, uint32_t>> ifOf; // [node][neighbour] = interface
    std::vector<Ipv4Address> hostAddr;

    Ptr<PathRouting> Routing(uint32_t node) const
    {
        return DynamicCast<PathRouting>(nodes.Get(node)->GetObject<Ipv4>()->GetRoutingProtocol());
    }
};

/// The FatTree, numbered and wired as netstep's fat_tree.rs; every device traced for drops and
/// transmissions.
Network
BuildFatTree(uint32_t k, const std::string& rate, const std::string& delay, uint32_t buffer)
{
    const uint32_t half = k / 2;
    const uint32_t edges = k * half;
    const uint32_t hosts = edges * half;
    const uint32_t nodesN = hosts + 2 * edges + half * half;
    Network net;
    net.nodes.Create(nodesN);
    net.ifOf.resize(nodesN);
    net.hostAddr.resize(hosts);
    InternetStackHelper stack;
    stack.SetRoutingHelper(PathRoutingHelper());
    stack.Install(net.nodes);

    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue(rate));
    p2p.SetChannelAttribute("Delay", StringValue(delay));
    p2p.SetQueue("ns3::DropTailQueue",
                 "MaxSize",
                 QueueSizeValue(QueueSize(QueueSizeUnit::BYTES, buffer)));
    TrafficControlHelper hostFifo;
    hostFifo.SetRootQueueDisc("ns3::FifoQueueDisc",
                              "MaxSize",
                              QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, 4000000000u)));
    TrafficControlHelper tch;
    Ipv4AddressHelper addresses("10.0.0.0", "255.255.255.252");
    std::vector<std::tuple<uint32_t, uint32_t, Ipv4Address>> neighbours; // node, interface, peer
    auto link = [&](uint32_t a, uint32_t b) {
        NetDeviceContainer devs = p2p.Install(net.nodes.Get(a), net.nodes.Get(b));
        Ipv4InterfaceContainer ifc = addresses.Assign(devs); // installs FqCoDel on both ends
        addresses.NewNetwork();
        for (uint32_t side = 0; side < 2; ++side)
        {
            Ptr<NetDevice> dev = devs.Get(side);
            const uint32_t node = side ? b : a;
            tch.Uninstall(dev); // switches: no queue disc; hosts: the FIFO below
            if (node < hosts)
            {
                Ptr<QueueDisc> fifo = hostFifo.Install(dev).Get(0);
                fifo->TraceConnectWithoutContext("Drop", MakeCallback(&OnQdiscDrop));
                net.hostAddr[node] = ifc.GetAddress(side);
            }
            auto p2pDev = DynamicCast<PointToPointNetDevice>(dev);
            p2pDev->GetQueue()->TraceConnectWithoutContext(
                "Drop",
                MakeBoundCallback(&OnDeviceDrop, node));
            p2pDev->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&OnPhyTx));
            net.ifOf[node][side ? a : b] = ifc.Get(side).second;
            neighbours.emplace_back(node, ifc.Get(side).second, ifc.GetAddress(1 - side));
        }
    };
    for (uint32_t h = 0; h < hosts; ++h)
    {
        link(h, hosts + h / half);
    }
    for (uint32_t e = 0; e < edges; ++e) // edge e = pod * half + i, to every agg of its pod
    {
        for (uint32_t u = 0; u < half; ++u)
        {
            link(hosts + e, hosts + edges + (e / half) * half + u);
        }
    }
    for (uint32_t a = 0; a < edges; ++a) // agg a = pod * half + j, to cores j * half + u
    {
        for (uint32_t u = 0; u < half; ++u)
        {
            link(hosts + edges + a, hosts + 2 * edges + (a % half) * half + u);
        }
    }
    for (const auto& [node, iface, gateway] : neighbours)
    {
        net.Routing(node)->SetNeighbor(iface, gateway);
    }
    for (uint32_t n = 0; n < nodesN; ++n)
    {
        Ptr<Node> node = net.nodes.Get(n);
        bool ok = node->GetObject<TrafficControlLayer>()->TraceConnectWithoutContext(
            "TcDrop",
            MakeBoundCallback(&OnTcDrop, n));
        ok = ok && node->GetObject<Ipv4L3Protocol>()->TraceConnectWithoutContext(
                       "Drop",
                       MakeCallback(&OnIpv4Drop));
        NS_ABORT_MSG_IF(!ok, "a drop trace source is missing");
    }
    return net;
}

/// Each flow's path in the switches' tables, its PacketSink and its BulkSendApplication.
void
InstallFlows(const Network& net)
{
    for (uint32_t i = 0; i < g_flows.size(); ++i)
    {
        Flow& f = g_flows[i];
        for (size_t h = 0; h < f.path.size(); ++h)
        {
            const uint32_t n = f.path[h];
            NS_ABORT_MSG_IF(n >= net.ifOf.size(), "flow " << i << ": no node " << n);
            for (size_t dir = 0; dir < 2; ++dir)
            {
                if ((dir == 0 && h + 1 == f.path.size()) || (dir == 1 && h == 0))
                {
                    continue;
                }
                const uint32_t next = dir == 0 ? f.path[h + 1] : f.path[h - 1];
                auto it = net.ifOf[n].find(next);
                NS_ABORT_MSG_IF(it == net.ifOf[n].end(),
                                "flow " << i << ": no link " << n << "-" << next);
                net.Routing(n)->AddHop(int64_t(i) * 2 + dir, it->second);
            }
        }
        const uint16_t port = kBasePort + i;
        PacketSinkHelper sink("ns3::TcpSocketFactory",
                              InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sinkApp = sink.Install(net.nodes.Get(f.dst));
        sinkApp.Start(PicoSeconds(f.startPs)); // listening before the SYN arrives
        sinkApp.Get(0)->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnSinkRx, i));
        BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(net.hostAddr[f.dst], port));
        bulk.SetAttribute("MaxBytes", UintegerValue(f.size));
        bulk.SetAttribute("SendSize", UintegerValue(1460));
        ApplicationContainer app = bulk.Install(net.nodes.Get(f.src));
        app.Start(PicoSeconds(f.startPs));
        f.app = DynamicCast<BulkSendApplication>(app.Get(0));
        Simulator::Schedule(PicoSeconds(f.startPs), &ScheduleAttach, i);
    }
}

void
WriteResults(const std::string& outFile,
             const std::string& summaryFile,
             double wall,
             const std::string& recovery)
{
    std::ofstream out(outFile);
    out << "flow_id,app_start_ps,first_data_tx_ps,last_rx_ps,rx_bytes,timeouts,loss_states,"
           "retransmissions,drops_data,drops_ack\n";
    uint64_t completed = 0;
    for (uint32_t i = 0; i < g_flows.size(); ++i)
    {
        const Flow& f = g_flows[i];
        completed += f.lastRxPs >= 0;
        out << i << ',' << f.startPs << ',' << f.firstDataTxPs << ',' << f.lastRxPs << ','
            << f.rxBytes << ',' << f.timeouts << ',' << f.lossStates << ',' << f.retransmissions
            << ',' << f.dropsData << ',' << f.dropsAck << '\n';
    }
    std::ofstream summary(summaryFile);
    summary << std::setprecision(12) << "{\"run_wall_seconds\": " << wall
            << ", \"sim_end_ps\": " << Simulator::Now().GetPicoSeconds()
            << ", \"flows\": " << g_flows.size() << ", \"flows_completed\": " << completed
            << ", \"device_queue_drops\": " << g_deviceDrops << ", \"tc_drops\": " << g_tcDrops
            << ", \"host_qdisc_drops\": " << g_qdiscDrops << ", \"ipv4_drops\": " << g_ipv4Drops
            << ", \"unattributed_drops\": " << g_unattributed << ", \"packet_hops\": " << g_phyTx
            << ", \"recovery\": \"" << recovery << "\"}\n";
}

} // namespace

int
main(int argc, char* argv[])
{
    Time::SetResolution(Time::PS); // 1,502 B at 10 Gb/s is 1,201.6 ns: exact in ps
    uint32_t k = 4;
    std::string flowsFile;
    std::string outFile = "ns3_flows.csv";
    std::string summaryFile = "ns3_summary.json";
    std::string rate = "10Gbps";
    std::string delay = "1us";
    uint32_t buffer = 256000;
    std::string recovery = "prr";
    CommandLine cmd(__FILE__);
    cmd.AddValue("k", "FatTree radix (even)", k);
    cmd.AddValue("flows", "flow list (CSV)", flowsFile);
    cmd.AddValue("out", "per-flow results (CSV)", outFile);
    cmd.AddValue("summary", "totals (JSON)", summaryFile);
    cmd.AddValue("rate", "link rate", rate);
    cmd.AddValue("delay", "link propagation delay", delay);
    cmd.AddValue("buffer", "switch egress buffer in bytes", buffer);
    cmd.AddValue("recovery", "prr (TcpPrrRecovery, ns-3's default) or classic", recovery);
    std::string dropsFile;
    cmd.AddValue("drops",
                 "optional: every dropped packet (CSV: time_ps,node,flow,dir,seq,ack,size)",
                 dropsFile);
    std::string windowsFile;
    cmd.AddValue("windows",
                 "optional: every sender's cwnd, ssthresh and bytes-in-flight change (CSV)",
                 windowsFile);
    std::string sendsFile;
    cmd.AddValue("sends",
                 "optional: every segment a sender hands to IP (CSV: time_ps,flow,seq,payload)",
                 sendsFile);
    cmd.Parse(argc, argv);
    if (!windowsFile.empty())
    {
        g_windowLog.open(windowsFile);
        NS_ABORT_MSG_IF(!g_windowLog, "cannot write " << windowsFile);
        g_windowLog << "time_ps,flow,which,before,after\n";
    }
    if (!sendsFile.empty())
    {
        g_txLog.open(sendsFile);
        NS_ABORT_MSG_IF(!g_txLog, "cannot write " << sendsFile);
        g_txLog << "time_ps,flow,seq,payload\n";
    }
    if (!dropsFile.empty())
    {
        g_dropLog.open(dropsFile);
        NS_ABORT_MSG_IF(!g_dropLog, "cannot write " << dropsFile);
        g_dropLog << "time_ps,node,flow,dir,seq,ack,size\n";
    }
    NS_ABORT_MSG_IF(k < 2 || k % 2, "k must be even");
    NS_ABORT_MSG_IF(recovery != "prr" && recovery != "classic", "--recovery: prr or classic");
    g_flows = ReadFlows(flowsFile);
    ConfigureTcp(recovery);
    Network net = BuildFatTree(k, rate, delay, buffer);
    InstallFlows(net);

    const auto t0 = std::chrono::steady_clock::now();
    Simulator::Run();
    const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - t0;
    std::printf("ns-3 Simulator::Run() wall time: %.3f s\n", wall.count());
    WriteResults(outFile, summaryFile, wall.count(), recovery);
    Simulator::Destroy();
    return 0;
}
