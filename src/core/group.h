// loomGroupStart / loomGroupEnd, as ncclGroupStart / ncclGroupEnd: while a
// thread is inside a group, the operations it calls are kept instead of
// posted, and the outermost end posts each communicator's operations
// together (in call order), then waits for the ones that were called
// blocking. The state is the calling thread's own, as in NCCL.
#pragma once

#include <loom/loom.h>

#include <memory>
#include <string>

#include "core/communicator.h"
#include "core/operation.h"

namespace loom::group {

bool active();
void start();
// Keeps op for the outermost end. `blocking`: the call had no request, so
// the end waits for it and reports its failure.
void add(std::shared_ptr<Communicator> comm, OperationPtr op, bool blocking);
// Throws loomInvalidUsage without a matching start. Posts and waits at the
// outermost end; returns the first failure of a blocking call (its
// sentence in *error), else loomSuccess.
loomResult_t end(std::string* error);
// Whether comm has operations kept in this thread's group (destroying it
// then would lose them).
bool holds(const Communicator& comm);

}  // namespace loom::group
