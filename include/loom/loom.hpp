// Header-only C++ wrapper over loom.h: RAII owners for communicators and
// requests, std::span overloads that deduce the dtype, and exceptions that
// carry the failure's code and sentence. Nothing here is compiled into
// libloom: it only calls the C API.
#pragma once

#include <loom/loom.h>

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace loom {

class Exception : public std::runtime_error {
 public:
  Exception(loomResult_t code, const std::string& sentence) : std::runtime_error(sentence), code_(code) {}
  loomResult_t code() const noexcept { return code_; }

 private:
  loomResult_t code_;
};

namespace detail {

inline void check(loomResult_t rc, loomComm_t comm = nullptr) {
  if (rc == loomSuccess) return;
  std::string sentence = comm != nullptr ? loomCommGetLastError(comm) : loomGetLastError();
  if (sentence.empty()) sentence = loomGetLastError();
  if (sentence.empty()) sentence = loomGetErrorString(rc);
  throw Exception(rc, sentence);
}

template <typename T>
struct DataType;
template <>
struct DataType<int8_t> {
  static constexpr loomDataType_t value = loomInt8;
};
template <>
struct DataType<uint8_t> {
  static constexpr loomDataType_t value = loomUint8;
};
template <>
struct DataType<int32_t> {
  static constexpr loomDataType_t value = loomInt32;
};
template <>
struct DataType<uint32_t> {
  static constexpr loomDataType_t value = loomUint32;
};
template <>
struct DataType<int64_t> {
  static constexpr loomDataType_t value = loomInt64;
};
template <>
struct DataType<uint64_t> {
  static constexpr loomDataType_t value = loomUint64;
};
template <>
struct DataType<float> {
  static constexpr loomDataType_t value = loomFloat32;
};
template <>
struct DataType<double> {
  static constexpr loomDataType_t value = loomFloat64;
};
#if defined(__FLT16_MANT_DIG__) && !defined(__clang__)
template <>
struct DataType<_Float16> {
  static constexpr loomDataType_t value = loomFloat16;
};
#endif

}  // namespace detail

// The dtype of element type T (int8 to uint64, float, double, _Float16).
template <typename T>
inline constexpr loomDataType_t dataTypeOf = detail::DataType<std::remove_const_t<T>>::value;

// An operation in flight. Destroying a pending Request frees the handle; the
// operation itself still completes.
class Request {
 public:
  Request() = default;
  explicit Request(loomRequest_t handle) : handle_(handle) {}
  Request(Request&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Request& operator=(Request&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  ~Request() { reset(); }

  // Throws on the operation's failure. timeoutMs -1: the communicator's.
  void wait(int64_t timeoutMs = -1) { detail::check(loomWait(handle_, timeoutMs)); }
  // false if still running after timeoutMs; throws on failure.
  bool waitFor(int64_t timeoutMs) {
    loomResult_t rc = loomWait(handle_, timeoutMs);
    if (rc == loomTimeout) {
      int done = 0;
      if (loomTest(handle_, &done) == loomSuccess && !done) return false;
    }
    detail::check(rc);
    return true;
  }
  bool test() {
    int done = 0;
    detail::check(loomTest(handle_, &done));
    return done != 0;
  }
  loomRequest_t get() const { return handle_; }

 private:
  void reset() {
    if (handle_ != nullptr) loomRequestFree(handle_);
    handle_ = nullptr;
  }
  loomRequest_t handle_ = nullptr;
};

class Comm {
 public:
  static loomUniqueId uniqueId() {
    loomUniqueId id;
    detail::check(loomGetUniqueId(&id));
    return id;
  }
  Comm(int nranks, const loomUniqueId& id, int rank, const loomConfig_t* config = nullptr) {
    detail::check(loomCommInitRank(&handle_, nranks, id, rank, config));
  }
  static Comm fromEnvironment(const loomConfig_t* config = nullptr) {
    loomComm_t handle = nullptr;
    detail::check(loomCommInitFromEnv(&handle, config));
    return Comm(handle);
  }
  Comm(Comm&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Comm& operator=(Comm&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;
  ~Comm() { reset(); }

  int rank() const {
    int r = 0;
    detail::check(loomCommUserRank(handle_, &r), handle_);
    return r;
  }
  int size() const {
    int n = 0;
    detail::check(loomCommCount(handle_, &n), handle_);
    return n;
  }
  // An empty Comm (valid() false) for LOOM_SPLIT_NOCOLOR.
  Comm split(int color, int key, const loomConfig_t* config = nullptr) const {
    loomComm_t child = nullptr;
    detail::check(loomCommSplit(handle_, color, key, &child, config), handle_);
    return Comm(child);
  }
  void abort() {
    if (handle_ != nullptr) loomCommAbort(std::exchange(handle_, nullptr));
  }
  bool valid() const { return handle_ != nullptr; }
  loomComm_t get() const { return handle_; }

  // Blocking forms. The element type comes from the output span; the input
  // converts to a span of const elements. In-place: pass the same span as
  // input and output (AllGather/ReduceScatter: see loom.h for the layout).
  template <typename T>
  void allReduce(std::type_identity_t<std::span<const T>> in, std::span<T> out, loomRedOp_t op) {
    sameSize(in.size(), out.size(), "allReduce");
    call(loomAllReduce(in.data(), out.data(), in.size(), dataTypeOf<T>, op, handle_, nullptr, nullptr));
  }
  template <typename T>
  void allReduce(std::span<T> inOut, loomRedOp_t op) {
    call(loomAllReduce(inOut.data(), inOut.data(), inOut.size(), dataTypeOf<T>, op, handle_, nullptr, nullptr));
  }
  template <typename T>
  Request allReduceAsync(std::span<T> inOut, loomRedOp_t op) {
    loomRequest_t r = nullptr;
    call(loomAllReduce(inOut.data(), inOut.data(), inOut.size(), dataTypeOf<T>, op, handle_, nullptr, &r));
    return Request(r);
  }
  template <typename T>
  Request allReduceAsync(std::type_identity_t<std::span<const T>> in, std::span<T> out, loomRedOp_t op) {
    sameSize(in.size(), out.size(), "allReduceAsync");
    loomRequest_t r = nullptr;
    call(loomAllReduce(in.data(), out.data(), in.size(), dataTypeOf<T>, op, handle_, nullptr, &r));
    return Request(r);
  }
  // out holds size() blocks of in.size() elements.
  template <typename T>
  void allGather(std::type_identity_t<std::span<const T>> in, std::span<T> out) {
    blocks(out.size(), in.size(), "allGather");
    call(loomAllGather(in.data(), out.data(), in.size(), dataTypeOf<T>, handle_, nullptr, nullptr));
  }
  // in holds size() blocks of out.size() elements.
  template <typename T>
  void reduceScatter(std::type_identity_t<std::span<const T>> in, std::span<T> out, loomRedOp_t op) {
    blocks(in.size(), out.size(), "reduceScatter");
    call(loomReduceScatter(in.data(), out.data(), out.size(), dataTypeOf<T>, op, handle_, nullptr, nullptr));
  }
  template <typename T>
  void broadcast(std::span<T> inOut, int root) {
    call(loomBroadcast(inOut.data(), inOut.data(), inOut.size(), dataTypeOf<T>, root, handle_, nullptr, nullptr));
  }
  template <typename T>
  void reduce(std::type_identity_t<std::span<const T>> in, std::span<T> out, loomRedOp_t op, int root) {
    call(loomReduce(in.data(), out.data(), in.size(), dataTypeOf<T>, op, root, handle_, nullptr, nullptr));
  }
  template <typename T>
  void allToAll(std::type_identity_t<std::span<const T>> in, std::span<T> out) {
    sameSize(in.size(), out.size(), "allToAll");
    blocks(in.size(), in.size() / size(), "allToAll");
    call(loomAllToAll(in.data(), out.data(), in.size() / size(), dataTypeOf<T>, handle_, nullptr, nullptr));
  }
  template <typename T>
  void send(std::span<T> data, int peer) {
    call(loomSend(data.data(), data.size(), dataTypeOf<T>, peer, handle_, nullptr, nullptr));
  }
  template <typename T>
  void recv(std::span<T> data, int peer) {
    call(loomRecv(data.data(), data.size(), dataTypeOf<T>, peer, handle_, nullptr, nullptr));
  }
  void barrier() { call(loomBarrier(handle_, nullptr)); }

 private:
  explicit Comm(loomComm_t handle) : handle_(handle) {}
  void reset() {
    if (handle_ != nullptr) loomCommDestroy(std::exchange(handle_, nullptr));
  }
  void call(loomResult_t rc) const { detail::check(rc, handle_); }
  static void sameSize(size_t a, size_t b, const char* what) {
    if (a != b)
      throw Exception(loomInvalidArgument, std::string("loom::Comm::") + what + ": input has " + std::to_string(a) +
                                               " elements but output has " + std::to_string(b));
  }
  void blocks(size_t whole, size_t block, const char* what) const {
    if (whole != block * static_cast<size_t>(size()))
      throw Exception(loomInvalidArgument, std::string("loom::Comm::") + what + ": the larger buffer has " +
                                               std::to_string(whole) + " elements, not " + std::to_string(size()) +
                                               " blocks of " + std::to_string(block));
  }
  loomComm_t handle_ = nullptr;
};

// Runs `calls` inside loomGroupStart/loomGroupEnd: as ncclGroupStart/End,
// what it calls is launched together when it returns, so a blocking send and
// recv inside do not wait for each other. Throws the group's failure.
template <typename Calls>
void group(Calls&& calls) {
  detail::check(loomGroupStart());
  try {
    calls();
  } catch (...) {
    loomGroupEnd();  // launch what was kept; the first failure is the one thrown
    throw;
  }
  detail::check(loomGroupEnd());
}

}  // namespace loom
