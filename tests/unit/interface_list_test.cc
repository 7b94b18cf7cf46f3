// LOOM_SOCKET_IFNAME's list, rule by rule as NCCL_SOCKET_IFNAME's, and the
// sentences for what is malformed.
#include "bootstrap/interface_list.h"

#include <gtest/gtest.h>

#include <string>

#include "base/error.h"

namespace loom::test {
namespace {

using bootstrap::InterfaceList;
using bootstrap::parseInterfaceList;

InterfaceList parse(const std::string& text) {
  return parseInterfaceList(text, "LOOM_SOCKET_IFNAME");
}

// The sentence a malformed value gets.
std::string refusal(const std::string& text) {
  try {
    parse(text);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), loomInvalidArgument);
    return e.what();
  }
  ADD_FAILURE() << "'" << text << "' was accepted";
  return "";
}

TEST(InterfaceListTest, PrefixesMatchTheStartOfNames) {
  const InterfaceList list = parse("eth");
  EXPECT_TRUE(list.matches("eth0"));
  EXPECT_TRUE(list.matches("eth1"));
  EXPECT_TRUE(list.matches("eth"));
  EXPECT_FALSE(list.matches("et"));
  EXPECT_FALSE(list.matches("veth0"));
  EXPECT_FALSE(list.matches("ib0"));
}

TEST(InterfaceListTest, CommasSeparatePrefixesAnyOfWhichMatches) {
  const InterfaceList list = parse("eth,ib");
  EXPECT_TRUE(list.matches("eth0"));
  EXPECT_TRUE(list.matches("ib1"));
  EXPECT_FALSE(list.matches("lo"));
  EXPECT_EQ(list.names, (std::vector<std::string>{"eth", "ib"}));
}

TEST(InterfaceListTest, CaretExcludesTheListedPrefixes) {
  const InterfaceList list = parse("^docker,lo");
  EXPECT_TRUE(list.exclude);
  EXPECT_FALSE(list.matches("docker0"));
  EXPECT_FALSE(list.matches("lo"));
  EXPECT_FALSE(list.matches("loop7"));
  EXPECT_TRUE(list.matches("eth0"));
  EXPECT_TRUE(list.matches("ib0"));
}

TEST(InterfaceListTest, EqualsMakesNamesExact) {
  const InterfaceList list = parse("=eth0,eth1");
  EXPECT_TRUE(list.exact);
  EXPECT_TRUE(list.matches("eth0"));
  EXPECT_TRUE(list.matches("eth1"));
  EXPECT_FALSE(list.matches("eth10"));
  EXPECT_FALSE(list.matches("eth"));
}

TEST(InterfaceListTest, CaretEqualsExcludesExactNames) {
  const InterfaceList list = parse("^=docker0");
  EXPECT_TRUE(list.exclude);
  EXPECT_TRUE(list.exact);
  EXPECT_FALSE(list.matches("docker0"));
  EXPECT_TRUE(list.matches("docker1"));
  EXPECT_TRUE(list.matches("docker"));
  EXPECT_TRUE(list.matches("eth0"));
}

TEST(InterfaceListTest, PortSuffixIsAcceptedAndIgnoredAsNcclDoesForSockets) {
  const InterfaceList list = parse("=eth0:1,ib0:2");
  EXPECT_EQ(list.names, (std::vector<std::string>{"eth0", "ib0"}));
  EXPECT_TRUE(list.matches("eth0"));
  EXPECT_TRUE(list.matches("ib0"));
}

TEST(InterfaceListTest, KeepsTheTextForSentences) {
  EXPECT_EQ(parse("^=lo,docker").text, "^=lo,docker");
}

TEST(InterfaceListTest, ListThatNamesNothingIsRefused) {
  for (const char* text : {"", "^", "=", "^="}) {
    const std::string sentence = refusal(text);
    EXPECT_NE(sentence.find("LOOM_SOCKET_IFNAME='" + std::string(text) + "' names no interface"), std::string::npos)
        << sentence;
    EXPECT_NE(sentence.find("unset it for the default order"), std::string::npos) << sentence;
  }
}

TEST(InterfaceListTest, EmptyEntriesAreRefusedNamingWhichOne) {
  EXPECT_NE(refusal("eth0,,ib0").find("LOOM_SOCKET_IFNAME='eth0,,ib0': entry 2 is empty"), std::string::npos);
  EXPECT_NE(refusal("eth0,").find("LOOM_SOCKET_IFNAME='eth0,': entry 2 is empty"), std::string::npos);
  EXPECT_NE(refusal(",eth0").find("entry 1 is empty"), std::string::npos);
  EXPECT_NE(refusal("^,eth0").find("entry 1 is empty"), std::string::npos);
  EXPECT_NE(refusal("=:1").find("entry 1 is empty"), std::string::npos);
}

TEST(InterfaceListTest, CaretOrEqualsInsideTheListIsRefused) {
  const std::string sentence = refusal("eth0,^lo");
  EXPECT_NE(sentence.find("entry 2 starts with '^', which applies to the whole list"), std::string::npos) << sentence;
  EXPECT_NE(refusal("eth0,=ib0").find("entry 2 starts with '='"), std::string::npos);
  EXPECT_NE(refusal("=^eth0").find("entry 1 starts with '^'"), std::string::npos);
}

TEST(InterfaceListTest, CharactersNoInterfaceNameHasAreRefused) {
  const std::string sentence = refusal("eth0, eth1");
  EXPECT_NE(sentence.find("entry 2 ' eth1' holds ' ', which no interface name has"), std::string::npos) << sentence;
  EXPECT_NE(refusal("eth0/1").find("holds '/'"), std::string::npos);
}

TEST(InterfaceListTest, PortThatIsNotANumberIsRefused) {
  const std::string sentence = refusal("eth0:x");
  EXPECT_NE(sentence.find("LOOM_SOCKET_IFNAME='eth0:x': entry 1 ends in ':x', which is not a port number"),
            std::string::npos)
      << sentence;
  EXPECT_NE(refusal("eth0:").find("ends in ':'"), std::string::npos);
}

TEST(InterfaceListTest, SentenceNamesTheVariableItWasGiven) {
  try {
    parseInterfaceList("^", "SOME_OTHER_VARIABLE");
    ADD_FAILURE() << "'^' was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("SOME_OTHER_VARIABLE='^'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace loom::test
