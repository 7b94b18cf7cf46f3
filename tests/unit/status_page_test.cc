// The status page's call record is read under a sequence lock. A writer
// killed between its two version stores leaves the version odd for good; a
// reader must then give up, not spin forever inside a peer check.
#include <gtest/gtest.h>

#include <memory>

#include "transport/shm/shm_status.h"

namespace loom::shm {
namespace {

std::unique_ptr<StatusPage> zeroedPage() {
  auto page = std::make_unique<StatusPage>();
  page->callVersion.store(0);
  page->call = CollectiveCall{};
  return page;
}

TEST(StatusPageTest, ReadsWhatWasPublished) {
  auto page = zeroedPage();
  CollectiveCall call;
  call.number = 41;
  call.kind = OperationKind::kAllGather;
  call.count = 7;
  page->publishCall(call);
  const std::optional<CollectiveCall> read = page->readCall();
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->number, 41u);
  EXPECT_EQ(read->count, 7u);
  EXPECT_TRUE(read->sameCallAs(call));
  EXPECT_EQ(page->callVersion.load(), 2u);
}

TEST(StatusPageTest, AWriterThatDiedMidWriteYieldsNothingInsteadOfAHang) {
  auto page = zeroedPage();
  page->callVersion.store(3);  // odd: the writer stopped between its stores
  EXPECT_FALSE(page->readCall().has_value());
}

}  // namespace
}  // namespace loom::shm
