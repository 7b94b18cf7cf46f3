// Which interface a host offers, over made-up interface lists: NCCL's
// default order, the rendezvous's subnet within it, LOOM_SOCKET_IFNAME's
// list instead of it, the family rules, and the sentence when nothing
// qualifies.
#include "bootstrap/interface_choice.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "base/error.h"

namespace loom::test {
namespace {

using bootstrap::AddressFamily;
using bootstrap::ChosenInterface;
using bootstrap::HostInterface;
using bootstrap::InterfaceAddress;
using bootstrap::InterfaceRequest;
using bootstrap::IpAddress;

IpAddress address(const std::string& text) {
  return *bootstrap::parseNumericAddress(text);
}

// "198.18.0.2/24", or "198.18.0.2" alone: a /32 (or /128), a subnet of one.
InterfaceAddress withPrefix(const std::string& text) {
  const size_t slash = text.find('/');
  const IpAddress ip = address(text.substr(0, slash));
  return {ip, slash == std::string::npos ? (ip.isIpv6() ? 128 : 32) : std::stoi(text.substr(slash + 1))};
}

HostInterface interface(const std::string& name, const std::vector<std::string>& addresses) {
  HostInterface result{name, {}};
  for (const std::string& text : addresses) result.addresses.push_back(withPrefix(text));
  return result;
}

InterfaceRequest request(const char* list, AddressFamily family = AddressFamily::kAny) {
  InterfaceRequest result;
  if (list != nullptr) result.list = bootstrap::parseInterfaceList(list, "LOOM_SOCKET_IFNAME");
  result.family = family;
  return result;
}

// "eth0 10.0.0.2": the choice, as a line a failing expectation can show.
std::string choose(const std::vector<HostInterface>& up, const InterfaceRequest& what,
                   const std::optional<IpAddress>& rendezvous = std::nullopt) {
  const ChosenInterface chosen = bootstrap::chooseInterface(up, what, rendezvous);
  return chosen.name + " " + chosen.address.toString();
}

std::string refusal(const std::vector<HostInterface>& up, const InterfaceRequest& what) {
  try {
    bootstrap::chooseInterface(up, what);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), loomInvalidArgument);
    return e.what();
  }
  ADD_FAILURE() << "an interface was chosen";
  return "";
}

const HostInterface kLo = interface("lo", {"127.0.0.1/8", "::1/128"});

TEST(InterfaceChoiceTest, DefaultPrefersInfinibandInterfaces) {
  EXPECT_EQ(choose({kLo, interface("eth0", {"10.0.0.2"}), interface("ib0", {"10.1.0.2"})}, request(nullptr)),
            "ib0 10.1.0.2");
}

TEST(InterfaceChoiceTest, DefaultSkipsDockerLoopbackAndLibvirtBridges) {
  const std::vector<HostInterface> up = {kLo, interface("docker0", {"172.17.0.1"}),
                                         interface("virbr0", {"192.168.122.1"}), interface("eth0", {"10.0.0.2"})};
  EXPECT_EQ(choose(up, request(nullptr)), "eth0 10.0.0.2");
}

TEST(InterfaceChoiceTest, DefaultFallsBackToDockerThenLoopbackThenLibvirt) {
  const HostInterface docker = interface("docker0", {"172.17.0.1"});
  const HostInterface virbr = interface("virbr0", {"192.168.122.1"});
  EXPECT_EQ(choose({kLo, virbr, docker}, request(nullptr)), "docker0 172.17.0.1");
  EXPECT_EQ(choose({virbr, kLo}, request(nullptr)), "lo 127.0.0.1");
  EXPECT_EQ(choose({virbr}, request(nullptr)), "virbr0 192.168.122.1");
}

TEST(InterfaceChoiceTest, FirstInTheSystemsOrderWithinAStage) {
  EXPECT_EQ(choose({interface("eth1", {"10.0.1.2"}), interface("eth0", {"10.0.0.2"})}, request(nullptr)),
            "eth1 10.0.1.2");
  EXPECT_EQ(choose({interface("eth1", {"10.0.1.2"}), interface("eth0", {"10.0.0.2"})}, request("=eth0,eth1")),
            "eth1 10.0.1.2");
}

TEST(InterfaceChoiceTest, WithoutAFamilyIpv4ComesFirst) {
  // As NCCL, whose getifaddrs lists every IPv4 address before any IPv6 one.
  EXPECT_EQ(choose({interface("eth0", {"2001:2::2"}), interface("eth1", {"10.0.1.2"})}, request(nullptr)),
            "eth1 10.0.1.2");
  EXPECT_EQ(choose({interface("eth0", {"2001:2::2", "10.0.0.2"})}, request(nullptr)), "eth0 10.0.0.2");
  EXPECT_EQ(choose({interface("eth0", {"2001:2::2"}), kLo}, request(nullptr)), "eth0 2001:2::2");
}

