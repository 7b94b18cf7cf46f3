// Memory for the objects every operation makes and drops (its record, its
// coroutine frames): per-thread free lists by size, so a 1 us operation does
// not spend a tenth of it in malloc and free. Blocks over 4 KiB, and blocks
// freed when a thread's lists are full, go to malloc/free.
#pragma once

#include <cstddef>

namespace loom {

void* smallAlloc(std::size_t bytes);
// `bytes` as passed to smallAlloc.
void smallFree(void* block, std::size_t bytes) noexcept;

// For std::allocate_shared.
template <typename T>
struct SmallAllocator {
  using value_type = T;
  SmallAllocator() = default;
  template <typename U>
  SmallAllocator(const SmallAllocator<U>&) {}
  T* allocate(std::size_t n) { return static_cast<T*>(smallAlloc(n * sizeof(T))); }
  void deallocate(T* p, std::size_t n) noexcept { smallFree(p, n * sizeof(T)); }
  template <typename U>
  bool operator==(const SmallAllocator<U>&) const {
    return true;
  }
};

}  // namespace loom
