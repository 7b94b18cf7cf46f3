// LOOM_SOCKET_FAMILY's values, IPv4 and IPv6 addresses as Loom reads and
// writes them (MASTER_ADDR, TCP entries, sentences), and unique ids that
// carry either family.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <net/if.h>

#include <cstring>
#include <string>

#include "base/error.h"
#include "bootstrap/ip_address.h"
#include "bootstrap/socket.h"
#include "bootstrap/unique_id.h"

namespace loom::test {
namespace {

using bootstrap::AddressFamily;
using bootstrap::IpAddress;

IpAddress numeric(const char* text) {
  const std::optional<IpAddress> address = bootstrap::parseNumericAddress(text);
  EXPECT_TRUE(address.has_value()) << text;
  return address.value_or(IpAddress{});
}

template <typename Call>
std::string refusal(Call call) {
  try {
    call();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), loomInvalidArgument);
    return e.what();
  }
  ADD_FAILURE() << "accepted";
  return "";
}

TEST(SocketFamilyTest, TakesNcclsValues) {
  EXPECT_EQ(bootstrap::parseAddressFamily("", "LOOM_SOCKET_FAMILY"), AddressFamily::kAny);
  EXPECT_EQ(bootstrap::parseAddressFamily("AF_INET", "LOOM_SOCKET_FAMILY"), AddressFamily::kIpv4);
  EXPECT_EQ(bootstrap::parseAddressFamily("AF_INET6", "LOOM_SOCKET_FAMILY"), AddressFamily::kIpv6);
}

TEST(SocketFamilyTest, RefusesOtherValuesNamingTheVariableAndWhatIsAllowed) {
  for (const char* text : {"inet6", "af_inet6", "AF_INET4", "IPv6", "AF_INET6 "}) {
    const std::string sentence = refusal([&] { bootstrap::parseAddressFamily(text, "LOOM_SOCKET_FAMILY"); });
    EXPECT_NE(sentence.find("LOOM_SOCKET_FAMILY='" + std::string(text) +
                            "' is not a socket family Loom knows: use AF_INET (IPv4) or AF_INET6 (IPv6)"),
              std::string::npos)
        << sentence;
  }
}

TEST(SocketAddressTest, ParsesNumericAddressesOfBothFamilies) {
  EXPECT_EQ(numeric("198.18.0.1"), IpAddress::ipv4(htonl(0xc6120001)));
  const IpAddress v6 = numeric("2001:2::1");
  EXPECT_TRUE(v6.isIpv6());
  EXPECT_EQ(v6.toString(), "2001:2::1");
  EXPECT_EQ(numeric("[2001:2::1]"), v6);
  EXPECT_EQ(numeric("::1"), IpAddress::loopback(AF_INET6));
  EXPECT_TRUE(numeric("::1").isLoopback());
  EXPECT_TRUE(numeric("127.0.0.2").isLoopback());
  EXPECT_FALSE(v6.isLoopback());
}

TEST(SocketAddressTest, LinkLocalCarriesItsInterface) {
  const IpAddress linkLocal = numeric("fe80::1%lo");
  EXPECT_TRUE(linkLocal.isLinkLocalIpv6());
  EXPECT_EQ(linkLocal.scopeId, if_nametoindex("lo"));
  EXPECT_EQ(linkLocal.toString(), "fe80::1%lo");
  EXPECT_FALSE(numeric("2001:2::1").isLinkLocalIpv6());
  EXPECT_FALSE(bootstrap::parseNumericAddress("fe80::1%no-such-if0").has_value());
  EXPECT_FALSE(bootstrap::parseNumericAddress("fe80::1%").has_value());
}

TEST(SocketAddressTest, HostNamesAndMalformedTextAreNotNumeric) {
  for (const char* text : {"", "host0", "1.2.3", "198.18.0.256", "[198.18.0.1]", "2001:2::1]", "2001:2:::1"})
    EXPECT_FALSE(bootstrap::parseNumericAddress(text).has_value()) << text;
}

TEST(SocketAddressTest, EndpointsWriteIpv6InBrackets) {
  EXPECT_EQ((bootstrap::Endpoint{numeric("198.18.0.1"), 29500}.toString()), "198.18.0.1:29500");
  EXPECT_EQ((bootstrap::Endpoint{numeric("2001:2::1"), 29500}.toString()), "[2001:2::1]:29500");
}

TEST(SocketAddressTest, SocketAddressesRoundTrip) {
  for (const char* text : {"198.18.0.1", "2001:2::1", "fe80::1%lo"}) {
    const IpAddress address = numeric(text);
    sockaddr_storage storage{};
    const socklen_t length = bootstrap::toSockaddr(address, 4242, &storage);
    EXPECT_EQ(length, address.isIpv6() ? sizeof(sockaddr_in6) : sizeof(sockaddr_in));
    uint16_t port = 0;
    EXPECT_EQ(bootstrap::fromSockaddr(reinterpret_cast<sockaddr*>(&storage), &port), address) << text;
    EXPECT_EQ(port, 4242);
  }
}