TEST(InterfaceChoiceTest, FamilyRestrictsTheAddresses) {
  const std::vector<HostInterface> up = {kLo, interface("eth0", {"10.0.0.2", "2001:2::2"}),
                                         interface("eth1", {"10.0.1.2"})};
  EXPECT_EQ(choose(up, request(nullptr, AddressFamily::kIpv6)), "eth0 2001:2::2");
  EXPECT_EQ(choose(up, request(nullptr, AddressFamily::kIpv4)), "eth0 10.0.0.2");
  EXPECT_EQ(choose(up, request("=eth1", AddressFamily::kIpv4)), "eth1 10.0.1.2");
  EXPECT_EQ(choose({interface("eth0", {"2001:2::2"}), interface("eth1", {"10.0.1.2"})},
                   request(nullptr, AddressFamily::kIpv4)),
            "eth1 10.0.1.2");
}

TEST(InterfaceChoiceTest, LinkLocalIpv6IsNeverChosenButLoopbackIs) {
  const std::vector<HostInterface> up = {kLo, interface("eth0", {"10.0.0.2", "fe80::1"})};
  EXPECT_EQ(choose(up, request(nullptr, AddressFamily::kIpv6)), "lo ::1");
  EXPECT_EQ(choose(up, request("lo", AddressFamily::kIpv6)), "lo ::1");
}

TEST(InterfaceChoiceTest, ListReplacesTheDefaultOrder) {
  const std::vector<HostInterface> up = {kLo, interface("docker0", {"172.17.0.1"}), interface("eth0", {"10.0.0.2"}),
                                         interface("ib0", {"10.1.0.2"})};
  EXPECT_EQ(choose(up, request("^lo,docker")), "eth0 10.0.0.2");  // no ib preference once a list is set
  EXPECT_EQ(choose(up, request("lo")), "lo 127.0.0.1");
  EXPECT_EQ(choose(up, request("docker")), "docker0 172.17.0.1");
  EXPECT_EQ(choose(up, request("^=eth0,lo,docker0")), "ib0 10.1.0.2");
}

TEST(InterfaceChoiceTest, ListThatSelectsNothingNamesItsValueAndWhatIsUp) {
  const std::vector<HostInterface> up = {kLo, interface("eth0", {"10.0.0.2", "fe80::1"})};
  const std::string sentence = refusal(up, request("=eth"));
  EXPECT_EQ(sentence,
            "LOOM_SOCKET_IFNAME='=eth' selects no interface that is up and running with an IPv4 or IPv6 address; "
            "interfaces up: lo (127.0.0.1, ::1), eth0 (10.0.0.2, fe80::1 link-local, never used)");
}

TEST(InterfaceChoiceTest, FamilyNothingHasIsNamedInTheSentence) {
  const std::vector<HostInterface> up = {interface("lo", {"127.0.0.1"}), interface("eth0", {"10.0.0.2", "fe80::1"})};
  EXPECT_EQ(refusal(up, request(nullptr, AddressFamily::kIpv6)),
            "no interface that is up and running with an IPv6 address (LOOM_SOCKET_FAMILY=AF_INET6); interfaces "
            "up: lo (127.0.0.1), eth0 (10.0.0.2, fe80::1 link-local, never used)");
  EXPECT_NE(refusal(up, request("=eth0", AddressFamily::kIpv6))
                .find("LOOM_SOCKET_IFNAME='=eth0' selects no interface that is up and running with an IPv6 address "
                      "(LOOM_SOCKET_FAMILY=AF_INET6)"),
            std::string::npos);
}

TEST(InterfaceChoiceTest, NothingUpIsSaid) {
  EXPECT_NE(refusal({}, request(nullptr)).find("interfaces up: none"), std::string::npos);
  EXPECT_NE(refusal({interface("eth1", {})}, request(nullptr)).find("interfaces up: eth1 (no address)"),
            std::string::npos);
}

TEST(InterfaceChoiceTest, DescribesWhatDecided) {
  EXPECT_EQ(request(nullptr).describe(), "LOOM_SOCKET_IFNAME unset");
  EXPECT_EQ(request("^lo,docker", AddressFamily::kIpv6).describe(),
            "LOOM_SOCKET_IFNAME='^lo,docker', LOOM_SOCKET_FAMILY=AF_INET6");
  EXPECT_EQ(request(nullptr, AddressFamily::kIpv4).describe(), "LOOM_SOCKET_IFNAME unset, LOOM_SOCKET_FAMILY=AF_INET");
}

