#include "core/group.h"

#include <vector>

#include "base/error.h"

namespace loom::group {
namespace {

struct Kept {
  std::shared_ptr<Communicator> comm;
  OperationPtr op;
  bool blocking;
};

// This thread's nesting depth: every call reads it, so it is a plain
// initial-exec thread-local, apart from the vector (whose constructor would
// put a guard in front of each read).
[[gnu::tls_model("initial-exec")]] thread_local int depth = 0;
thread_local std::vector<Kept> kept;  // in call order

}  // namespace

bool active() {
  return depth > 0;
}

void start() {
  ++depth;
}

void add(std::shared_ptr<Communicator> comm, OperationPtr op, bool blocking) {
  kept.push_back({std::move(comm), std::move(op), blocking});
}

bool holds(const Communicator& comm) {
  for (const Kept& k : kept)
    if (k.comm.get() == &comm) return true;
  return false;
}

loomResult_t end(std::string* error) {
  if (depth == 0)
    fail(loomInvalidUsage, "loomGroupEnd: no loomGroupStart on this thread to end (groups are per thread)");
  if (--depth > 0) return loomSuccess;
  std::vector<Kept> ended = std::move(kept);
  kept.clear();

  // Each communicator gets its operations in one batch, so its engine sees
  // them all before running any: a Recv and a Send to the same peer called
  // in either order both progress.
  std::vector<std::shared_ptr<Request>> blocking;
  for (size_t i = 0; i < ended.size(); ++i) {
    if (!ended[i].op) continue;
    std::vector<OperationPtr> batch;
    std::shared_ptr<Communicator> comm = ended[i].comm;
    for (size_t j = i; j < ended.size(); ++j) {
      if (ended[j].comm != comm || !ended[j].op) continue;
      if (ended[j].blocking) blocking.push_back(requestOf(ended[j].op));
      batch.push_back(std::move(ended[j].op));
    }
    comm->post(std::move(batch));
  }
  loomResult_t first = loomSuccess;
  for (const std::shared_ptr<Request>& request : blocking) {
    loomResult_t result = request->wait(-1);
    if (result != loomSuccess && first == loomSuccess) {
      first = result;
      *error = "loomGroupEnd: " + request->error();
    }
  }
  return first;
}

}  // namespace loom::group