TEST(SocketAddressTest, ResolvesNumbersAsWrittenWhateverTheFamily) {
  EXPECT_EQ(bootstrap::resolveAddress("::1", AddressFamily::kIpv4, "MASTER_ADDR"), IpAddress::loopback(AF_INET6));
  EXPECT_EQ(bootstrap::resolveAddress("[::1]", AddressFamily::kAny, "MASTER_ADDR"), IpAddress::loopback(AF_INET6));
  EXPECT_EQ(bootstrap::resolveAddress("127.0.0.1", AddressFamily::kIpv6, "MASTER_ADDR"), IpAddress::loopback(AF_INET));
}

TEST(SocketAddressTest, HostNamesResolveToIpv4FirstUnlessTheFamilySaysOtherwise) {
  EXPECT_EQ(bootstrap::resolveAddress("localhost", AddressFamily::kAny, "MASTER_ADDR"), IpAddress::loopback(AF_INET));
  EXPECT_EQ(bootstrap::resolveAddress("localhost", AddressFamily::kIpv4, "MASTER_ADDR"), IpAddress::loopback(AF_INET));
}

TEST(SocketAddressTest, LinkLocalWithoutItsInterfaceIsRefused) {
  const std::string sentence =
      refusal([] { bootstrap::resolveAddress("fe80::1", AddressFamily::kAny, "MASTER_ADDR"); });
  EXPECT_NE(sentence.find("MASTER_ADDR='fe80::1' is a link-local IPv6 address, which means nothing without the "
                          "interface it lies on: write it with that interface, as in fe80::1%eth0"),
            std::string::npos)
      << sentence;
  EXPECT_EQ(bootstrap::resolveAddress("fe80::1%lo", AddressFamily::kAny, "MASTER_ADDR").scopeId, if_nametoindex("lo"));
  const std::string unknown =
      refusal([] { bootstrap::resolveAddress("fe80::1%no-such-if0", AddressFamily::kAny, "MASTER_ADDR"); });
  EXPECT_NE(unknown.find("MASTER_ADDR='fe80::1%no-such-if0' is not an IPv6 address with the %interface of an "
                         "interface this host has"),
            std::string::npos)
      << unknown;
}

bootstrap::RendezvousAddress roundTrip(const bootstrap::RendezvousAddress& address) {
  return bootstrap::decodeUniqueId(bootstrap::encodeUniqueId(address));
}

TEST(UniqueIdTest, CarriesIpv4AndIpv6Endpoints) {
  for (const char* text : {"198.18.0.1", "2001:2::1", "fe80::1%lo"}) {
    bootstrap::RendezvousAddress address{bootstrap::Endpoint{numeric(text), 29500}, bootstrap::randomSecret()};
    const bootstrap::RendezvousAddress again = roundTrip(address);
    EXPECT_EQ(again.endpoint.address, address.endpoint.address) << text;
    EXPECT_EQ(again.endpoint.port, 29500);
    EXPECT_EQ(again.secret, address.secret);
  }
}

TEST(UniqueIdTest, IdOfTheIpv4OnlyFormatIsRefusedAsAnotherVersion) {
  loomUniqueId id = bootstrap::encodeUniqueId({bootstrap::Endpoint{numeric("198.18.0.1"), 29500}, {}});
  const uint32_t formatOne = 1;
  std::memcpy(id.internal + 4, &formatOne, sizeof(formatOne));
  const std::string sentence = refusal([&] { bootstrap::decodeUniqueId(id); });
  EXPECT_NE(sentence.find("was not made by loomGetUniqueId of this Loom version"), std::string::npos) << sentence;
}

TEST(UniqueIdTest, CorruptAddressFieldsAreRefused) {
  const loomUniqueId good = bootstrap::encodeUniqueId({bootstrap::Endpoint{numeric("198.18.0.1"), 29500}, {}});
  loomUniqueId badFamily = good;
  badFamily.internal[8] = 5;
  EXPECT_NE(refusal([&] {
              bootstrap::decodeUniqueId(badFamily);
            }).find("the loomUniqueId holds address family 5, neither IPv4 nor IPv6: it is corrupt"),
            std::string::npos);
  loomUniqueId longIpv4 = good;
  longIpv4.internal[16 + 4] = 1;  // past the IPv4 address's four bytes
  EXPECT_NE(refusal([&] { bootstrap::decodeUniqueId(longIpv4); }).find("bytes beyond its four"), std::string::npos);
  loomUniqueId noPort = good;
  noPort.internal[10] = noPort.internal[11] = 0;
  EXPECT_NE(refusal([&] { bootstrap::decodeUniqueId(noPort); }).find("holds port 0: it is corrupt"), std::string::npos);
}

}  // namespace
}  // namespace loom::test