TEST(InterfaceChoiceTest, WritesTheChoiceAsNcclDoes) {
  const std::vector<HostInterface> up = {interface("eth0", {"198.18.0.1", "2001:2::1"})};
  EXPECT_EQ(bootstrap::chooseInterface(up, request(nullptr)).toString(29500), "eth0:198.18.0.1<29500>");
  EXPECT_EQ(bootstrap::chooseInterface(up, request(nullptr, AddressFamily::kIpv6)).toString(29500),
            "eth0:2001:2::1<29500>");
}

// --- The rendezvous's subnet (NCCL's ncclFindInterfaceMatchSubnet) ---------------

// A management NIC first in the system's order, the data NIC that reaches
// the master second: the default order alone would take eth0.
const std::vector<HostInterface> kTwoNics = {kLo, interface("eth0", {"10.0.0.2/24", "2001:db8:1::2/64"}),
                                             interface("eth1", {"198.18.0.2/24", "2001:2::2/64"})};

TEST(InterfaceChoiceTest, RendezvousSubnetPicksTheNicThatReachesIt) {
  EXPECT_EQ(choose(kTwoNics, request(nullptr)), "eth0 10.0.0.2");
  EXPECT_EQ(choose(kTwoNics, request(nullptr), address("198.18.0.1")), "eth1 198.18.0.2");
  EXPECT_EQ(choose(kTwoNics, request(nullptr), address("10.0.0.9")), "eth0 10.0.0.2");
}

TEST(InterfaceChoiceTest, RendezvousSubnetMatchesIpv6AndItsFamilyOnly) {
  // An IPv6 rendezvous takes the IPv6 address of the NIC on its subnet,
  // though IPv4 addresses otherwise come first (as NCCL: families must match).
  EXPECT_EQ(choose(kTwoNics, request(nullptr), address("2001:2::1")), "eth1 2001:2::2");
  EXPECT_EQ(choose(kTwoNics, request(nullptr), address("2001:db8:1::ff")), "eth0 2001:db8:1::2");
  EXPECT_EQ(choose(kTwoNics, request(nullptr), address("2001:2:0:1::1")), "eth0 10.0.0.2");  // other /64
}

TEST(InterfaceChoiceTest, RendezvousSubnetHonoursThePrefixLength) {
  const std::vector<HostInterface> up = {interface("eth0", {"198.18.0.2/24"}), interface("eth1", {"198.19.0.130/25"}),
                                         interface("eth2", {"198.19.0.2/23"})};
  EXPECT_EQ(choose(up, request(nullptr), address("198.19.0.200")), "eth1 198.19.0.130");
  EXPECT_EQ(choose(up, request(nullptr), address("198.19.0.100")), "eth2 198.19.0.2");  // below eth1's /25
  EXPECT_EQ(choose(up, request(nullptr), address("198.19.1.1")), "eth2 198.19.0.2");
  EXPECT_EQ(choose(up, request(nullptr), address("198.19.2.1")), "eth0 198.18.0.2");
  EXPECT_TRUE(InterfaceAddress({address("198.18.0.2"), 0}).sameSubnet(address("8.8.8.8")));
  EXPECT_FALSE(InterfaceAddress({address("198.18.0.2"), 0}).sameSubnet(address("2001:2::1")));
  EXPECT_TRUE(InterfaceAddress({address("2001:2::2"), 48}).sameSubnet(address("2001:2:0:ffff::1")));
  EXPECT_FALSE(InterfaceAddress({address("2001:2::2"), 49}).sameSubnet(address("2001:2:8000::1")));
}

TEST(InterfaceChoiceTest, RendezvousSubnetHonoursTheFamily) {
  // LOOM_SOCKET_FAMILY=AF_INET6 and an IPv4 rendezvous: nothing may match,
  // so the default order decides, among IPv6 addresses.
  EXPECT_EQ(choose(kTwoNics, request(nullptr, AddressFamily::kIpv6), address("198.18.0.1")), "eth0 2001:db8:1::2");
  EXPECT_EQ(choose(kTwoNics, request(nullptr, AddressFamily::kIpv6), address("2001:2::1")), "eth1 2001:2::2");
  EXPECT_EQ(choose(kTwoNics, request(nullptr, AddressFamily::kIpv4), address("2001:2::1")), "eth0 10.0.0.2");
  EXPECT_EQ(choose(kTwoNics, request(nullptr, AddressFamily::kIpv4), address("198.18.0.1")), "eth1 198.18.0.2");
}

