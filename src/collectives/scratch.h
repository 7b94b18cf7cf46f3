// Per-thread working memory for the single-copy reductions (direct.cc,
// registered.cc): they fold peers' data chunk by chunk into an accumulator
// small enough to stay in cache, so memory sees each input read once and
// each output written once.
#pragma once

#include <cstddef>
#include <memory>

namespace loom {

constexpr size_t kScratchChunkBytes = 64 * 1024;

struct Scratch {
  std::unique_ptr<char[]> memory{new char[2 * kScratchChunkBytes]};
  char* accumulator() { return memory.get(); }
  char* incoming() { return memory.get() + kScratchChunkBytes; }
};

// Per thread: algorithms run on a communicator's progress thread or its
// caller, and a thread runs one collective at a time.
inline Scratch& threadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

}  // namespace loom
