#include "simulate/simulation.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "base/error.h"
#include "collectives/collectives.h"
#include "simulate/virtual_ranks.h"

namespace loom::simulate {
namespace {

// Small integers: sums over thousands of ranks stay exact in float32.
float valueOf(int rank, size_t i) {
  return static_cast<float>(static_cast<int64_t>((i * 7 + static_cast<size_t>(rank) * 13) % 101) - 50);
}

struct Shape {
  OperationKind kind;
  Schedule schedule;
  double busFactor;  // bus bandwidth over algorithm bandwidth, as nccl-tests counts it
  size_t sendCount;  // elements per rank
  size_t recvCount;
};

// `elements`: the size in float32 elements, as nccl-tests' size column.
Shape shapeOf(TunedCollective collective, int p, size_t elements) {
  const double share = static_cast<double>(p - 1) / p;
  const size_t block = elements / static_cast<size_t>(p);
  switch (collective) {
    case TunedCollective::kAllReduce: return {OperationKind::kAllReduce, allReduce, 2 * share, elements, elements};
    case TunedCollective::kAllGather: return {OperationKind::kAllGather, allGather, share, block, block * p};
    case TunedCollective::kReduceScatter:
      return {OperationKind::kReduceScatter, reduceScatter, share, block * p, block};
    case TunedCollective::kBroadcast: return {OperationKind::kBroadcast, broadcast, 1, elements, elements};
    case TunedCollective::kReduce: return {OperationKind::kReduce, reduce, 1, elements, elements};
    default: fail(loomInvalidArgument, std::string("the simulator does not run ") + collectiveName(collective));
  }
}

bool reduces(TunedCollective c) {
  return c == TunedCollective::kAllReduce || c == TunedCollective::kReduceScatter || c == TunedCollective::kReduce;
}

// Every rank's result against what it must hold; throws at the first difference.
void check(TunedCollective collective, int p, const Shape& shape, const std::vector<std::vector<float>>& recv) {
  std::vector<float> sums;
  if (reduces(collective)) {
    sums.assign(shape.sendCount, 0.0f);
    for (int r = 0; r < p; ++r)
      for (size_t i = 0; i < shape.sendCount; ++i) sums[i] += valueOf(r, i);
  }
  for (int r = 0; r < p; ++r) {
    // Reduce leaves a result at the root alone.
    if (collective == TunedCollective::kReduce && r != 0) continue;
    for (size_t i = 0; i < shape.recvCount; ++i) {
      float want = 0;
      switch (collective) {
        case TunedCollective::kAllGather:
          want = valueOf(static_cast<int>(i / shape.sendCount), i % shape.sendCount);
          break;
        case TunedCollective::kReduceScatter: want = sums[static_cast<size_t>(r) * shape.recvCount + i]; break;
        case TunedCollective::kBroadcast: want = valueOf(0, i); break;
        default: want = sums[i];
      }
      if (recv[r][i] != want)
        fail(loomInternalError, std::string("the simulated ") + collectiveName(collective) + " on " +
                                    std::to_string(p) + " ranks left " + std::to_string(recv[r][i]) + " at element " +
                                    std::to_string(i) + " of rank " + std::to_string(r) + ", where " +
                                    std::to_string(want) + " belongs");
    }
  }
}

}  // namespace

const std::vector<TunedCollective>& simulatedCollectives() {
  static const std::vector<TunedCollective> collectives = {TunedCollective::kAllReduce, TunedCollective::kAllGather,
                                                           TunedCollective::kReduceScatter, TunedCollective::kBroadcast,
                                                           TunedCollective::kReduce};
  return collectives;
}

std::vector<TunedAlgorithm> simulatedAlgorithms(TunedCollective collective) {
  std::vector<TunedAlgorithm> algorithms;
  for (int a = 0; a < kTunedAlgorithms; ++a) {
    const auto algorithm = static_cast<TunedAlgorithm>(a);
    // Single-copy schedules read peers' buffers in place: no message to time.
    if (algorithm == TunedAlgorithm::kDirect || algorithm == TunedAlgorithm::kRegistered) continue;
    if (algorithmRow(algorithm).serves(collective)) algorithms.push_back(algorithm);
  }
  return algorithms;
}

size_t simulationMemoryBytes(TunedCollective collective, TunedAlgorithm algorithm, int nranks, size_t bytes,
                             const SlotShape& shape) {
  const Shape counts = shapeOf(collective, nranks, bytes / sizeof(float));
  const size_t p = static_cast<size_t>(nranks);
  size_t need = p * (counts.sendCount + counts.recvCount) * sizeof(float);
  if (algorithm == TunedAlgorithm::kAllPairs) {
    constexpr size_t kPage = 4096;
    const size_t message = std::min(bytes, shape.bytes);
    need += p * (p - 1) * ((message + kPage - 1) / kPage * kPage);
  }
  return need;
}

SimulatedPoint simulatePoint(const SimulationLayout& layout, TunedCollective collective, TunedAlgorithm algorithm,
                             size_t bytes) {
  const auto started = std::chrono::steady_clock::now();
  const int p = static_cast<int>(layout.hostOf.size());
  const Shape shape = shapeOf(collective, p, bytes / sizeof(float));
  VirtualLayout virtualLayout;
  virtualLayout.hostOf = layout.hostOf;
  virtualLayout.shape = layout.shape;
  virtualLayout.tuning = layout.tuning;
  const bool automatic = algorithm == TunedAlgorithm::kCount;
  if (!automatic)
    virtualLayout.tuning.allowed =
        AlgorithmFilter::parse(std::string(collectiveName(collective)) + ":" + algorithmName(algorithm));
  const CostConstants& costs = layout.tuning.costs;
  const LinkCosts& local = costs.sharedMemory;
  const LinkCosts& network = costs.network;
  virtualLayout.timeline = mem::TimelineModel{{},
                                              {local.latencyUs, local.bytesPerUs, local.messageUs},
                                              {network.latencyUs, network.bytesPerUs, network.messageUs}};
  // The messages in flight that fit the budget, at a page at least each.
  const size_t perMessage = std::max<size_t>(4096, std::min(bytes, layout.shape.bytes));
  virtualLayout.maxMessagesInFlight = std::max<size_t>(1, layout.memoryBudget / perMessage);
  VirtualRanks ranks(virtualLayout);

  std::vector<std::vector<float>> send(p), recv(p);
  for (int r = 0; r < p; ++r) {
    send[r].resize(shape.sendCount);
    for (size_t i = 0; i < shape.sendCount; ++i) send[r][i] = valueOf(r, i);
    recv[r].assign(shape.recvCount, -1.0f);
  }
  const CollectiveRun run = ranks.run(shape.kind, shape.schedule, [&](int r) {
    CollectiveArgs args;
    args.sendbuf = send[r].data();
    args.recvbuf = recv[r].data();
    // As the C API counts: AllGather per rank sent, ReduceScatter per rank received.
    args.count = collective == TunedCollective::kReduceScatter ? shape.recvCount : shape.sendCount;
    args.dtype = loomFloat32;
    args.op = loomSum;
    args.root = 0;
    return args;
  });
  check(collective, p, shape, recv);

  SimulatedPoint point;
  point.collective = collective;
  point.asked = automatic ? "auto" : algorithmName(algorithm);
  point.ran = run.algorithm;
  point.nranks = p;
  // The size as run: blocks of whole elements per rank.
  point.bytes = std::max(shape.sendCount, shape.recvCount) * sizeof(float);
  point.predictedUs = ranks.timeline()->latestUs();
  point.steps = ranks.timeline()->deepestStep();
  const double dataBytes = static_cast<double>(point.bytes);
  point.busGBs = point.predictedUs > 0 ? dataBytes / point.predictedUs / 1000 * shape.busFactor : 0;
  point.local = ranks.timeline()->local();
  point.network = ranks.timeline()->network();
  point.sweeps = run.sweeps;
  point.wallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return point;
}

}  // namespace loom::simulate