TEST(InterfaceChoiceTest, WithoutASubnetMatchTheDefaultOrderDecides) {
  const std::vector<HostInterface> up = {kLo, interface("docker0", {"172.17.0.1/16"}),
                                         interface("eth0", {"10.0.0.2/24"}), interface("eth1", {"10.0.1.2/24"})};
  EXPECT_EQ(choose(up, request(nullptr), address("198.18.0.1")), "eth0 10.0.0.2");
  EXPECT_EQ(choose({kLo, interface("docker0", {"172.17.0.1/16"})}, request(nullptr), address("198.18.0.1")),
            "docker0 172.17.0.1");
  // A link-local address is never chosen, even on the rendezvous's link.
  EXPECT_EQ(choose({kLo, interface("eth0", {"10.0.0.2/24", "fe80::2/64"})}, request(nullptr), address("fe80::1%lo")),
            "eth0 10.0.0.2");
}

TEST(InterfaceChoiceTest, AListSetTurnsTheSubnetStepOff) {
  EXPECT_EQ(choose(kTwoNics, request("eth"), address("198.18.0.1")), "eth0 10.0.0.2");
  EXPECT_EQ(choose(kTwoNics, request("^lo"), address("2001:2::1")), "eth0 10.0.0.2");
  EXPECT_EQ(choose(kTwoNics, request("=eth1"), address("10.0.0.9")), "eth1 198.18.0.2");
}

TEST(InterfaceChoiceTest, ARendezvousOnLoopbackDoesNotPickLo) {
  EXPECT_EQ(choose(kTwoNics, request(nullptr), address("127.0.0.1")), "eth0 10.0.0.2");
  EXPECT_EQ(choose(kTwoNics, request(nullptr), address("127.0.0.2")), "eth0 10.0.0.2");
  EXPECT_EQ(choose(kTwoNics, request(nullptr), address("::1")), "eth0 10.0.0.2");
  EXPECT_EQ(choose(kTwoNics, request(nullptr, AddressFamily::kIpv6), address("::1")), "eth0 2001:db8:1::2");
}

TEST(InterfaceChoiceTest, ARendezvousOnThisHostsNicPicksThatNic) {
  // Rank 0 where MASTER_ADDR is its own eth1: eth1, as on every other host.
  EXPECT_EQ(choose(kTwoNics, request(nullptr), address("198.18.0.2")), "eth1 198.18.0.2");
}

TEST(InterfaceChoiceTest, InfinibandStillComesBeforeTheSubnet) {
  // As NCCL's ncclFindInterfaces: ib*, then NCCL_COMM_ID's subnet, then the rest.
  std::vector<HostInterface> up = kTwoNics;
  up.push_back(interface("ib0", {"10.1.0.2/16"}));
  EXPECT_EQ(choose(up, request(nullptr), address("198.18.0.1")), "ib0 10.1.0.2");
}

TEST(InterfaceChoiceTest, SaysWhatDecided) {
  const auto why = [](const std::vector<HostInterface>& up, const InterfaceRequest& what,
                      const std::optional<IpAddress>& rendezvous) {
    return bootstrap::chooseInterface(up, what, rendezvous).why;
  };
  EXPECT_EQ(why(kTwoNics, request(nullptr), address("198.18.0.1")),
            "same subnet as the rendezvous 198.18.0.1, LOOM_SOCKET_IFNAME unset");
  EXPECT_EQ(why(kTwoNics, request(nullptr, AddressFamily::kIpv6), address("2001:2::1")),
            "same subnet as the rendezvous 2001:2::1, LOOM_SOCKET_IFNAME unset, LOOM_SOCKET_FAMILY=AF_INET6");
  EXPECT_EQ(why(kTwoNics, request(nullptr), address("192.0.2.1")),
            "LOOM_SOCKET_IFNAME unset; no interface shares a subnet with the rendezvous 192.0.2.1");
  EXPECT_EQ(why(kTwoNics, request(nullptr), address("127.0.0.1")), "LOOM_SOCKET_IFNAME unset");
  EXPECT_EQ(why(kTwoNics, request(nullptr), std::nullopt), "LOOM_SOCKET_IFNAME unset");
  EXPECT_EQ(why(kTwoNics, request("=eth1"), address("198.18.0.1")), "LOOM_SOCKET_IFNAME='=eth1'");
}

}  // namespace
}  // namespace loom::test
