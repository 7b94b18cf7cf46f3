// Cross-memory attach against a real second process: the bytes read are the
// child's (not this process's copy-on-write twin), and unreadable memory or a
// vanished process give sentences, not crashes.
#include "transport/shm/cross_memory_attach.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "base/error.h"

namespace loom::shm {
namespace {

// A forked child that overwrites `buffer` (same virtual address as ours) with
// `pattern`, tells the parent, and waits until the parent closes the pipe.
class ChildWithPattern {
 public:
  ChildWithPattern(std::vector<char>& buffer, char pattern) {
    int ready[2], done[2];
    if (pipe(ready) != 0 || pipe(done) != 0) std::abort();
    pid_ = fork();
    if (pid_ == 0) {
      close(ready[0]);
      close(done[1]);
      std::memset(buffer.data(), pattern, buffer.size());
      char byte = 1;
      if (write(ready[1], &byte, 1) != 1) _exit(2);
      (void)!read(done[0], &byte, 1);
      _exit(0);
    }
    close(ready[1]);
    close(done[0]);
    char byte = 0;
    EXPECT_EQ(read(ready[0], &byte, 1), 1);
    close(ready[0]);
    done_ = done[1];
  }
  ~ChildWithPattern() { stop(); }
  void stop() {
    if (pid_ <= 0) return;
    close(done_);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int done_ = -1;
};

WaitContext context() {
  WaitContext ctx;
  ctx.operation = "AllGather";
  ctx.rank = 0;
  return ctx;
}

TEST(CrossMemoryAttach, ReadsTheOtherProcesssBytes) {
  std::vector<char> buffer(3 * 4096 + 5, 'a');
  ChildWithPattern child(buffer, 'b');
  EXPECT_EQ(probeCrossMemoryAttach(child.pid(), buffer.data(), std::string(16, 'b').data(), 16), "");
  CrossMemoryAttach memory({getpid(), child.pid()});
  std::vector<char> copy(buffer.size(), 'z');
  memory.postRead(1, buffer.data(), copy.data(), copy.size(), context());
  EXPECT_TRUE(memory.completions().ready()) << "the kernel's copy is done when posted";
  EXPECT_EQ(copy, std::vector<char>(buffer.size(), 'b'));
  EXPECT_EQ(buffer[0], 'a') << "the parent's own copy must be untouched";
  EXPECT_EQ(memory.inPlace(1, buffer.data()), nullptr);
  EXPECT_EQ(memory.inPlace(0, buffer.data()), buffer.data()) << "same process: read in place";
}

// A write lands in the child's pages, not in this process's twin: reading
// them back gives what was written, around an untouched border.
TEST(CrossMemoryAttach, WritesTheOtherProcesssBytes) {
  std::vector<char> buffer(2 * 4096 + 9, 'a');
  ChildWithPattern child(buffer, 'b');
  CrossMemoryAttach memory({getpid(), child.pid()});
  const std::vector<char> written(4096 + 3, 'w');
  memory.postWrite(1, buffer.data() + 5, written.data(), written.size(), context());
  EXPECT_TRUE(memory.completions().ready());
  std::vector<char> back(buffer.size(), 'z');
  memory.postRead(1, buffer.data(), back.data(), back.size(), context());
  std::vector<char> expected(buffer.size(), 'b');
  for (size_t i = 0; i < written.size(); ++i) expected[5 + i] = 'w';
  EXPECT_EQ(back, expected);
  EXPECT_EQ(buffer, std::vector<char>(buffer.size(), 'a')) << "this process's own buffer must be untouched";

  std::vector<char> mine(16, 'm');
  const std::vector<char> in(16, 'i');
  memory.postWrite(0, mine.data(), in.data(), in.size(), context());
  EXPECT_EQ(mine, in) << "same process: a plain copy";

  try {
    memory.postWrite(1, reinterpret_cast<void*>(uintptr_t{4096}), written.data(), written.size(), context());
    ADD_FAILURE() << "writing unmapped memory succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), loomInvalidUsage);
    EXPECT_NE(std::string(e.what()).find("bytes to 0x1000 in rank 1"), std::string::npos) << e.what();
  }
}

TEST(CrossMemoryAttach, ProbeReportsOtherBytes) {
  std::vector<char> buffer(64, 'a');
  ChildWithPattern child(buffer, 'b');
  std::string why = probeCrossMemoryAttach(child.pid(), buffer.data(), std::string(16, 'a').data(), 16);
  EXPECT_NE(why.find("other bytes"), std::string::npos) << why;
}

TEST(CrossMemoryAttach, UnmappedPeerMemoryIsNamed) {
  std::vector<char> buffer(64, 'a');
  ChildWithPattern child(buffer, 'b');
  CrossMemoryAttach memory({getpid(), child.pid()});
  std::vector<char> copy(4096);
  try {
    memory.postRead(1, reinterpret_cast<const void*>(uintptr_t{4096}), copy.data(), copy.size(), context());
    ADD_FAILURE() << "reading unmapped memory succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), loomInvalidUsage);
    EXPECT_NE(std::string(e.what()).find("hit unmapped memory"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("rank 1 (pid " + std::to_string(child.pid()) + ")"), std::string::npos)
        << e.what();
  }
}

TEST(CrossMemoryAttach, VanishedPeerIsNamed) {
  std::vector<char> buffer(64, 'a');
  ChildWithPattern child(buffer, 'b');
  const pid_t gone = child.pid();
  child.stop();  // exited and reaped: the pid no longer exists
  EXPECT_NE(probeCrossMemoryAttach(gone, buffer.data(), buffer.data(), 16).find("No such process"), std::string::npos);
  CrossMemoryAttach memory({getpid(), gone});
  std::vector<char> copy(64);
  try {
    memory.postRead(1, buffer.data(), copy.data(), copy.size(), context());
    ADD_FAILURE() << "reading a vanished process succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), loomRemoteError);
    EXPECT_NE(std::string(e.what()).find("exited while this rank read its buffer"), std::string::npos) << e.what();
  }
}

TEST(CrossMemoryAttach, AbortedCommunicatorStopsReading) {
  std::vector<char> buffer(64, 'a');
  ChildWithPattern child(buffer, 'b');
  CrossMemoryAttach memory({getpid(), child.pid()});
  std::atomic<bool> aborted{true};
  WaitContext ctx = context();
  ctx.aborted = &aborted;
  std::vector<char> copy(64, 'z');
  try {
    memory.postRead(1, buffer.data(), copy.data(), copy.size(), ctx);
    ADD_FAILURE() << "an aborted read went on";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), loomAborted);
    EXPECT_NE(std::string(e.what()).find("aborted (loomCommAbort) while reading rank 1's buffer"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(copy, std::vector<char>(64, 'z'));
}

}  // namespace
}  // namespace loom::shm
