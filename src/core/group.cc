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

struct ThreadGroup {
  int depth = 0;
  std::vector<Kept> kept;  // in call order
};

thread_local ThreadGroup group;
// group.depth > 0, kept where every call can read it cheaply: a plain
// initial-exec thread-local, not one with a constructor behind a guard.
[[gnu::tls_model("initial-exec")]] thread_local bool inGroup = false;

}  // namespace

bool active() {
  return inGroup;
}

void start() {
  ++group.depth;
  inGroup = true;
}

void add(std::shared_ptr<Communicator> comm, OperationPtr op, bool blocking) {
  group.kept.push_back({std::move(comm), std::move(op), blocking});
}

bool holds(const Communicator& comm) {
  for (const Kept& k : group.kept)
    if (k.comm.get() == &comm) return true;
  return false;
}

loomResult_t end(std::string* error) {
  if (group.depth == 0)
    fail(loomInvalidUsage, "loomGroupEnd: no loomGroupStart on this thread to end (groups are per thread)");
  if (--group.depth > 0) return loomSuccess;
  inGroup = false;
  std::vector<Kept> kept = std::move(group.kept);
  group.kept.clear();

  // Each communicator gets its operations in one batch, so its engine sees
  // them all before running any: a Recv and a Send to the same peer called
  // in either order both progress.
  std::vector<std::shared_ptr<Request>> blocking;
  for (size_t i = 0; i < kept.size(); ++i) {
    if (!kept[i].op) continue;
    std::vector<OperationPtr> batch;
    std::shared_ptr<Communicator> comm = kept[i].comm;
    for (size_t j = i; j < kept.size(); ++j) {
      if (kept[j].comm != comm || !kept[j].op) continue;
      if (kept[j].blocking) blocking.push_back(requestOf(kept[j].op));
      batch.push_back(std::move(kept[j].op));
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
