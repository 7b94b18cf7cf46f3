// The C API boundary: handles in, loomResult_t out. Every loom::Error thrown
// below becomes its code here, and its sentence is kept for
// loomCommGetLastError / loomGetLastError. Nothing throws past this file.
#include <loom/loom.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "base/error.h"
#include "bootstrap/auth.h"
#include "bootstrap/host_interfaces.h"
#include "bootstrap/listen_address.h"
#include "bootstrap/rendezvous.h"
#include "bootstrap/socket.h"
#include "bootstrap/unique_id.h"
#include "core/communicator.h"
#include "core/config.h"
#include "core/group.h"
#include "core/handles.h"
#include "core/validate.h"
#include "transport/registry.h"

struct loomComm {
  std::shared_ptr<loom::Communicator> impl;
};
struct loomRequest {
  std::shared_ptr<loom::Request> impl;
};

namespace loom {
namespace {

thread_local std::string threadLastError;

// Live communicator handles. A destroyed handle's memory is kept (a few
// bytes) so a later call through the stale pointer is reported as a
// destroyed communicator instead of reading freed memory.
std::mutex registryMutex;
std::unordered_set<loomComm*>& liveComms() {
  static auto* live = new std::unordered_set<loomComm*>();
  return *live;
}
// The kept handles of destroyed communicators. Held here, not just dropped,
// so that they stay reachable: LeakSanitizer (scripts/sanitize.sh) then sees
// them as the deliberate keep they are rather than as leaks.
std::vector<loomComm*>& destroyedComms() {
  static auto* destroyed = new std::vector<loomComm*>();
  return *destroyed;
}

// Bumped (under registryMutex) whenever a handle is unregistered.
std::atomic<uint64_t> unregistrations{0};

// The last handle this thread found live, remembered so that the calls of a
// training loop skip the registry's lock and set: valid while no handle
// has been unregistered since (a weak reference: it keeps nothing alive).
struct LookupMemo {
  loomComm* handle = nullptr;
  uint64_t unregistrations = 0;
  std::weak_ptr<Communicator> impl;
};
[[gnu::tls_model("initial-exec")]] thread_local LookupMemo lookupMemo;

std::shared_ptr<Communicator> lookup(const char* api, loomComm_t comm) {
  if (comm == nullptr) fail(loomInvalidArgument, std::string(api) + ": comm is NULL");
  LookupMemo& memo = lookupMemo;
  if (memo.handle == comm && memo.unregistrations == unregistrations.load(std::memory_order_acquire)) {
    if (std::shared_ptr<Communicator> impl = memo.impl.lock()) return impl;
  }
  std::lock_guard<std::mutex> lock(registryMutex);
  if (liveComms().count(comm) == 0 || !comm->impl)
    fail(loomInvalidUsage, std::string(api) + ": the communicator was destroyed or aborted, or was never created");
  memo.handle = comm;
  memo.unregistrations = unregistrations.load(std::memory_order_relaxed);
  memo.impl = comm->impl;
  return comm->impl;
}

loomComm_t registerComm(std::unique_ptr<Communicator> impl) {
  auto* handle = new loomComm{std::shared_ptr<Communicator>(std::move(impl))};
  std::lock_guard<std::mutex> lock(registryMutex);
  liveComms().insert(handle);
  return handle;
}

std::shared_ptr<Communicator> unregisterComm(const char* api, loomComm_t comm) {
  std::shared_ptr<Communicator> impl = lookup(api, comm);
  std::lock_guard<std::mutex> lock(registryMutex);
  unregistrations.fetch_add(1, std::memory_order_release);
  liveComms().erase(comm);
  destroyedComms().push_back(comm);
  comm->impl.reset();
  return impl;
}

loomResult_t report(const Error& e, Communicator* comm) {
  threadLastError = e.what();
  if (comm != nullptr) comm->recordError(e.what());
  return e.code();
}

// Runs body, turning any exception into a result code and a sentence.
template <typename Body>
loomResult_t guarded(Body&& body) {
  try {
    return body();
  } catch (const Error& e) {
    return report(e, nullptr);
  } catch (const std::bad_alloc&) {
    threadLastError = "out of memory";
    return loomSystemError;
  } catch (const std::exception& e) {
    threadLastError = std::string("internal error: ") + e.what();
    return loomInternalError;
  }
}

// Same, for calls on a communicator: its sentence is kept there too.
template <typename Body>
loomResult_t onComm(const char* api, loomComm_t handle, Body&& body) {
  return guarded([&]() -> loomResult_t {
    std::shared_ptr<Communicator> comm = lookup(api, handle);
    try {
      return body(*comm);
    } catch (const Error& e) {
      return report(e, comm.get());
    }
  });
}

// Numbers an operation, lets `fill` say what it runs, and posts it (or,
// inside a group, keeps it for loomGroupEnd). With a request the caller gets
// the handle at once; without one, the call waits for the operation,
// driving the engine on this thread, and the operation lives on this
// thread's stack: a blocking call allocates nothing for itself.
template <typename Fill>
loomResult_t launch(Communicator& comm, const char* name, const CollectiveCall* call, Lane lane, const Fill& fill,
                    loomRequest_t* request) {
  ExclusiveCalls::Scope inside = comm.enterCall(name);
  const bool grouped = group::active();
  if (request != nullptr || grouped) {
    OperationPtr op = comm.newOperation();
    fill(*op);
    comm.number(*op, name, call, lane);
    std::shared_ptr<Request> handle = requestOf(op);
    if (grouped)
      group::add(comm.shared_from_this(), std::move(op), request == nullptr);
    else
      comm.post(std::move(op));
    if (request != nullptr) *request = new loomRequest{handle};
    return loomSuccess;
  }
  Operation op({});
  fill(op);
  comm.number(op, name, call, lane);
  comm.run(OperationPtr(OperationPtr(), &op));  // not owning: op outlives the run
  loomResult_t result = op.request.result();
  if (result != loomSuccess) threadLastError = op.request.error();
  return result;
}

// The checks every reduction or data-movement call shares.
void checkCommon(const char* api, loomDataType_t dtype, void* stream) {
  checkDtype(api, dtype);
  checkStream(api, stream);
}

// A collective: every message it sends is labeled with its kind, count,
// dtype and, where they matter, op and root; receivers compare the label.
loomResult_t launchCollective(Communicator& comm, OperationKind kind, Operation::Step step, const CollectiveArgs& args,
                              bool reduces, bool rooted, loomRequest_t* request) {
  const char* name = operationName(kind);
  CollectiveCall call;
  call.kind = kind;
  call.count = args.count;
  call.dtype = args.dtype;
  call.op = reduces ? args.op : -1;
  call.root = rooted ? args.root : -1;
  auto fill = [&](Operation& op) {
    op.step = step;
    op.args = args;
  };
  return launch(comm, name, &call, Lane::collective(), fill, request);
}

// A reduction: Loom's own op as it is, or a communicator's pre-multiplied
// sum (core/user_ops.h) as a sum over a scaled copy of this rank's
// `inputCount` input elements, which the operation keeps.
loomResult_t launchReduction(Communicator& comm, const char* api, OperationKind kind, Operation::Step step,
                             const CollectiveArgs& args, size_t inputCount, bool rooted, loomRequest_t* request) {
  const std::optional<PreMulSum> preMulSum = comm.userOps().resolve(api, args.op, args.dtype);
  if (!preMulSum) {
    checkOp(api, args.op);
    return launchCollective(comm, kind, step, args, true, rooted, request);
  }
  std::shared_ptr<std::vector<unsigned char>> scaled;
  const CollectiveArgs summed = scaleInput(*preMulSum, args, inputCount, &scaled);
  CollectiveCall call;
  call.kind = kind;
  call.count = args.count;
  call.dtype = args.dtype;
  call.op = args.op;  // the user's op: ranks that sum plainly instead are told apart
  call.root = rooted ? args.root : -1;
  auto fill = [&](Operation& op) {
    op.args = summed;
    op.body = [step, summed, scaled](const Team& team, const WaitContext& wait) { return step(team, summed, wait); };
  };
  return launch(comm, operationName(kind), &call, Lane::collective(), fill, request);
}

// Send and Recv share their checks. Which of the two runs comes from the
// entry point the caller used (`lane`), never from the buffers' values: an
// empty message may come from, or go to, NULL. The other buffer is NULL.
// A Recv from any source (`anySource`: only loomRecvAnySource's, never a
// peer argument of -1) reports its sender to *source.
loomResult_t pointToPoint(const char* api, Lane::Kind lane, const void* sendbuf, void* recvbuf, size_t count,
                          loomDataType_t dtype, int peer, int tag, loomComm_t handle, void* stream,
                          loomRequest_t* request, bool anySource = false, int* source = nullptr) {
  const bool sending = lane == Lane::Kind::kSend;
  return onComm(api, handle, [&](Communicator& c) {
    checkCommon(api, dtype, stream);
    if (!anySource) {
      checkRank(api, "peer", peer, c.nranks());
      if (peer == c.rank()) fail(loomInvalidArgument, std::string(api) + ": peer is this rank itself");
    } else if (c.nranks() == 1) {
      fail(loomInvalidUsage, std::string(api) + ": a communicator of one rank has nobody to receive from");
    }
    if (tag < 0)
      fail(loomInvalidArgument, std::string(api) + ": tag is " + std::to_string(tag) + "; tags are 0 or more");
    checkBuffer(api, "buf", sending ? sendbuf : recvbuf, checkedBytes(api, count, dtype, 1));
    auto fill = [&](Operation& op) {
      op.step = sending ? pointToPointSend : pointToPointRecv;
      op.args = CollectiveArgs{sendbuf, recvbuf, count, dtype, loomSum, peer};
      op.args.tag = tag;
      op.args.source = source;
    };
    // A pair's Sends go out in posting order whatever their tags (the
    // receiver sorts them by tag); its Recvs queue by tag.
    const Lane queue = sending ? Lane::sendTo(peer) : Lane::recvFrom(peer, tag);
    return launch(c, sending ? "Send" : "Recv", nullptr, queue, fill, request);
  });
}

}  // namespace

std::shared_ptr<Communicator> communicatorOf(loomComm_t comm) {
  return lookup("communicatorOf", comm);
}

}  // namespace loom

