#include "transport/tcp/tcp_setup.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>

#include "base/error.h"
#include "base/logging.h"
#include "bootstrap/host_interfaces.h"
#include "bootstrap/link_rate.h"
#include "bootstrap/unique_id.h"
#include "transport/tcp/tcp_accept.h"
#include "transport/tcp/tcp_buffers.h"
#include "transport/tcp/tcp_hello.h"
#include "transport/tcp/tcp_settings.h"
#include "transport/transport.h"

namespace loom::tcp {
namespace {

// The most a link may claim to carry: 1 Pbit/s.
constexpr long long kMaxLinkMbps = 1000000000;

struct Entry {
  bootstrap::Endpoint endpoint;
  bootstrap::Secret token{};
  int sockets = 0;
  int64_t linkMbps = 0;  // its interface's rate (bootstrap/link_rate.h); 0: unknown
};

std::string hex(const bootstrap::Secret& bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (uint8_t b : bytes) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
  return out;
}

// A rate in whole Mbit/s, digits alone, up to kMaxLinkMbps.
bool parseLinkMbps(const char* text, int64_t* mbps) {
  const size_t digits = std::strspn(text, "0123456789");
  if (digits == 0 || text[digits] != '\0' || digits > 10) return false;
  const long long value = std::strtoll(text, nullptr, 10);
  if (value > kMaxLinkMbps) return false;
  *mbps = value;
  return true;
}

Entry parseEntry(const std::string& text, int rank) {
  Entry entry;
  char address[64] = {}, token[64] = {};
  unsigned port = 0;
  int sockets = 0;
  char linkMbps[24] = {};
  int end = 0;
  if (std::sscanf(text.c_str(), "%63s %u %63s %d %23s%n", address, &port, token, &sockets, linkMbps, &end) != 5 ||
      static_cast<size_t>(end) != text.size() || port == 0 || port > 65535 ||
      std::strlen(token) != 2 * entry.token.size() || sockets < 1 || !parseLinkMbps(linkMbps, &entry.linkMbps))
    fail(loomRemoteError,
         "rank " + std::to_string(rank) + " sent a malformed TCP entry at init: '" + text.substr(0, 120) + "'");
  for (size_t i = 0; i < entry.token.size(); ++i) {
    unsigned byte = 0;
    if (std::sscanf(token + 2 * i, "%2x", &byte) != 1)
      fail(loomRemoteError, "rank " + std::to_string(rank) + " sent a malformed TCP token at init");
    entry.token[i] = static_cast<uint8_t>(byte);
  }
  const std::optional<bootstrap::IpAddress> numeric = bootstrap::parseNumericAddress(address);
  if (!numeric)
    fail(loomRemoteError, "rank " + std::to_string(rank) + " sent a TCP entry at init whose address '" +
                              std::string(address) + "' is neither IPv4 nor IPv6");
  entry.endpoint = bootstrap::Endpoint{*numeric, static_cast<uint16_t>(port)};
  entry.sockets = sockets;
  return entry;
}

}  // namespace

NetworkRate slowestLink(const std::vector<int64_t>& linkMbps) {
  NetworkRate slowest;
  for (size_t index = 0; index < linkMbps.size(); ++index) {
    const int64_t mbps = linkMbps[index];
    const int rank = static_cast<int>(index);
    if (mbps == 0 && slowest.unknownRank < 0) slowest.unknownRank = rank;
    if (mbps > 0 && (slowest.rank < 0 || mbps < slowest.mbps)) {
      slowest.mbps = mbps;
      slowest.rank = rank;
    }
  }
  return slowest;
}

std::vector<std::vector<bootstrap::Socket>> connectPeers(const TransportSetup& setup, TcpLinks* links) {
  const auto& settings = static_cast<const TcpSettings&>(setup.own);
  const int n = settings.socketsPerPeer;
  const int perPeer = kChannels * n;
  bootstrap::Socket listener;
  bootstrap::Secret token = bootstrap::randomSecret();
  std::string mine;
  if (!setup.peers.empty()) {
    // The rendezvous's address hints at the NIC that reaches the other
    // hosts: with LOOM_SOCKET_IFNAME unset, one on its subnet is preferred.
    const bootstrap::ChosenInterface interface =
        bootstrap::findInterface(setup.settings.network, setup.rendezvous.address());
    uint16_t port = 0;
    listener = bootstrap::listenTcp(bootstrap::Endpoint{interface.address, 0}, &port, settings.socketBufferBytes);
    links->interfaceName = interface.name;
    const bootstrap::LinkRate rate = bootstrap::linkRateOf(interface.name);
    // As NCCL's "NET/Socket : Using eth0:10.0.0.1<0>": which interface and
    // address, and what chose them, once per rank.
    LOOM_INFO("INIT", setup.rank,
              "TCP: using " << interface.toString(port) << " (" << interface.why << "), link " << rate.source);
    // Never link-local (interface_choice.h), so the text needs no %scope.
    mine = interface.address.toString() + " " + std::to_string(port) + " " + hex(token) + " " + std::to_string(n) +
           " " + std::to_string(rate.mbps);
  }
  const std::vector<std::string> texts = setup.rendezvous.allGather(mine);
  // Every rank reads every entry: the links' rates are all ranks' alike.
  std::vector<std::optional<Entry>> entries(texts.size());
  std::vector<int64_t> linkMbps(texts.size(), -1);
  for (size_t rank = 0; rank < texts.size(); ++rank) {
    if (texts[rank].empty()) continue;
    entries[rank] = parseEntry(texts[rank], static_cast<int>(rank));
    linkMbps[rank] = entries[rank]->linkMbps;
  }
  links->slowest = slowestLink(linkMbps);

  std::vector<std::vector<bootstrap::Socket>> sockets(setup.peers.size());
  std::map<int, size_t> indexOf;
  for (size_t i = 0; i < setup.peers.size(); ++i) {
    indexOf[setup.peers[i]] = i;
    sockets[i].resize(perPeer);
  }
  const Deadline deadline = Deadline::afterMs(setup.settings.timeoutMs);
  // Up: connect. The peer's kernel completes the handshake before it calls
  // accept, so connecting first and accepting after cannot deadlock.
  for (int peer : setup.peers) {
    if (!entries[peer])
      fail(loomRemoteError, "rank " + std::to_string(peer) + " sent no TCP entry at init, though rank " +
                                std::to_string(setup.rank) + " reaches it over TCP");
    const Entry& entry = *entries[peer];
    if (entry.sockets != n)
      fail(loomInvalidUsage, "rank " + std::to_string(peer) + " uses " + std::to_string(entry.sockets) +
                                 " TCP sockets per peer and rank " + std::to_string(setup.rank) + " uses " +
                                 std::to_string(n) + ": set LOOM_SOCKET_NSOCKS alike on every rank");
    if (peer < setup.rank) continue;
    // connectTcp sets TCP_NODELAY, and names the address itself: "cannot connect to <listener> at <address>".
    const std::string listener = "rank " + std::to_string(peer) + "'s TCP listener";
    const std::string what = listener + " at " + entry.endpoint.toString();
    for (int s = 0; s < perPeer; ++s) {
      bootstrap::Socket socket =
          bootstrap::connectTcp(entry.endpoint, deadline, listener.c_str(), settings.socketBufferBytes);
      const Hello hello = makeHello(entry.token, setup.rank, s);
      bootstrap::sendAll(socket.fd(), &hello, sizeof(hello), deadline, what);
      sockets[indexOf[peer]][s] = std::move(socket);
    }
  }
  // Down: accept, and keep only connections that prove the token.
  ExpectedConnections below{setup.rank, setup.settings.timeoutMs, token, {}, perPeer};
  for (int peer : setup.peers)
    if (peer < setup.rank) below.peers.push_back(peer);
  if (!below.peers.empty()) {
    std::vector<std::vector<bootstrap::Socket>> accepted = acceptPeers(listener.fd(), below, deadline);
    for (size_t i = 0; i < below.peers.size(); ++i) sockets[indexOf[below.peers[i]]] = std::move(accepted[i]);
  }
  if (!setup.peers.empty()) reportSocketBuffers(setup.rank, sockets[0][0].fd(), settings.socketBufferBytes);
  return sockets;
}

}  // namespace loom::tcp
