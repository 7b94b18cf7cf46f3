// Every algorithm Loom can run, as one table: its name (as LOOM_ALGO, the
// TUNING log and the flight recorder spell it) and the collectives it
// serves. LOOM_ALGO is read against it (AlgorithmFilter), in NCCL_ALGO's
// syntax, so every name and every error sentence comes from here.
#pragma once

#include <cstdint>
#include <string>

namespace loom {

enum class TunedCollective { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kReduce, kBarrier, kCount };
enum class TunedAlgorithm {
  kAllPairs,
  kRing,  // Broadcast and Reduce: a pipelined chain along the ring
  kTree,  // AllReduce: two binary trees, each carrying half the data
  kHalvingDoubling,
  kBruck,  // AllGather in log2(P) steps
  kDirect,
  kRegistered,
  kHierarchical,
  kHostLeaders,
  kDissemination,
  kBinomial,  // Broadcast and Reduce in ceil(log2 P) rounds
  kCount
};

constexpr int kTunedCollectives = static_cast<int>(TunedCollective::kCount);
constexpr int kTunedAlgorithms = static_cast<int>(TunedAlgorithm::kCount);

struct AlgorithmRow {
  TunedAlgorithm id;
  const char* name;
  uint32_t collectives;  // a bit per TunedCollective it serves
  const char* summary;
  bool serves(TunedCollective c) const { return (collectives >> static_cast<int>(c)) & 1u; }
};

const AlgorithmRow& algorithmRow(TunedAlgorithm algorithm);
const char* algorithmName(TunedAlgorithm algorithm);
const char* collectiveName(TunedCollective collective);  // "AllReduce"

// Which algorithms each collective may take, from LOOM_ALGO. NCCL_ALGO's
// syntax: a comma-separated list of names applies to every collective
// that one of them serves (the others keep the automatic choice); "^"
// before a list allows every algorithm but those; "allreduce:tree,ring"
// limits one collective (names of collectives and algorithms in any
// case); entries are separated by ";", and only the first may lack a
// collective. Unset or empty: everything allowed, nothing restricted.
class AlgorithmFilter {
 public:
  AlgorithmFilter();
  // Throws Error(loomInvalidArgument) with a sentence that quotes the
  // setting, says what is wrong and lists the choices.
  static AlgorithmFilter parse(const std::string& setting, const char* variable = "LOOM_ALGO");

  bool allows(TunedCollective collective, TunedAlgorithm algorithm) const {
    return (allowed_[static_cast<int>(collective)] >> static_cast<int>(algorithm)) & 1u;
  }
  // The setting excluded some algorithm that serves this collective.
  bool restricted(TunedCollective collective) const;
  // The setting left this collective `algorithm` alone: it runs at every
  // size where it can.
  bool onlyAllows(TunedCollective collective, TunedAlgorithm algorithm) const {
    return allowed_[static_cast<int>(collective)] == 1u << static_cast<int>(algorithm);
  }
  // A collective the setting left this algorithm alone, or kCount.
  TunedCollective anyLeftOnly(TunedAlgorithm algorithm) const;
  // What the setting means, however it was spelt, in its own syntax: each
  // restricted collective with the algorithms it may take
  // ("allreduce:ring,tree;allgather:bruck"), or "auto". Ranks compare it.
  std::string canonical() const;

 private:
  uint32_t allowed_[kTunedCollectives];  // a bit per TunedAlgorithm
};

}  // namespace loom
