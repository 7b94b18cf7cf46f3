#include "base/small_alloc.h"

#include <cstdlib>
#include <new>

namespace loom {
namespace {

// Blocks of up to kLargest bytes are kept, per size class of kGranule bytes,
// on a per-thread free list of at most kKeep blocks. A block freed on
// another thread than the one that made it (an operation posted by the
// caller, finished by the progress thread) joins that thread's list.
constexpr std::size_t kGranule = 64;
constexpr std::size_t kLargest = 4096;
constexpr std::size_t kClasses = kLargest / kGranule;
constexpr int kKeep = 32;

struct FreeFrame {
  FreeFrame* next;
};

struct FrameCache {
  FreeFrame* lists[kClasses] = {};
  int counts[kClasses] = {};
  ~FrameCache();
};

// The thread's cache, created on first use. initial-exec: reaching it is
// one load from the thread pointer, not a call into the dynamic linker per
// frame (it is 8 bytes of the static TLS surplus even when libloom is
// dlopen'ed, as Python extensions are).
[[gnu::tls_model("initial-exec")]] thread_local FrameCache* cache = nullptr;
// Set when the thread's cache is destroyed (thread exit): frames freed by
// later thread-exit code go straight to free().
[[gnu::tls_model("initial-exec")]] thread_local bool cacheGone = false;

// Destroys the thread's cache at thread exit.
struct CacheOwner {
  ~CacheOwner() {
    cacheGone = true;
    delete cache;
    cache = nullptr;
  }
};
thread_local CacheOwner owner;

FrameCache* threadCache() {
  if (cache == nullptr && !cacheGone) {
    cache = new FrameCache();
    (void)&owner;  // registers the owner's destructor for this thread
  }
  return cache;
}

FrameCache::~FrameCache() {
  for (FreeFrame* list : lists) {
    while (list != nullptr) {
      FreeFrame* next = list->next;
      std::free(list);
      list = next;
    }
  }
}

std::size_t classOf(std::size_t bytes) {
  return (bytes + kGranule - 1) / kGranule - 1;
}

}  // namespace

void* smallAlloc(std::size_t bytes) {
  if (bytes <= kLargest) {
    const std::size_t c = classOf(bytes);
    if (FrameCache* frames = threadCache()) {
      if (FreeFrame* frame = frames->lists[c]) {
        frames->lists[c] = frame->next;
        --frames->counts[c];
        return frame;
      }
    }
    bytes = (c + 1) * kGranule;  // any frame of the class fits when it comes back
  }
  if (void* frame = std::malloc(bytes)) return frame;
  throw std::bad_alloc();
}

void smallFree(void* frame, std::size_t bytes) noexcept {
  if (bytes <= kLargest) {
    FrameCache* frames = cache;  // null: not made yet on this thread, or gone
    const std::size_t c = classOf(bytes);
    if (frames != nullptr && frames->counts[c] < kKeep) {
      frames->lists[c] = new (frame) FreeFrame{frames->lists[c]};
      ++frames->counts[c];
      return;
    }
  }
  std::free(frame);
}

}  // namespace loom
