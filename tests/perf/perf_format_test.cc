// The perf suite's number parsing, rounding and column formatting, against
// what nccl-tests prints for the same input.
#include <gtest/gtest.h>

#include "../../perf/collective_spec.h"  // not -I perf: it holds the `compare` script
#include "../../perf/perf_format.h"

namespace loom::perf {
namespace {

size_t size(const char* text) {
  size_t bytes = 0;
  EXPECT_TRUE(parseSize(text, &bytes)) << text;
  return bytes;
}

TEST(PerfFormat, SizesAsNcclTests) {
  EXPECT_EQ(size("8"), 8u);
  EXPECT_EQ(size("1K"), 1024u);
  EXPECT_EQ(size("1k"), 1024u);
  EXPECT_EQ(size("1.5M"), 1572864u);
  EXPECT_EQ(size("1MB"), 1048576u);  // only the first letter of the unit counts
  EXPECT_EQ(size("2G"), size_t{2} << 30);
  EXPECT_EQ(size("1e3"), 1000u);
  size_t bytes = 0;
  EXPECT_FALSE(parseSize("1X", &bytes));
  EXPECT_FALSE(parseSize("-5", &bytes));
  EXPECT_FALSE(parseSize("", &bytes));
  EXPECT_FALSE(parseSize("M", &bytes));
}

TEST(PerfFormat, IntegersAsStrtolBase0) {
  long v = 0;
  EXPECT_TRUE(parseInteger("0x10", &v));
  EXPECT_EQ(v, 16);
  EXPECT_TRUE(parseInteger("-1", &v));
  EXPECT_EQ(v, -1);
  EXPECT_FALSE(parseInteger("abc", &v));
  EXPECT_FALSE(parseInteger("3x", &v));
}

TEST(PerfFormat, AdaptivePrecision) {
  EXPECT_EQ(fixedWidth(2.5, 7), "   2.50");
  EXPECT_EQ(fixedWidth(12345.678, 7), "12345.7");
  EXPECT_EQ(fixedWidth(1234567.8, 7), "1234568");
  EXPECT_EQ(fixedWidth(123456789.0, 7), "1.2e+08");
  EXPECT_EQ(fixedWidth(0.004, 6), "  0.00");
  EXPECT_EQ(fixedWidth(1234.56, 6), "1234.6");
  EXPECT_EQ(fixedWidth(123456.0, 6), "123456");
  EXPECT_EQ(fixedWidth(1234567.0, 6), " 1e+06");
}

TEST(PerfFormat, WrongColumn) {
  EXPECT_EQ(wrongColumn(true, 0), "     0");
  EXPECT_EQ(wrongColumn(true, 1234567), "1.23457e+06");
  EXPECT_EQ(wrongColumn(false, 0), "   N/A");
}

TEST(PerfFormat, CollByteCountsRoundTo16BytesPerRank) {
  // 1000 bytes of int8 on 4 ranks: 250 per rank, rounded down to 240.
  CollCounts ag = allGatherSpec().counts(1000, 1, 4);
  EXPECT_EQ(ag.param, 240u);
  EXPECT_EQ(ag.recv, 960u);
  EXPECT_EQ(ag.sendInPlaceOffset, 240u);
  // 125 doubles on 4 ranks: 31 per rank, rounded to 30 (16 bytes = 2 doubles).
  EXPECT_EQ(allGatherSpec().counts(125, 8, 4).param, 30u);
  CollCounts rs = reduceScatterSpec().counts(250, 4, 3);
  EXPECT_EQ(rs.param, 80u);
  EXPECT_EQ(rs.send, 240u);
  EXPECT_EQ(rs.recvInPlaceOffset, 80u);
  CollCounts a2a = allToAllSpec().counts(250, 4, 3);
  EXPECT_EQ(a2a.param, 80u);
  EXPECT_EQ(a2a.send, 240u);
  EXPECT_EQ(allReduceSpec().counts(250, 4, 3).param, 250u);
}

}  // namespace
}  // namespace loom::perf
