// Which interface a host offers, over made-up interface lists: NCCL's
// default order, LOOM_SOCKET_IFNAME's list instead of it, the family rules,
// and the sentence when nothing qualifies.
#include "bootstrap/interface_choice.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/error.h"

namespace loom::test {
namespace {

using bootstrap::AddressFamily;
using bootstrap::ChosenInterface;
using bootstrap::HostInterface;
using bootstrap::InterfaceRequest;

HostInterface interface(const std::string& name, const std::vector<std::string>& addresses) {
  HostInterface result{name, {}};
  for (const std::string& text : addresses) result.addresses.push_back(*bootstrap::parseNumericAddress(text));
  return result;
}

InterfaceRequest request(const char* list, AddressFamily family = AddressFamily::kAny) {
  InterfaceRequest result;
  if (list != nullptr) result.list = bootstrap::parseInterfaceList(list, "LOOM_SOCKET_IFNAME");
  result.family = family;
  return result;
}

// "eth0 10.0.0.2": the choice, as a line a failing expectation can show.
std::string choose(const std::vector<HostInterface>& up, const InterfaceRequest& what) {
  const ChosenInterface chosen = bootstrap::chooseInterface(up, what);
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

const HostInterface kLo = interface("lo", {"127.0.0.1", "::1"});

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

}  // namespace
}  // namespace loom::test
