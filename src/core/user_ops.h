// Reduction ops a communicator's user makes: loomRedOpCreatePreMulSum's sums
// whose every input is first multiplied by a scalar (for averaging
// gradients in one pass, 1/nranks), as NCCL's with a host scalar. They are
// numbered from LOOM_NUM_OPS on, per communicator; a reduction that names
// one runs as a sum over a scaled copy of this rank's input, made when the
// call is made, so the op may be destroyed as soon as the call returns.
#pragma once

#include <loom/loom.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "collectives/collectives.h"

namespace loom {

struct PreMulSum {
  loomDataType_t dtype;
  unsigned char scalar[8];  // one value of dtype
};

class UserOps {
 public:
  // Copies one value of `dtype` from `scalar`.
  loomRedOp_t createPreMulSum(loomDataType_t dtype, const void* scalar);
  // Throws loomInvalidArgument naming `api` for an op that is not a live one.
  void destroy(const char* api, loomRedOp_t op);
  // The op's definition; nullopt for one of Loom's own. Throws
  // loomInvalidArgument naming `api` for anything else, or for a dtype
  // other than the op's.
  std::optional<PreMulSum> resolve(const char* api, loomRedOp_t op, loomDataType_t dtype) const;

 private:
  mutable std::mutex mutex_;
  std::vector<std::optional<PreMulSum>> ops_;  // by op - LOOM_NUM_OPS; destroyed ones empty
};

// The call's arguments with this rank's `inputCount` elements of sendbuf
// multiplied by the op's scalar into `*scaled` (which must live as long as
// the operation), summed instead.
CollectiveArgs scaleInput(const PreMulSum& op, CollectiveArgs args, size_t inputCount,
                          std::shared_ptr<std::vector<unsigned char>>* scaled);

}  // namespace loom