using loom::Communicator;

extern "C" {

const char* loomGetErrorString(loomResult_t result) {
  switch (result) {
    case loomSuccess: return "no error";
    case loomInProgress: return "operation in progress";
    case loomTimeout: return "operation timed out";
    case loomInvalidArgument: return "invalid argument";
    case loomInvalidUsage: return "invalid usage";
    case loomSystemError: return "system call failed";
    case loomRemoteError: return "a remote rank failed or sent bad data";
    case loomInternalError: return "internal error in Loom";
    case loomAborted: return "aborted";
    case loomUnsupported: return "not supported";
  }
  return "unknown loomResult_t value";
}

const char* loomGetLastError(void) {
  return loom::threadLastError.c_str();
}

const char* loomCommGetLastError(loomComm_t comm) {
  thread_local std::string copy;
  try {
    copy = loom::lookup("loomCommGetLastError", comm)->lastError();
  } catch (const loom::Error& e) {
    copy = e.what();
  }
  return copy.c_str();
}

loomResult_t loomGetVersion(int* version) {
  return loom::guarded([&] {
    if (version == nullptr) loom::fail(loomInvalidArgument, "loomGetVersion: version is NULL");
    *version = LOOM_VERSION_CODE;
    return loomSuccess;
  });
}

loomResult_t loomGetUniqueId(loomUniqueId* id) {
  return loom::guarded([&] {
    if (id == nullptr) loom::fail(loomInvalidArgument, "loomGetUniqueId: id is NULL");
    // Initialise process-wide state here, on the caller's thread, not first
    // inside the rendezvous thread where a concurrent fork could catch it.
    loom::bootstrap::initialiseCrypto();
    loom::logSettings();
    loom::bootstrap::RendezvousAddress address;
    address.secret = loom::bootstrap::randomSecret();
    const loom::CommConfig settings = loom::readCommConfig(nullptr);
    const loom::bootstrap::ChosenInterface interface = loom::bootstrap::findInterface(settings.sockets);
    address.endpoint = loom::bootstrap::startRendezvous(address.secret, {interface.address, 0}, settings.timeoutMs);
    LOOM_INFO("BOOTSTRAP", -1,
              "the unique id's rendezvous listens on " << interface.toString(address.endpoint.port) << " ("
                                                       << interface.why << ")");
    *id = loom::bootstrap::encodeUniqueId(address);
    return loomSuccess;
  });
}

loomResult_t loomCommInitRank(loomComm_t* comm, int nranks, loomUniqueId id, int rank, const loomConfig_t* config) {
  return loom::guarded([&] {
    if (comm == nullptr) loom::fail(loomInvalidArgument, "loomCommInitRank: comm is NULL");
    *comm = nullptr;
    if (nranks < 1)
      loom::fail(loomInvalidArgument, "loomCommInitRank: nranks " + std::to_string(nranks) + " is not positive");
    loom::checkRank("loomCommInitRank", "rank", rank, nranks);
    loom::CommConfig settings = loom::readCommConfig(config);
    auto address = loom::bootstrap::decodeUniqueId(id);
    *comm = loom::registerComm(std::make_unique<Communicator>(rank, nranks, address, settings));
    return loomSuccess;
  });
}

loomResult_t loomCommInitFromEnv(loomComm_t* comm, const loomConfig_t* config) {
  return loom::guarded([&] {
    if (comm == nullptr) loom::fail(loomInvalidArgument, "loomCommInitFromEnv: comm is NULL");
    *comm = nullptr;
    loom::CommConfig settings = loom::readCommConfig(config);
    loom::LaunchEnvironment launch = loom::readLaunchEnvironment();
    loom::bootstrap::RendezvousAddress address;
    // Without LOOM_SECRET (loomrun sets one), anyone who can reach
    // MASTER_ADDR:MASTER_PORT can join, as with torchrun's own store.
    address.secret = loom::bootstrap::secretFromText(
        launch.secret.empty() ? launch.masterAddr + ":" + std::to_string(launch.masterPort) : launch.secret);
    address.endpoint.address =
        loom::bootstrap::resolveAddress(launch.masterAddr, settings.sockets.family, "MASTER_ADDR");
    address.endpoint.port = static_cast<uint16_t>(launch.masterPort);
    if (launch.rank == 0) {
      const loom::bootstrap::IpAddress listenOn =
          loom::bootstrap::masterListenAddress(launch.masterAddr, address.endpoint.address, settings.sockets);
      loom::bootstrap::startRendezvous(address.secret, {listenOn, address.endpoint.port}, settings.timeoutMs);
    }
    *comm = loom::registerComm(std::make_unique<Communicator>(launch.rank, launch.nranks, address, settings));
    return loomSuccess;
  });
}

loomResult_t loomCommSplit(loomComm_t comm, int color, int key, loomComm_t* newcomm, const loomConfig_t* config) {
  return loom::onComm("loomCommSplit", comm, [&](Communicator& c) {
    if (newcomm == nullptr) loom::fail(loomInvalidArgument, "loomCommSplit: newcomm is NULL");
    *newcomm = nullptr;
    loom::CommConfig settings = loom::readCommConfig(config);
    if (config == nullptr) settings.timeoutMs = c.config().timeoutMs;  // inherit, as NCCL inherits its config
    std::unique_ptr<Communicator> child = c.split(color, key, settings);
    if (child) *newcomm = loom::registerComm(std::move(child));
    return loomSuccess;
  });
}

loomResult_t loomCommCount(loomComm_t comm, int* count) {
  return loom::onComm("loomCommCount", comm, [&](Communicator& c) {
    if (count == nullptr) loom::fail(loomInvalidArgument, "loomCommCount: count is NULL");
    *count = c.nranks();
    return loomSuccess;
  });
}

loomResult_t loomCommUserRank(loomComm_t comm, int* rank) {
  return loom::onComm("loomCommUserRank", comm, [&](Communicator& c) {
    if (rank == nullptr) loom::fail(loomInvalidArgument, "loomCommUserRank: rank is NULL");
    *rank = c.rank();
    return loomSuccess;
  });
}

loomResult_t loomRedOpCreatePreMulSum(loomRedOp_t* op, const void* scalar, loomDataType_t dtype, loomComm_t comm) {
  const char* api = "loomRedOpCreatePreMulSum";
  return loom::onComm(api, comm, [&](Communicator& c) {
    if (op == nullptr) loom::fail(loomInvalidArgument, std::string(api) + ": op is NULL");
    if (scalar == nullptr) loom::fail(loomInvalidArgument, std::string(api) + ": scalar is NULL");
    loom::checkDtype(api, dtype);
    *op = c.userOps().createPreMulSum(dtype, scalar);
    return loomSuccess;
  });
}

loomResult_t loomRedOpDestroy(loomRedOp_t op, loomComm_t comm) {
  const char* api = "loomRedOpDestroy";
  return loom::onComm(api, comm, [&](Communicator& c) {
    c.userOps().destroy(api, op);
    return loomSuccess;
  });
}

loomResult_t loomCommGetAsyncError(loomComm_t comm, loomResult_t* asyncError) {
  return loom::onComm("loomCommGetAsyncError", comm, [&](Communicator& c) {
    if (asyncError == nullptr) loom::fail(loomInvalidArgument, "loomCommGetAsyncError: asyncError is NULL");
    *asyncError = c.asyncError();
    return loomSuccess;
  });
}

loomResult_t loomCommDestroy(loomComm_t comm) {
  return loom::guarded([&] {
    if (loom::group::holds(*loom::lookup("loomCommDestroy", comm)))
      loom::fail(loomInvalidUsage,
                 "loomCommDestroy: the communicator has operations in this thread's group; call "
                 "loomGroupEnd first");
    std::shared_ptr<Communicator> impl = loom::unregisterComm("loomCommDestroy", comm);
    impl.reset();  // waits for pending operations unless another call still holds it
    return loomSuccess;
  });
}

loomResult_t loomCommAbort(loomComm_t comm) {
  return loom::guarded([&] {
    std::shared_ptr<Communicator> impl = loom::unregisterComm("loomCommAbort", comm);
    impl->abort();
    impl.reset();
    return loomSuccess;
  });
}

loomResult_t loomAllReduce(const void* sendbuf, void* recvbuf, size_t count, loomDataType_t dtype, loomRedOp_t op,
                           loomComm_t comm, void* stream, loomRequest_t* request) {
  const char* api = "loomAllReduce";
  return loom::onComm(api, comm, [&](Communicator& c) {
    loom::checkCommon(api, dtype, stream);
    size_t bytes = loom::checkedBytes(api, count, dtype, 1);
    loom::checkBuffer(api, "sendbuf", sendbuf, bytes);
    loom::checkBuffer(api, "recvbuf", recvbuf, bytes);
    loom::checkOverlap(api, sendbuf, bytes, recvbuf, bytes, true, 0);
    loom::CollectiveArgs args{sendbuf, recvbuf, count, dtype, op, 0};
    return loom::launchReduction(c, api, loom::OperationKind::kAllReduce, loom::allReduce, args, count, false, request);
  });
}

loomResult_t loomAllGather(const void* sendbuf, void* recvbuf, size_t sendcount, loomDataType_t dtype, loomComm_t comm,
                           void* stream, loomRequest_t* request) {
  const char* api = "loomAllGather";
  return loom::onComm(api, comm, [&](Communicator& c) {
    loom::checkCommon(api, dtype, stream);
    size_t sendBytes = loom::checkedBytes(api, sendcount, dtype, 1);
    size_t recvBytes = loom::checkedBytes(api, sendcount, dtype, c.nranks());
    loom::checkBuffer(api, "sendbuf", sendbuf, sendBytes);
    loom::checkBuffer(api, "recvbuf", recvbuf, recvBytes);
    loom::checkOverlap(api, sendbuf, sendBytes, recvbuf, recvBytes, true, sendBytes * c.rank());
    loom::CollectiveArgs args{sendbuf, recvbuf, sendcount, dtype, loomSum, 0};
    return loom::launchCollective(c, loom::OperationKind::kAllGather, loom::allGather, args, false, false, request);
  });
}

loomResult_t loomReduceScatter(const void* sendbuf, void* recvbuf, size_t recvcount, loomDataType_t dtype,
                               loomRedOp_t op, loomComm_t comm, void* stream, loomRequest_t* request) {
  const char* api = "loomReduceScatter";
  return loom::onComm(api, comm, [&](Communicator& c) {
    loom::checkCommon(api, dtype, stream);
    size_t recvBytes = loom::checkedBytes(api, recvcount, dtype, 1);
    size_t sendBytes = loom::checkedBytes(api, recvcount, dtype, c.nranks());
    loom::checkBuffer(api, "sendbuf", sendbuf, sendBytes);
    loom::checkBuffer(api, "recvbuf", recvbuf, recvBytes);
    loom::checkOverlap(api, sendbuf, sendBytes, recvbuf, recvBytes, false, recvBytes * c.rank());
    loom::CollectiveArgs args{sendbuf, recvbuf, recvcount, dtype, op, 0};
    return loom::launchReduction(c, api, loom::OperationKind::kReduceScatter, loom::reduceScatter, args,
                                 recvcount * c.nranks(), false, request);
  });
}

loomResult_t loomBroadcast(const void* sendbuf, void* recvbuf, size_t count, loomDataType_t dtype, int root,
                           loomComm_t comm, void* stream, loomRequest_t* request) {
  const char* api = "loomBroadcast";
  return loom::onComm(api, comm, [&](Communicator& c) {
    loom::checkCommon(api, dtype, stream);
    loom::checkRank(api, "root", root, c.nranks());
    size_t bytes = loom::checkedBytes(api, count, dtype, 1);
    if (c.rank() == root) {  // as in NCCL, sendbuf matters at the root only
      loom::checkBuffer(api, "sendbuf", sendbuf, bytes);
      loom::checkOverlap(api, sendbuf, bytes, recvbuf, bytes, true, 0);
    }
    loom::checkBuffer(api, "recvbuf", recvbuf, bytes);
    loom::CollectiveArgs args{sendbuf, recvbuf, count, dtype, loomSum, root};
    return loom::launchCollective(c, loom::OperationKind::kBroadcast, loom::broadcast, args, false, true, request);
  });
}

loomResult_t loomReduce(const void* sendbuf, void* recvbuf, size_t count, loomDataType_t dtype, loomRedOp_t op,
                        int root, loomComm_t comm, void* stream, loomRequest_t* request) {
  const char* api = "loomReduce";
  return loom::onComm(api, comm, [&](Communicator& c) {
    loom::checkCommon(api, dtype, stream);
    loom::checkRank(api, "root", root, c.nranks());
    size_t bytes = loom::checkedBytes(api, count, dtype, 1);
    loom::checkBuffer(api, "sendbuf", sendbuf, bytes);
    if (c.rank() == root) {  // as in NCCL, recvbuf matters at the root only
      loom::checkBuffer(api, "recvbuf", recvbuf, bytes);
      loom::checkOverlap(api, sendbuf, bytes, recvbuf, bytes, true, 0);
    }
    loom::CollectiveArgs args{sendbuf, recvbuf, count, dtype, op, root};
    return loom::launchReduction(c, api, loom::OperationKind::kReduce, loom::reduce, args, count, true, request);
  });
}

loomResult_t loomAllToAll(const void* sendbuf, void* recvbuf, size_t count, loomDataType_t dtype, loomComm_t comm,
                          void* stream, loomRequest_t* request) {
  const char* api = "loomAllToAll";
  return loom::onComm(api, comm, [&](Communicator& c) {
    loom::checkCommon(api, dtype, stream);
    size_t bytes = loom::checkedBytes(api, count, dtype, c.nranks());
    loom::checkBuffer(api, "sendbuf", sendbuf, bytes);
    loom::checkBuffer(api, "recvbuf", recvbuf, bytes);
    loom::checkOverlap(api, sendbuf, bytes, recvbuf, bytes, true, 0);
    loom::CollectiveArgs args{sendbuf, recvbuf, count, dtype, loomSum, 0};
    return loom::launchCollective(c, loom::OperationKind::kAllToAll, loom::pairwiseAllToAll, args, false, false,
                                  request);
  });
}

loomResult_t loomAllToAllv(const void* sendbuf, const size_t* sendcounts, const size_t* sdispls, void* recvbuf,
                           const size_t* recvcounts, const size_t* rdispls, loomDataType_t dtype, loomComm_t comm,
                           void* stream, loomRequest_t* request) {
  const char* api = "loomAllToAllv";
  return loom::onComm(api, comm, [&](Communicator& c) {
    loom::checkCommon(api, dtype, stream);
    loom::VariableBlocks blocks = loom::checkVariableBlocks(api, sendbuf, sendcounts, sdispls, recvbuf, recvcounts,
                                                            rdispls, dtype, c.nranks(), c.rank());
    loom::CollectiveArgs args{sendbuf, recvbuf, 0, dtype, loomSum, 0};
    loom::CollectiveCall call;
    call.kind = loom::OperationKind::kAllToAllv;
    call.dtype = dtype;
    auto fill = [&](loom::Operation& op) {
      op.args = args;
      op.body = [args, blocks = std::move(blocks)](const loom::Team& team, const loom::WaitContext& wait) {
        return loom::pairwiseAllToAllv(team, args, blocks, wait);
      };
    };
    return loom::launch(c, loom::operationName(call.kind), &call, loom::Lane::collective(), fill, request);
  });
}

loomResult_t loomGather(const void* sendbuf, void* recvbuf, size_t sendcount, loomDataType_t dtype, int root,
                        loomComm_t comm, void* stream, loomRequest_t* request) {
  const char* api = "loomGather";
  return loom::onComm(api, comm, [&](Communicator& c) {
    loom::checkCommon(api, dtype, stream);
    loom::checkRank(api, "root", root, c.nranks());
    const size_t sendBytes = loom::checkedBytes(api, sendcount, dtype, 1);
    const size_t recvBytes = loom::checkedBytes(api, sendcount, dtype, c.nranks());
    loom::checkBuffer(api, "sendbuf", sendbuf, sendBytes);
    if (c.rank() == root) {  // as in MPI, recvbuf matters at the root only
      loom::checkBuffer(api, "recvbuf", recvbuf, recvBytes);
      loom::checkOverlap(api, sendbuf, sendBytes, recvbuf, recvBytes, true, sendBytes * root);
    }
    loom::CollectiveArgs args{sendbuf, recvbuf, sendcount, dtype, loomSum, root};
    return loom::launchCollective(c, loom::OperationKind::kGather, loom::directGather, args, false, true, request);
  });
}

loomResult_t loomScatter(const void* sendbuf, void* recvbuf, size_t recvcount, loomDataType_t dtype, int root,
                         loomComm_t comm, void* stream, loomRequest_t* request) {
  const char* api = "loomScatter";
  return loom::onComm(api, comm, [&](Communicator& c) {
    loom::checkCommon(api, dtype, stream);
    loom::checkRank(api, "root", root, c.nranks());
    const size_t recvBytes = loom::checkedBytes(api, recvcount, dtype, 1);
    const size_t sendBytes = loom::checkedBytes(api, recvcount, dtype, c.nranks());
    loom::checkBuffer(api, "recvbuf", recvbuf, recvBytes);
    if (c.rank() == root) {  // as in MPI, sendbuf matters at the root only
      loom::checkBuffer(api, "sendbuf", sendbuf, sendBytes);
      loom::checkOverlap(api, sendbuf, sendBytes, recvbuf, recvBytes, false, recvBytes * root);
    }
    loom::CollectiveArgs args{sendbuf, recvbuf, recvcount, dtype, loomSum, root};
    return loom::launchCollective(c, loom::OperationKind::kScatter, loom::directScatter, args, false, true, request);
  });
}

loomResult_t loomSend(const void* buf, size_t count, loomDataType_t dtype, int peer, loomComm_t comm, void* stream,
                      loomRequest_t* request) {
  return loom::pointToPoint("loomSend", loom::Lane::Kind::kSend, buf, nullptr, count, dtype, peer, 0, comm, stream,
                            request);
}

loomResult_t loomSendTagged(const void* buf, size_t count, loomDataType_t dtype, int peer, int tag, loomComm_t comm,
                            void* stream, loomRequest_t* request) {
  return loom::pointToPoint("loomSendTagged", loom::Lane::Kind::kSend, buf, nullptr, count, dtype, peer, tag, comm,
                            stream, request);
}

loomResult_t loomRecv(void* buf, size_t count, loomDataType_t dtype, int peer, loomComm_t comm, void* stream,
                      loomRequest_t* request) {
  return loom::pointToPoint("loomRecv", loom::Lane::Kind::kRecv, nullptr, buf, count, dtype, peer, 0, comm, stream,
                            request);
}

loomResult_t loomRecvTagged(void* buf, size_t count, loomDataType_t dtype, int peer, int tag, loomComm_t comm,
                            void* stream, loomRequest_t* request) {
  return loom::pointToPoint("loomRecvTagged", loom::Lane::Kind::kRecv, nullptr, buf, count, dtype, peer, tag, comm,
                            stream, request);
}

loomResult_t loomRecvAnySource(void* buf, size_t count, loomDataType_t dtype, int tag, int* source, loomComm_t comm,
                               void* stream, loomRequest_t* request) {
  return loom::pointToPoint("loomRecvAnySource", loom::Lane::Kind::kRecv, nullptr, buf, count, dtype,
                            loom::Lane::kAnySource, tag, comm, stream, request, true, source);
}

loomResult_t loomBarrier(loomComm_t comm, loomRequest_t* request) {
  return loom::onComm("loomBarrier", comm, [&](Communicator& c) {
    return loom::launchCollective(
        c, loom::OperationKind::kBarrier,
        [](const loom::Team& t, const loom::CollectiveArgs&, const loom::WaitContext& w) {
          return loom::barrier(t, w);
        },
        loom::CollectiveArgs{}, false, false, request);
  });
}

loomResult_t loomMemAlloc(void** ptr, size_t size) {
  return loom::guarded([&] {
    if (ptr == nullptr) loom::fail(loomInvalidArgument, "loomMemAlloc: ptr is NULL");
    *ptr = nullptr;
    *ptr = loom::allocateRegistrable(size);
    return loomSuccess;
  });
}

loomResult_t loomMemFree(void* ptr) {
  return loom::guarded([&] {
    if (ptr != nullptr) loom::freeRegistrable(ptr);
    return loomSuccess;
  });
}

loomResult_t loomCommRegister(loomComm_t comm, void* buff, size_t size, void** handle) {
  const char* api = "loomCommRegister";
  return loom::onComm(api, comm, [&](Communicator& c) {
    if (handle == nullptr) loom::fail(loomInvalidArgument, std::string(api) + ": handle is NULL");
    *handle = nullptr;
    if (buff == nullptr || size == 0) loom::fail(loomInvalidArgument, std::string(api) + ": buff is NULL or size is 0");
    *handle = c.registerBuffer(buff, size);
    return loomSuccess;
  });
}

loomResult_t loomCommDeregister(loomComm_t comm, void* handle) {
  return loom::onComm("loomCommDeregister", comm, [&](Communicator& c) {
    if (handle == nullptr) loom::fail(loomInvalidArgument, "loomCommDeregister: handle is NULL");
    c.deregisterBuffer(handle);
    return loomSuccess;
  });
}

loomResult_t loomGroupStart(void) {
  return loom::guarded([] {
    loom::group::start();
    return loomSuccess;
  });
}

loomResult_t loomGroupEnd(void) {
  return loom::guarded([] {
    std::string error;
    loomResult_t result = loom::group::end(&error);
    if (result != loomSuccess) loom::threadLastError = error;
    return result;
  });
}

loomResult_t loomWait(loomRequest_t request, int64_t timeoutMs) {
  return loom::guarded([&] {
    if (request == nullptr) loom::fail(loomInvalidArgument, "loomWait: request is NULL");
    if (timeoutMs < -1)
      loom::fail(loomInvalidArgument, "loomWait: timeoutMs " + std::to_string(timeoutMs) +
                                          " is negative; use -1 to wait until the operation ends");
    loomResult_t result = request->impl->wait(timeoutMs);
    if (result == loomTimeout && !request->impl->done())
      loom::threadLastError = "loomWait: the operation is not done after " + std::to_string(timeoutMs) +
                              " ms; it keeps running and the request stays valid";
    else if (result != loomSuccess)
      loom::threadLastError = request->impl->error();
    return result;
  });
}

loomResult_t loomTest(loomRequest_t request, int* done) {
  return loom::guarded([&] {
    if (request == nullptr) loom::fail(loomInvalidArgument, "loomTest: request is NULL");
    if (done == nullptr) loom::fail(loomInvalidArgument, "loomTest: done is NULL");
    *done = request->impl->poll() ? 1 : 0;
    if (!*done) return loomSuccess;
    loomResult_t result = request->impl->wait(0);
    if (result != loomSuccess) loom::threadLastError = request->impl->error();
    return result;
  });
}

loomResult_t loomRequestSetCallback(loomRequest_t request, loomCallback_t callback, void* userData) {
  return loom::guarded([&] {
    if (request == nullptr) loom::fail(loomInvalidArgument, "loomRequestSetCallback: request is NULL");
    if (callback == nullptr) loom::fail(loomInvalidArgument, "loomRequestSetCallback: callback is NULL");
    const bool set = request->impl->onComplete(
        [request, callback, userData](loomResult_t result) { callback(request, result, userData); });
    if (!set)
      loom::fail(loomInvalidUsage, "loomRequestSetCallback: this request has a callback already; it keeps that one");
    return loomSuccess;
  });
}

loomResult_t loomRequestFree(loomRequest_t request) {
  if (request == nullptr) {
    loom::threadLastError = "loomRequestFree: request is NULL";
    return loomInvalidArgument;
  }
  delete request;  // a pending operation keeps its own reference and completes
  return loomSuccess;
}

}  // extern "C"
