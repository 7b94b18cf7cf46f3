// How the logging variables are read: NCCL's spellings and rules, and a
// sentence (never a crash) for values that make no sense.
#include <gtest/gtest.h>

#include "base/log_settings.h"

namespace loom {
namespace {

TEST(LogSettings, LevelsAreCaseInsensitive) {
  EXPECT_EQ(parseLogSettings("info", nullptr, nullptr, nullptr).level, LogLevel::kInfo);
  EXPECT_EQ(parseLogSettings("INFO", nullptr, nullptr, nullptr).level, LogLevel::kInfo);
  EXPECT_EQ(parseLogSettings("Trace", nullptr, nullptr, nullptr).level, LogLevel::kTrace);
  EXPECT_EQ(parseLogSettings("version", nullptr, nullptr, nullptr).level, LogLevel::kVersion);
  EXPECT_EQ(parseLogSettings("warn", nullptr, nullptr, nullptr).level, LogLevel::kWarn);
  EXPECT_EQ(parseLogSettings("none", nullptr, nullptr, nullptr).level, LogLevel::kNone);
  EXPECT_TRUE(parseLogSettings("INFO", nullptr, nullptr, nullptr).problems.empty());
}

TEST(LogSettings, DefaultsAreWarnAllSubsystemsStderrAndNcclTimestamp) {
  LogSettings s = parseLogSettings(nullptr, nullptr, nullptr, nullptr);
  EXPECT_EQ(s.level, LogLevel::kWarn);
  EXPECT_TRUE(s.subsystems.empty());
  EXPECT_FALSE(s.subsystemsExcluded);
  EXPECT_EQ(s.fileTemplate, "");
  EXPECT_EQ(s.timestampFormat, "[%F %T] ");
  EXPECT_TRUE(s.problems.empty());
}

TEST(LogSettings, UnknownLevelKeepsWarnAndSaysWhy) {
  LogSettings s = parseLogSettings("LOUD", nullptr, nullptr, nullptr);
  EXPECT_EQ(s.level, LogLevel::kWarn);
  ASSERT_EQ(s.problems.size(), 1u);
  EXPECT_EQ(s.problems[0], "LOOM_DEBUG='LOUD' is not one of NONE, VERSION, WARN, INFO, TRACE; using WARN");
}

TEST(LogSettings, SubsystemsAreCaseInsensitiveLists) {
  LogSettings s = parseLogSettings("INFO", "init,Tuning,ENV", nullptr, nullptr);
  EXPECT_EQ(s.subsystems, (std::vector<std::string>{"INIT", "TUNING", "ENV"}));
  EXPECT_FALSE(s.subsystemsExcluded);
}

TEST(LogSettings, CaretExcludesTheListedSubsystems) {
  LogSettings s = parseLogSettings("INFO", "^coll,init", nullptr, nullptr);
  EXPECT_EQ(s.subsystems, (std::vector<std::string>{"COLL", "INIT"}));
  EXPECT_TRUE(s.subsystemsExcluded);
}

TEST(LogSettings, AllMeansEverySubsystem) {
  EXPECT_TRUE(parseLogSettings("INFO", "all", nullptr, nullptr).subsystems.empty());
  EXPECT_TRUE(parseLogSettings("INFO", "INIT,ALL", nullptr, nullptr).subsystems.empty());
  LogSettings s = parseLogSettings("INFO", "^ALL", nullptr, nullptr);
  EXPECT_TRUE(s.subsystems.empty());
  EXPECT_FALSE(s.subsystemsExcluded);
}

TEST(LogSettings, UnknownSubsystemIsNamedAndIgnored) {
  LogSettings s = parseLogSettings("INFO", "INIT,NETWORK,,", nullptr, nullptr);
  EXPECT_EQ(s.subsystems, (std::vector<std::string>{"INIT"}));
  ASSERT_EQ(s.problems.size(), 1u);
  EXPECT_NE(s.problems[0].find("'NETWORK'"), std::string::npos) << s.problems[0];
}

TEST(LogSettings, EverySubsystemTheLibraryLogsUnderCanBeNamed) {
  LogSettings s = parseLogSettings("INFO", "bootstrap,coll,tcp,shm,graph,tuning,env,init", nullptr, nullptr);
  EXPECT_EQ(s.subsystems.size(), 8u);
  EXPECT_TRUE(s.problems.empty()) << s.problems[0];
}

TEST(LogSettings, TimestampUnderscoresStandForSpaces) {
  EXPECT_EQ(parseLogSettings(nullptr, nullptr, nullptr, "%H:%M:%S.%3f_").timestampFormat, "%H:%M:%S.%3f ");
  EXPECT_EQ(parseLogSettings(nullptr, nullptr, nullptr, "").timestampFormat, "");
}

TEST(LogSettings, FileTemplateIsKeptForExpansionAtOpen) {
  EXPECT_EQ(parseLogSettings(nullptr, nullptr, "/tmp/loom.%h.%p", nullptr).fileTemplate, "/tmp/loom.%h.%p");
}

}  // namespace
}  // namespace loom
