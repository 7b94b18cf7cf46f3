#include "bootstrap/link_rate.h"

#include <linux/ethtool.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "bootstrap/socket.h"

namespace loom::bootstrap {
namespace {

// How long the kernel may take to answer the queue dump, and how many
// replies are read at most: the dump of one host's queues is a few.
constexpr int kNetlinkWaitMs = 1000;
constexpr int kNetlinkReplies = 64;

// The NIC's speed (ETHTOOL_GSET needs no privilege); 0 when it has none
// (SPEED_UNKNOWN: a link down, many virtual NICs).
int64_t speedMbps(const std::string& name) {
  if (name.empty() || name.size() >= IFNAMSIZ) return 0;
  const Socket socketFd(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (socketFd.fd() < 0) return 0;
  ethtool_cmd command{};
  command.cmd = ETHTOOL_GSET;
  ifreq request{};
  std::memcpy(request.ifr_name, name.data(), name.size());
  request.ifr_data = reinterpret_cast<char*>(&command);
  if (ioctl(socketFd.fd(), SIOCETHTOOL, &request) != 0) return 0;
  const uint32_t speed = ethtool_cmd_speed(&command);
  return speed == 0 || speed == static_cast<uint32_t>(SPEED_UNKNOWN) ? 0 : speed;
}

// A token bucket's rate from its options (TCA_TBF_PARMS, and TCA_TBF_RATE64
// for rates past 4 GB/s), in bytes per second; 0 when they hold none.
uint64_t tbfBytesPerSecond(const rtattr* options) {
  uint64_t rate = 0;
  int length = static_cast<int>(RTA_PAYLOAD(options));
  for (const rtattr* a = static_cast<const rtattr*>(RTA_DATA(options)); RTA_OK(a, length); a = RTA_NEXT(a, length)) {
    const int type = a->rta_type & NLA_TYPE_MASK;
    if (type == TCA_TBF_PARMS && RTA_PAYLOAD(a) >= sizeof(tc_tbf_qopt)) {
      tc_tbf_qopt parameters;
      std::memcpy(&parameters, RTA_DATA(a), sizeof(parameters));
      if (rate == 0) rate = parameters.rate.rate;
    } else if (type == TCA_TBF_RATE64 && RTA_PAYLOAD(a) >= sizeof(uint64_t)) {
      std::memcpy(&rate, RTA_DATA(a), sizeof(rate));
    }
  }
  return rate;
}

// The rate of a tbf at the root of the interface's egress, from the
// kernel's dump of queues (RTM_GETQDISC); 0 when its root is another kind.
int64_t shapedMbps(const std::string& name) {
  const unsigned index = if_nametoindex(name.c_str());
  if (index == 0) return 0;
  const Socket netlink(socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE));
  if (netlink.fd() < 0) return 0;
  // Never wait on the kernel without a bound.
  const timeval wait{kNetlinkWaitMs / 1000, (kNetlinkWaitMs % 1000) * 1000};
  if (setsockopt(netlink.fd(), SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait)) != 0) return 0;
  struct {
    nlmsghdr header;
    tcmsg queue;
  } request{};
  request.header.nlmsg_len = NLMSG_LENGTH(sizeof(tcmsg));
  request.header.nlmsg_type = RTM_GETQDISC;
  request.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  request.header.nlmsg_seq = 1;
  request.queue.tcm_family = AF_UNSPEC;
  request.queue.tcm_ifindex = static_cast<int>(index);
  if (send(netlink.fd(), &request, request.header.nlmsg_len, 0) < 0) return 0;

  std::vector<char> buffer(1 << 16);
  for (int reply = 0; reply < kNetlinkReplies; ++reply) {
    ssize_t got = 0;
    do got = recv(netlink.fd(), buffer.data(), buffer.size(), 0);
    while (got < 0 && errno == EINTR);
    if (got <= 0) return 0;
    int length = static_cast<int>(got);
    for (const nlmsghdr* h = reinterpret_cast<const nlmsghdr*>(buffer.data()); NLMSG_OK(h, length);
         h = NLMSG_NEXT(h, length)) {
      if (h->nlmsg_seq != request.header.nlmsg_seq) continue;
      if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) return 0;
      if (h->nlmsg_type != RTM_NEWQDISC || h->nlmsg_len < NLMSG_LENGTH(sizeof(tcmsg))) continue;
      const tcmsg* queue = static_cast<const tcmsg*>(NLMSG_DATA(h));
      if (queue->tcm_ifindex != static_cast<int>(index) || queue->tcm_parent != TC_H_ROOT) continue;
      bool tbf = false;
      uint64_t bytesPerSecond = 0;
      int attributes = static_cast<int>(TCA_PAYLOAD(h));
      for (const rtattr* a = TCA_RTA(queue); RTA_OK(a, attributes); a = RTA_NEXT(a, attributes)) {
        const int type = a->rta_type & NLA_TYPE_MASK;
        if (type == TCA_KIND)
          tbf = strnlen(static_cast<const char*>(RTA_DATA(a)), RTA_PAYLOAD(a)) == 3 &&
                std::memcmp(RTA_DATA(a), "tbf", 3) == 0;
        else if (type == TCA_OPTIONS)
          bytesPerSecond = tbfBytesPerSecond(a);
      }
      // The root queue decides; another kind than tbf shapes nothing here.
      // A rate under 1 Mbit/s still shapes: it counts as 1.
      if (!tbf || bytesPerSecond == 0) return 0;
      return std::max<int64_t>(1, static_cast<int64_t>(bytesPerSecond * 8 / 1000000));
    }
  }
  return 0;
}

}  // namespace

LinkRate linkRateOf(const std::string& interfaceName) {
  LinkRate rate;
  const int64_t speed = speedMbps(interfaceName);
  const int64_t shaped = shapedMbps(interfaceName);
  const std::string speedText = speed > 0 ? "speed " + std::to_string(speed) + " Mb/s" : "no speed";
  if (shaped > 0 && (speed == 0 || shaped < speed)) {
    rate.mbps = shaped;
    rate.source = "tbf " + std::to_string(shaped) + " Mbit/s (" + speedText + ")";
  } else if (speed > 0) {
    rate.mbps = speed;
    rate.source = speedText;
  } else {
    rate.source = "no speed (the kernel gives none for " + interfaceName + ")";
  }
  return rate;
}

}  // namespace loom::bootstrap
