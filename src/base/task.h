// An operation's schedule as a C++20 coroutine. A schedule reads as a
// straight line (`co_await prims.send(...)`); where a connection cannot move
// yet, the innermost coroutine suspends and control returns to the engine's
// progress loop, which resumes it once the connection can move. Tasks await
// tasks (a collective awaits its primitives): the awaited one starts at once
// and hands control back to its awaiter when it ends (symmetric transfer, so
// deep schedules do not grow the stack), and an exception thrown inside
// reaches the awaiter as if the call had been a plain function call.
//
// docs/ENGINE.md says why coroutines rather than state machines.
#pragma once

#include <coroutine>
#include <cstddef>
#include <exception>
#include <optional>
#include <utility>

#include "base/small_alloc.h"

namespace loom {

namespace detail {

// What every task's promise has: who awaits it, the error it ended with,
// and frames from per-thread free lists (small_alloc.h): a small collective
// creates a few frames per call.
struct TaskPromiseBase {
  std::coroutine_handle<> continuation;  // the awaiting coroutine; null for an operation's root task
  std::exception_ptr error;

  std::suspend_always initial_suspend() noexcept { return {}; }  // lazy: runs when awaited or started
  struct FinalAwaiter {
    bool await_ready() noexcept { return false; }
    template <typename Promise>
    std::coroutine_handle<> await_suspend(std::coroutine_handle<Promise> self) noexcept {
      std::coroutine_handle<> next = self.promise().continuation;
      return next ? next : std::noop_coroutine();
    }
    void await_resume() noexcept {}
  };
  FinalAwaiter final_suspend() noexcept { return {}; }
  void unhandled_exception() noexcept { error = std::current_exception(); }

  static void* operator new(std::size_t bytes) { return smallAlloc(bytes); }
  static void operator delete(void* frame, std::size_t bytes) noexcept { smallFree(frame, bytes); }
};

template <typename T>
struct TaskPromise : TaskPromiseBase {
  std::optional<T> value;
  template <typename U>
  void return_value(U&& result) {
    value.emplace(std::forward<U>(result));
  }
  T take() { return std::move(*value); }
};

template <>
struct TaskPromise<void> : TaskPromiseBase {
  void return_void() noexcept {}
  void take() {}
};

}  // namespace detail

template <typename T = void>
class [[nodiscard]] Task {
 public:
  struct promise_type : detail::TaskPromise<T> {
    Task get_return_object() { return Task(std::coroutine_handle<promise_type>::from_promise(*this)); }
  };

  Task() = default;
  Task(Task&& other) noexcept : handle_(std::exchange(other.handle_, {})) {}
  Task& operator=(Task&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, {});
    }
    return *this;
  }
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  // Destroying a suspended task destroys the coroutines it awaits too: each
  // frame owns the Task objects of what it awaits.
  ~Task() { reset(); }

  // Awaiting a task runs it until it ends, then continues the awaiter with
  // its result (or its exception).
  bool await_ready() const noexcept { return false; }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> awaiter) noexcept {
    handle_.promise().continuation = awaiter;
    return handle_;
  }
  T await_resume() {
    if (handle_.promise().error) std::rethrow_exception(handle_.promise().error);
    return handle_.promise().take();
  }

  // For the engine, which drives an operation's root task.
  bool valid() const { return static_cast<bool>(handle_); }
  bool done() const { return handle_.done(); }
  void start() { handle_.resume(); }
  std::exception_ptr error() const { return handle_.promise().error; }
  void reset() {
    if (handle_) std::exchange(handle_, {}).destroy();
  }

 private:
  explicit Task(std::coroutine_handle<promise_type> handle) : handle_(handle) {}
  std::coroutine_handle<promise_type> handle_;
};

}  // namespace loom
