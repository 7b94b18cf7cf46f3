#include "collectives/algorithm_table.h"

#include <strings.h>

#include <cctype>
#include <string>
#include <vector>

#include "base/error.h"

namespace loom {
namespace {

constexpr uint32_t bit(TunedCollective c) {
  return 1u << static_cast<int>(c);
}
constexpr uint32_t kAllReduce = bit(TunedCollective::kAllReduce), kAllGather = bit(TunedCollective::kAllGather),
                   kReduceScatter = bit(TunedCollective::kReduceScatter), kBroadcast = bit(TunedCollective::kBroadcast),
                   kReduce = bit(TunedCollective::kReduce), kBarrier = bit(TunedCollective::kBarrier);
constexpr uint32_t kEveryAlgorithm = (1u << kTunedAlgorithms) - 1;

// In TunedAlgorithm's order.
const AlgorithmRow kRows[] = {
    {TunedAlgorithm::kAllPairs, "allpairs", kAllReduce | kBarrier, "one step: every rank sends its data to every peer"},
    {TunedAlgorithm::kRing, "ring", kAllReduce | kAllGather | kReduceScatter | kBroadcast | kReduce | kBarrier,
     "around the ring, pipelined by slots; Broadcast and Reduce as a chain along it"},
    {TunedAlgorithm::kTree, "tree", kAllReduce | kBroadcast | kReduce,
     "binary trees over the ring order: AllReduce up and down two of them, each with half the data"},
    {TunedAlgorithm::kHalvingDoubling, "halvingdoubling", kAllReduce | kAllGather | kReduceScatter,
     "recursive halving (ReduceScatter), doubling (AllGather), both (AllReduce), ranks beyond a power of two "
     "folded in"},
    {TunedAlgorithm::kBruck, "bruck", kAllGather,
     "log2(P) steps, each to the rank 2^k behind on the ring, any rank count"},
    {TunedAlgorithm::kDirect, "direct", kAllReduce | kAllGather | kReduceScatter,
     "single copy: each rank reads its peers' buffers (LOOM_CMA=1)"},
    {TunedAlgorithm::kRegistered, "registered", kAllReduce | kAllGather | kReduceScatter,
     "single copy between buffers every rank registered"},
    {TunedAlgorithm::kHierarchical, "hierarchical", kAllReduce | kAllGather | kReduceScatter,
     "within hosts, across them, within them again"},
    {TunedAlgorithm::kHostLeaders, "hostleaders", kAllReduce | kAllGather,
     "through one leader per host, which alone crosses the network"},
    {TunedAlgorithm::kDissemination, "dissemination", kBarrier,
     "log2(P) rounds, each rank signalling the rank 2^k ahead on the ring"},
    {TunedAlgorithm::kBinomial, "binomial", kBroadcast | kReduce,
     "a binomial tree over the ring order: each round every rank that has the data passes it on once"},
};
static_assert(sizeof(kRows) / sizeof(kRows[0]) == kTunedAlgorithms, "one row per algorithm");

const char* const kCollectiveNames[] = {"AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce", "Barrier"};
static_assert(sizeof(kCollectiveNames) / sizeof(kCollectiveNames[0]) == kTunedCollectives, "one name each");

// The algorithms that serve `c`, a bit each.
uint32_t servingMask(TunedCollective c) {
  uint32_t mask = 0;
  for (const AlgorithmRow& row : kRows)
    if (row.serves(c)) mask |= 1u << static_cast<int>(row.id);
  return mask;
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) out += (i == 0 ? "" : ", ") + names[i];
  return out;
}

// "allpairs, ring, ...": the algorithms in `mask`, in table order.
std::string namesOf(uint32_t mask) {
  std::vector<std::string> names;
  for (const AlgorithmRow& row : kRows)
    if ((mask >> static_cast<int>(row.id)) & 1u) names.push_back(row.name);
  return join(names);
}

std::string everyCollective() {
  return join(std::vector<std::string>(std::begin(kCollectiveNames), std::end(kCollectiveNames)));
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    const size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

std::string trimmed(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

}  // namespace

const AlgorithmRow& algorithmRow(TunedAlgorithm algorithm) {
  return kRows[static_cast<int>(algorithm)];
}

const char* algorithmName(TunedAlgorithm algorithm) {
  return algorithmRow(algorithm).name;
}

const char* collectiveName(TunedCollective collective) {
  return kCollectiveNames[static_cast<int>(collective)];
}

AlgorithmFilter::AlgorithmFilter() {
  for (uint32_t& allowed : allowed_) allowed = kEveryAlgorithm;
}

bool AlgorithmFilter::restricted(TunedCollective collective) const {
  const uint32_t serving = servingMask(collective);
  return (allowed_[static_cast<int>(collective)] & serving) != serving;
}

std::string AlgorithmFilter::canonical() const {
  std::string text;
  for (int c = 0; c < kTunedCollectives; ++c) {
    const TunedCollective collective = static_cast<TunedCollective>(c);
    if (!restricted(collective)) continue;
    std::string name = collectiveName(collective);
    for (char& ch : name) ch = static_cast<char>(tolower(static_cast<unsigned char>(ch)));
    // Appended piece by piece: `"x" + string` trips GCC 12's false -Wrestrict.
    if (!text.empty()) text += ';';
    text += name;
    text += ':';
    bool first = true;
    for (const AlgorithmRow& row : kRows) {
      if (!row.serves(collective) || !allows(collective, row.id)) continue;
      if (!first) text += ',';
      text += row.name;
      first = false;
    }
  }
  return text.empty() ? "auto" : text;
}

TunedCollective AlgorithmFilter::anyLeftOnly(TunedAlgorithm algorithm) const {
  for (int c = 0; c < kTunedCollectives; ++c)
    if (onlyAllows(static_cast<TunedCollective>(c), algorithm)) return static_cast<TunedCollective>(c);
  return TunedCollective::kCount;
}

AlgorithmFilter AlgorithmFilter::parse(const std::string& setting, const char* variable) {
  AlgorithmFilter filter;
  const std::string quoted = std::string(variable) + "='" + setting + "'";
  auto refuse = [&](const std::string& why) {
    fail(loomInvalidArgument, quoted + ": " + why + " (NCCL_ALGO's syntax: a list of algorithms such as 'tree', " +
                                  "'^tree' for all but those, 'allreduce:tree;allgather:ring' per collective; " +
                                  "unset it to let Loom choose)");
  };
  if (trimmed(setting).empty()) return filter;
  const std::vector<std::string> entries = split(setting, ';');
  for (size_t e = 0; e < entries.size(); ++e) {
    const std::string entry = trimmed(entries[e]);
    if (entry.empty()) refuse("entry " + std::to_string(e + 1) + " is empty");
    const size_t colon = entry.find(':');
    // Which collectives the entry limits: one named, or (first entry only) all.
    int only = -1;
    std::string list = entry;
    if (colon != std::string::npos) {
      const std::string prefix = trimmed(entry.substr(0, colon));
      for (int c = 0; c < kTunedCollectives; ++c)
        if (strcasecmp(prefix.c_str(), kCollectiveNames[c]) == 0) only = c;
      if (only < 0) refuse("'" + prefix + "' is not a collective; the collectives are " + everyCollective());
      list = trimmed(entry.substr(colon + 1));
    } else if (e > 0) {
      refuse("'" + entry + "' names no collective; every entry after the first needs one, as 'allgather:ring'");
    }
    const bool except = !list.empty() && list[0] == '^';
    if (except) list = trimmed(list.substr(1));
    if (list.empty()) refuse("'" + entry + "' names no algorithm");
    uint32_t named = 0;
    for (const std::string& raw : split(list, ',')) {
      const std::string name = trimmed(raw);
      int found = -1;
      for (int a = 0; a < kTunedAlgorithms; ++a)
        if (strcasecmp(name.c_str(), kRows[a].name) == 0) found = a;
      if (found < 0) refuse("'" + name + "' is not an algorithm; the algorithms are " + namesOf(kEveryAlgorithm));
      named |= 1u << found;
    }
    for (int c = 0; c < kTunedCollectives; ++c) {
      if (only >= 0 && c != only) continue;
      const auto collective = static_cast<TunedCollective>(c);
      const uint32_t allowed = (except ? ~named : named) & servingMask(collective);
      if (allowed == 0) {
        // A list for every collective limits those it can; naming one
        // collective with nothing to run it is an error.
        if (only < 0) continue;
        refuse(std::string(kCollectiveNames[c]) + " would have no algorithm left; " + kCollectiveNames[c] +
               " runs with " + namesOf(servingMask(collective)));
      }
      filter.allowed_[c] = allowed;
    }
  }
  return filter;
}

}  // namespace loom
