#include "core/communicator.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>

#include "base/error.h"
#include "base/logging.h"
#include "base/small_alloc.h"
#include "bootstrap/host_interfaces.h"
#include "bootstrap/socket.h"
#include "collectives/hierarchical.h"
#include "collectives/plan.h"
#include "collectives/tuning_file.h"
#include "collectives/window_registration.h"
#include "core/signal_dump.h"
#include "core/version_banner.h"
#include "topology/placement.h"

namespace loom {
namespace {

// Spinning helps only when the rank being waited for has a core of its own.
// Where a transport moves a peer's bytes on a thread of its own (TCP's
// progress thread, Transport::ProgressBy::kOwnThread), polling without
// yielding would take the CPU that thread needs: such waits do not spin,
// they yield at once (docs/ENGINE.md, "Waiting with TCP peers").
int chooseSpinIterations(const CommConfig& config, int localRanks, bool progressThread) {
  if (config.spinIterations >= 0) return config.spinIterations;
  if (progressThread) return 0;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  // Where ranks outnumber cores, polling only keeps the awaited rank off
  // the core: a few polls, then yield. (An engine poll costs 2-3x the
  // pre-engine FIFO poll, so 50, tuned for that one, spun 2-3x as long and
  // left 4 and 8 ranks on 2 cores 1.3-1.5x slower: PERF.md.)
  return localRanks > cores ? 10 : 2000;
}

// Yielding hands the core to whatever the rank waits for (a local peer, or
// its own TCP thread), and between yields the engine reads its sockets
// itself, so a reply that arrives within the window crosses no thread and
// costs no wake-up. With TCP peers a shorter window measured best (2 fake
// hosts x 1 rank, 8 B: about 10 us at 200-300 us of yields, 20 us at 1000,
// 30-50 us when sleeping at once).
int64_t chooseYieldMicros(const CommConfig& config, bool progressThread) {
  if (config.yieldMicros >= 0) return config.yieldMicros;
  return progressThread ? 300 : 1000;
}

// Detecting the machine takes tens of milliseconds: do it once per process
// (per topology file), however many communicators and rank threads there are.
const topo::Topology& processTopology(const CommConfig& config) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<topo::Topology>> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<topo::Topology>& entry = loaded[config.topoFile];
  if (!entry) entry = topo::loadTopology(config.topoFile, config.topoDumpFile);
  return *entry;
}

std::string describeRing(const std::vector<int>& ring) {
  std::string text;
  for (int r : ring) {
    if (!text.empty()) text += ' ';
    text += std::to_string(r);
  }
  return text;
}

const char* relation(topo::Locality locality) {
  switch (locality) {
    case topo::Locality::kSameNuma: return "same NUMA node as";
    case topo::Locality::kSameSocket: return "same socket, other NUMA node than";
    case topo::Locality::kSameHost: return "other socket than";
    case topo::Locality::kOtherHost: return "other host than";
  }
  return "unknown relation to";
}

}  // namespace

Communicator::Communicator(int rank, int nranks, const bootstrap::RendezvousAddress& address, const CommConfig& config)
    : config_(config), recorder_(config.flightRecorderEntries) {
  installStartupLines();
  logStartup();
  team_.rank = rank;
  team_.nranks = nranks;
  team_.members.resize(nranks);
  std::iota(team_.members.begin(), team_.members.end(), 0);
  team_.places.resize(nranks);
  sentTo_.resize(nranks);
  inboxes_.resize(nranks);
  team_.ring = team_.members;
  team_.ringPosition = rank;
  team_.windows = &windows_;
  team_.inboxes = &inboxes_;
  team_.tuning = config.tuning;
  rendezvous_ = std::make_unique<bootstrap::RendezvousClient>(address, rank, nranks, config.timeoutMs);
  std::vector<RankIdentity> identities = exchangeIdentities(*rendezvous_);
  connectPeers(identities, *rendezvous_);
  const bool progressThread = connections_ && connections_->anyProgressThread();
  spinIterations_ = chooseSpinIterations(config, nranks, progressThread);
  yieldMicros_ = chooseYieldMicros(config, progressThread);
  placeMembers(identities);
  checkHierarchy();
  EngineSettings engine{nranks, spinIterations_, yieldMicros_, config.timeoutMs, &aborted_};
  engine_ = std::make_shared<Engine>(*this, connections_ ? connections_->idleSleep() : ownIdleSleep_, engine);
  if (config.dumpSignal != 0) listForSignalDumps(config.dumpSignal, this);
  LOOM_INFO("INIT", rank,
            "Loom " << LOOM_VERSION_STRING << " communicator" << (config.name.empty() ? "" : " '" + config.name + "'")
                    << " ready: rank " << rank << " of " << nranks << ", pid " << getpid() << ", timeout "
                    << config.timeoutMs << " ms, spin " << spinIterations_);
}

std::vector<RankIdentity> Communicator::exchangeIdentities(bootstrap::RendezvousClient& rendezvous) {
  // Where this rank runs, and its host's devices, travel with its identity
  // (one round for all).
  // One rank has no peer to place: it skips detecting the machine.
  RankIdentity mine;
  if (team_.nranks > 1) {
    const topo::Topology& topology = processTopology(config_);
    mine = RankIdentity::mine(topo::ownPlacement(topology), devicesOf(topology));
  } else {
    mine = RankIdentity::mine();
  }
  std::vector<std::string> encoded = rendezvous.allGather(mine.encode());
  std::vector<RankIdentity> identities;
  for (int peer = 0; peer < team_.nranks; ++peer) identities.push_back(RankIdentity::decode(encoded[peer], peer));
  return identities;
}

void Communicator::connectPeers(const std::vector<RankIdentity>& identities, bootstrap::RendezvousClient& rendezvous) {
  if (team_.nranks == 1) return;
  TransportSettings settings;
  settings.kinds = config_.kinds;
  settings.network = config_.sockets;
  settings.timeoutMs = config_.timeoutMs;
  // Every input of the algorithm choice (collectives/plan.h) that comes
  // from this rank's environment.
  const Tuning& tuning = team_.tuning;
  settings.agreedAbove =
      "LOOM_ALGO=" + tuning.allowed.canonical() +
      " LOOM_ALLPAIRS_MAX_BYTES=" + std::to_string(tuning.allPairsMaxBytes) +
      " LOOM_DIRECT_MIN_BYTES=" + std::to_string(tuning.directMinBytes) + " LOOM_TREE_MAX_BYTES=" +
      (tuning.treeMaxBytes == SIZE_MAX ? std::string("unset") : std::to_string(tuning.treeMaxBytes)) +
      " LOOM_TUNING_FILE=" + tuningFingerprint(tuning.costs);
  connections_ = std::make_unique<Connections>(
      team_.rank, identities, parseTransportFilter(config_.transports, "LOOM_TRANSPORTS"), settings, rendezvous);
  team_.connections = connections_.get();
  team_.slotBytes = connections_->slotBytesAmong(team_.members);
  useNetworkRate();
  const std::string whyNoSingleCopy = connections_->peerMemoryUnavailable();
  // A forced algorithm is never silently replaced: a benchmark or test that
  // asked for single-copy reads must not measure the FIFOs instead.
  const TunedCollective directOnly = team_.tuning.allowed.anyLeftOnly(TunedAlgorithm::kDirect);
  if (directOnly != TunedCollective::kCount && connections_->peerMemory() == nullptr)
    fail(loomUnsupported, "LOOM_ALGO='" + config_.algorithm + "' leaves " + collectiveName(directOnly) +
                              " only direct, which needs single-copy reads of peers' memory, and they are off: " +
                              whyNoSingleCopy + "; set LOOM_CMA=1, or unset LOOM_ALGO");
  if (team_.rank == 0) {
    if (connections_->peerMemory() != nullptr)
      LOOM_INFO("INIT", team_.rank,
                "AllReduce/AllGather/ReduceScatter may read peers' buffers directly (cross-memory attach) where the "
                "cost model finds it quicker, from "
                    << config_.tuning.directMinBytes << " bytes");
    else
      LOOM_INFO("INIT", team_.rank, "single-copy reads off, every byte goes through the FIFOs: " << whyNoSingleCopy);
  }
  for (int peer = 0; peer < team_.nranks; ++peer) {
    if (peer == team_.rank) continue;
    const SlotShape slots = connections_->slotShapeOf(peer);
    LOOM_INFO("INIT", team_.rank,
              team_.rank << "[" << identities[team_.rank].hostName() << "] -> " << peer << "["
                         << identities[peer].hostName() << "] (pid " << identities[peer].pid << ") via "
                         << connections_->describeLink(peer) << ", " << slots.slots << " slots of "
                         << slots.bytes / 1024 << " KiB each way");
  }
}

// The cost model's network moves TCP's share of what the slowest rank's
// link carries, where a rank's kernel gives its interface's rate and
// LOOM_TUNING_FILE's network bandwidth is the built-in one (a measured one,
// from loom-topo --calibrate-network, sees what a rate does not: TCP's
// costs, a switch between the hosts). A link whose rate no kernel gives
// may be slower than the others: with one, the network moves no more than
// the built-in guess. Before the sub-teams copy the constants.
void Communicator::useNetworkRate() {
  const NetworkRate links = connections_->networkRate();
  if (!links.any()) return;  // no rank has TCP peers
  LinkCosts& network = team_.tuning.costs.network;
  const double builtInBytesPerUs = defaultCosts().network.bytesPerUs;
  const bool builtIn = network.bytesPerUs == builtInBytesPerUs;
  if (builtIn && links.rank >= 0) {
    network.bytesPerUs = networkBytesPerUsAt(links.mbps);
    if (links.unknownRank >= 0) network.bytesPerUs = std::min(network.bytesPerUs, builtInBytesPerUs);
  }
  if (team_.rank != 0) return;
  std::ostringstream line;
  if (links.rank >= 0)
    line << "the slowest link " << (links.unknownRank >= 0 ? "that gives a rate " : "") << "is rank " << links.rank
         << "'s, " << links.mbps << " Mbit/s";
  if (links.unknownRank >= 0)
    line << (links.rank >= 0 ? ", and " : "") << "rank " << links.unknownRank << "'s interface gives no rate";
  line << "; the cost model's network moves " << network.bytesPerUs << " bytes/us";
  if (!builtIn)
    line << " (LOOM_TUNING_FILE's)";
  else if (links.rank < 0)
    line << " (built in)";
  else
    line << " (TCP's share of that rate" << (links.unknownRank >= 0 ? ", at most the built-in one)" : ")");
  LOOM_INFO("INIT", team_.rank, "network: " << line.str());
}

// Ranks tell each other where they run; the team keeps it (host, local
// index, socket, NUMA node) for sub-teams, and the ring crosses sockets and
// NUMA nodes as few times as possible, whatever the rank numbering.
// A forced algorithm is never silently replaced (as LOOM_ALGO=direct): the
// steps need several hosts, one of them with several ranks.
void Communicator::checkHierarchy() {
  // Small AllReduce goes through one leader per host, and large calls in
  // steps, on any layout of several hosts (hierarchical.h), even or not.
  team_.hosts = hostsOf(team_);
  std::vector<int> onHost(team_.hosts, 0);
  for (const MemberPlace& place : team_.places)
    team_.mostRanksOnAHost = std::max(team_.mostRanksOnAHost, ++onHost[place.host]);
  team_.fewestRanksOnAHost = *std::min_element(onHost.begin(), onHost.end());
  const bool fits = hierarchicalFits(team_);
  const AlgorithmFilter& allowed = team_.tuning.allowed;
  const TunedCollective forced = allowed.anyLeftOnly(TunedAlgorithm::kHierarchical);
  if (!fits && forced != TunedCollective::kCount)
    fail(loomUnsupported, "LOOM_ALGO='" + config_.algorithm + "' leaves " + collectiveName(forced) +
                              " only hierarchical, which needs ranks on at least two hosts, some host with more "
                              "than one: this communicator has " +
                              describeHosts(team_) + "; unset LOOM_ALGO to let Loom choose");
  const bool chosen =
      forced != TunedCollective::kCount ||
      (allowed.allows(TunedCollective::kAllReduce, TunedAlgorithm::kHierarchical) && team_.peerMemory() == nullptr);
  if (team_.rank == 0 && fits && chosen)
    LOOM_INFO(
        "INIT", team_.rank,
        describeHosts(team_) << (blocksInFewRounds(planInputsOf(team_)) ? ": AllReduce, AllGather and ReduceScatter run"
                                                                        : ": AllReduce runs")
                             << " within and across hosts in steps where the cost model finds it cheaper");
  // The members' places are final: form the sub-teams here, not on a
  // collective's first call.
  team_.keepSubTeams();
  keepAcrossHostsShape(team_);
}

void Communicator::placeMembers(const std::vector<RankIdentity>& identities) {
  std::vector<std::string> hosts;  // in order of their lowest rank
  std::vector<int> ranksSeen;      // per host
  for (int r = 0; r < team_.nranks; ++r) {
    auto at = std::find(hosts.begin(), hosts.end(), identities[r].host);
    if (at == hosts.end()) {
      hosts.push_back(identities[r].host);
      ranksSeen.push_back(0);
      at = hosts.end() - 1;
    }
    const size_t host = static_cast<size_t>(at - hosts.begin());
    team_.places[r].host = static_cast<int>(host);
    team_.places[r].localIndex = ranksSeen[host]++;
  }
  if (team_.nranks == 1) return;
  std::vector<topo::RankPlacement> placements(team_.nranks);
  for (int r = 0; r < team_.nranks; ++r) {
    placements[r] = identities[r].place;
    // The host as the transports see it (LOOM_HOST_ID, or hostname plus boot
    // id), not the hostname the placement carries: containers and fake hosts
    // share a hostname, and the ring must keep each host's ranks together.
    std::snprintf(placements[r].host, sizeof(placements[r].host), "host%d", team_.places[r].host);
    team_.places[r].package = placements[r].package;
    team_.places[r].numa = placements[r].numa;
  }
  team_.ring = topo::ringOrder(placements);
  const topo::HostCrowding crowding = topo::mostCrowdedHost(placements);
  team_.ranksPerCpu = crowding.ranksPerCpu;
  team_.sockets = crowding.sockets;
  team_.fewestCpusOnAHost = crowding.fewestCpus;
  for (int i = 0; i < team_.nranks; ++i)
    if (team_.ring[i] == team_.rank) team_.ringPosition = i;
  if (team_.rank == 0) {
    topo::RingCrossings crossings = topo::countCrossings(placements, team_.ring);
    LOOM_INFO("INIT", team_.rank,
              "ring " << describeRing(team_.ring) << " crosses "
                      << (hosts.size() > 1 ? std::to_string(crossings.hosts) + " host boundaries, " : "")
                      << crossings.packages << " socket boundaries and " << crossings.numas
                      << " NUMA boundaries inside a socket");
    if (team_.ranksPerCpu > 1)
      LOOM_INFO("INIT", team_.rank,
                "up to " << team_.ranksPerCpu
                         << " ranks per CPU on a host (the CPUs their bindings cover): they run in turns, and the "
                            "cost model counts their turns");
  }
  const topo::RankPlacement& me = placements[team_.rank];
  for (int peer = 0; peer < team_.nranks; ++peer) {
    if (peer == team_.rank) continue;
    LOOM_INFO("INIT", team_.rank,
              "rank " << peer << " runs on socket " << placements[peer].package << ", NUMA node "
                      << placements[peer].numa << ": " << relation(topo::locality(me, placements[peer])) << " rank "
                      << team_.rank);
  }
}

Communicator::~Communicator() {
  if (config_.dumpSignal != 0) unlistForSignalDumps(this);
  if (engine_) engine_->stop();
}

OperationPtr Communicator::newOperation() {
  return std::allocate_shared<Operation>(SmallAllocator<Operation>(), engine_);
}

void Communicator::number(Operation& op, const char* name, const CollectiveCall* call, Lane lane) {
  op.name = name;
  op.lane = lane;
  op.sequence = ++operations_;
  if (call != nullptr) {
    op.call = *call;
    op.call.number = ++collectives_;
  } else if (lane.kind == Lane::Kind::kSend) {
    op.messageNumber = ++sentTo_[lane.peer];  // every tag's: the receiver checks the pair's stream
  } else if (lane.kind == Lane::Kind::kRecv) {
    inboxes_.posted().posted(op.sequence, lane.peer, lane.tag);
  }
  if (op.isCollective())
    op.record = recorder_.posted(op.sequence, name, op.call.count, op.call.dtype, op.call.op, op.call.root, -1);
  else
    op.record = recorder_.posted(op.sequence, name, op.args.count, op.args.dtype, -1, -1, lane.peer);
  LOOM_TRACE("COLL", team_.rank, name << " #" << op.sequence);
}

loomResult_t Communicator::run(const char* name, const CollectiveCall* call, Operation::Body body, std::string* error) {
  ExclusiveCalls::Scope inside = enterCall(name);
  OperationPtr op = newOperation();
  op->body = std::move(body);
  number(*op, name, call, Lane::collective());
  std::shared_ptr<Request> request = requestOf(op);
  engine_->run(std::move(op));
  loomResult_t result = request->result();
  if (result != loomSuccess) *error = request->error();
  return result;
}

Outcome Communicator::beginOperation(Operation& op) {
  op.prepareWaits(config_.timeoutMs, &aborted_, team_.rank, &config_.name);
  WaitContext& wait = op.wait;
  FlightRecorder::started(op.record, op.sequence, op.startsAtPosting);
  if (op.record != nullptr) wait.algorithm = &op.record->algorithm;

  Outcome outcome;
  if (broken_.load(std::memory_order_acquire)) {
    {
      std::lock_guard<std::mutex> lock(errorMutex_);
      outcome.code = brokenBy_ == loomAborted ? loomAborted : loomInvalidUsage;
      outcome.failure = wait.describe() + " cannot run: this communicator failed earlier (" + brokenSentence_ +
                        "); destroy or abort it and create a new one";
    }
    if (refusalWarned_.exchange(true))
      LOOM_INFO("COLL", team_.rank, outcome.failure);
    else
      LOOM_WARN("COLL", team_.rank, outcome.failure << " (later calls refused alike are logged at INFO)");
  } else if (aborted_.load()) {
    outcome.code = loomAborted;
    outcome.failure = wait.describe() + " was aborted (loomCommAbort) before it started";
    LOOM_WARN("COLL", team_.rank, outcome.failure);
  } else {
    if (op.isCollective() && connections_) connections_->announceCollectiveStarted(op.call);
    return outcome;
  }
  recordError(outcome.failure);
  return outcome;
}

Outcome Communicator::endOperation(Operation& op, std::exception_ptr error) {
  Outcome outcome;
  if (!error) return outcome;
  const WaitContext& wait = op.wait;
  try {
    std::rethrow_exception(error);
  } catch (const Error& e) {
    outcome.code = e.code();
    outcome.failure = e.what();
  } catch (const std::bad_alloc&) {
    outcome.code = loomSystemError;
    outcome.failure = "out of memory";
  } catch (const std::exception& e) {
    outcome.code = loomInternalError;
    outcome.failure = std::string("failed inside Loom: ") + e.what();
  }
  // Every failure sentence starts by naming the operation.
  const std::string who = wait.describe();
  if (outcome.failure.compare(0, who.size(), who) != 0) outcome.failure = who + ": " + outcome.failure;
  if (outcome.code == loomTimeout && op.isCollective()) outcome.failure += arrivalReport(op.call.number);
  {
    std::lock_guard<std::mutex> lock(errorMutex_);
    if (!broken_.load(std::memory_order_relaxed)) {
      brokenBy_ = outcome.code;
      brokenSentence_ = outcome.failure;
      // With the code, so that a watchdog that sees the async error
      // (loomCommGetAsyncError) reads its sentence, not an older one.
      lastError_ = outcome.failure;
      broken_.store(true, std::memory_order_release);
    }
  }
  if (connections_) connections_->announceFailure(outcome.failure);
  LOOM_WARN("COLL", team_.rank, outcome.failure);
  FlightRecorder::ended(op.record, op.sequence, outcome.code);
  dumpFlightRecorder("after the failure above", false);
  recordError(outcome.failure);
  return outcome;
}

void Communicator::publishProgress(int64_t nowMs, int waitingFor) {
  if (connections_) connections_->publishProgress(nowMs, waitingFor);
}

// A rank that keeps beating its heart is alive, whatever it waits for; one
// whose heartbeat is older than this (while it has operations pending, it
// beats every 50 ms) is stopped or starved. Short timeouts need a short bar.
std::string Communicator::stallReport(int peer, int64_t nowMs) const {
  if (!connections_) return {};
  const int64_t staleMs = std::min<int64_t>(1000, std::max<int64_t>(config_.timeoutMs / 2, 200));
  std::vector<bool> seen(team_.nranks, false);
  std::vector<int> chain;  // peer, the rank peer waits for, the rank that one waits for...
  for (int at = peer; at >= 0 && at < team_.nranks && at != team_.rank && !seen[at];) {
    seen[at] = true;
    chain.push_back(at);
    const PeerProgress progress = connections_->progressOf(at);
    if (!progress.known) return {};
    const int64_t silentMs = nowMs - progress.heartbeatMs;
    if (silentMs > staleMs) {
      // "rank 3 waits for rank 2, which waits for rank 1, which has shown..."
      std::string text = "; rank " + std::to_string(chain[0]);
      for (size_t i = 1; i < chain.size(); ++i)
        text += (i == 1 ? " waits for rank " : ", which waits for rank ") + std::to_string(chain[i]);
      return text + (chain.size() == 1 ? " has" : ", which has") + " shown no sign of life for " +
             std::to_string(silentMs) + " ms (is it stopped, in a debugger, or starved of CPU?)";
    }
    at = progress.waitingFor;
  }
  return {};
}

void Communicator::operationEnded(Operation& op, loomResult_t result) {
  FlightRecorder::ended(op.record, op.sequence, result);
  if (op.lane.kind == Lane::Kind::kRecv) inboxes_.posted().ended(op.sequence, op.lane.peer, op.lane.tag);
}

void Communicator::dumpFlightRecorder(const std::string& why, bool whateverTheLevel) const {
  if (!whateverTheLevel && !logEnabled(LogLevel::kWarn, "COLL")) return;
  std::vector<std::string> lines = recorder_.describe();
  std::string head = "flight recorder " + why + ": the last " + std::to_string(lines.size()) + " of " +
                     std::to_string(recorder_.operationsSeen()) + " operations of rank " + std::to_string(team_.rank) +
                     (config_.name.empty() ? "" : " of communicator '" + config_.name + "'") + ", oldest first" +
                     (lines.empty() ? " (LOOM_FLIGHT_RECORDER_ENTRIES=0 keeps none)" : "");
  logLine(LogLevel::kWarn, "COLL", team_.rank, head);
  for (const std::string& line : lines) logLine(LogLevel::kWarn, "COLL", team_.rank, "  " + line);
}

loomResult_t Communicator::asyncError() const {
  if (!broken_.load(std::memory_order_acquire)) return loomSuccess;
  std::lock_guard<std::mutex> lock(errorMutex_);
  return brokenBy_;
}

std::string Communicator::brokenBecause() const {
  if (!broken_.load(std::memory_order_acquire)) return {};
  std::lock_guard<std::mutex> lock(errorMutex_);
  return brokenSentence_;
}

std::string Communicator::arrivalReport(uint64_t collective) const {
  std::string late;
  for (int peer = 0; peer < team_.nranks; ++peer) {
    int64_t started = connections_->collectivesStartedBy(peer);
    if (started >= 0 && static_cast<uint64_t>(started) < collective)
      late += (late.empty() ? "" : ", ") + std::to_string(peer) + " (has started " + std::to_string(started) + ")";
  }
  if (late.empty()) return "; every rank has started this collective, so one of them is stalled inside it";
  return "; ranks that have not started collective " + std::to_string(collective) + " of this communicator: " + late;
}

std::unique_ptr<Communicator> Communicator::split(int color, int key, const CommConfig& config) {
  struct Choice {
    int32_t color, key;
  };
  Choice mine{color, key};
  std::vector<std::string> all = rendezvous_->allGather(std::string(reinterpret_cast<char*>(&mine), sizeof(mine)));
  std::vector<std::pair<Choice, int>> members;  // (choice, parent rank) of my color
  for (int r = 0; r < team_.nranks; ++r) {
    if (all[r].size() != sizeof(Choice))
      fail(loomRemoteError, "rank " + std::to_string(r) + " sent a malformed split request");
    Choice theirs;
    std::memcpy(&theirs, all[r].data(), sizeof(theirs));
    if (theirs.color < LOOM_SPLIT_NOCOLOR)
      fail(loomInvalidArgument, "loomCommSplit: rank " + std::to_string(r) + " passed color " +
                                    std::to_string(theirs.color) + "; colors are >= 0, or LOOM_SPLIT_NOCOLOR");
    if (color >= 0 && theirs.color == color) members.push_back({theirs, r});
  }
  std::stable_sort(members.begin(), members.end(),
                   [](const auto& a, const auto& b) { return a.first.key < b.first.key; });
  // The first member hosts the new communicator's rendezvous and shares its id.
  std::string idBytes;
  if (!members.empty() && members.front().second == team_.rank) {
    bootstrap::RendezvousAddress address;
    address.secret = bootstrap::randomSecret();
    // On the interface this rank's TCP listens on (the parent's rendezvous
    // is the hint), which the other members already reach.
    const bootstrap::IpAddress listenOn = bootstrap::findInterface(config.sockets, rendezvous_->address()).address;
    address.endpoint = bootstrap::startRendezvous(address.secret, {listenOn, 0}, config.timeoutMs);
    loomUniqueId id = bootstrap::encodeUniqueId(address);
    idBytes.assign(id.internal, sizeof(id.internal));
  }
  std::vector<std::string> ids = rendezvous_->allGather(idBytes);
  if (members.empty()) return nullptr;
  const std::string& leaderId = ids[members.front().second];
  if (leaderId.size() != sizeof(loomUniqueId))
    fail(loomRemoteError, "rank " + std::to_string(members.front().second) + " did not share the split's unique id");
  loomUniqueId id;
  std::memcpy(id.internal, leaderId.data(), sizeof(id.internal));
  int newRank = 0;
  while (members[newRank].second != team_.rank) ++newRank;
  return std::make_unique<Communicator>(newRank, static_cast<int>(members.size()), bootstrap::decodeUniqueId(id),
                                        config);
}

namespace {

// Runs a (de)registration as a collective operation; its own refusal (a
// rank that cannot map, a mismatched handle) leaves the communicator usable.
template <typename Body>
void runRegistration(Communicator& comm, OperationKind kind, const Body& body) {
  const char* name = operationName(kind);
  CollectiveCall call;
  call.kind = kind;
  std::optional<Error> refusal;
  std::string error;
  loomResult_t result = comm.run(
      name, &call, [&](const Team& team, const WaitContext& wait) -> Task<> { refusal = co_await body(team, wait); },
      &error);
  if (result != loomSuccess) fail(result, error);
  if (refusal) throw *refusal;
}

}  // namespace

void* Communicator::registerBuffer(void* buffer, size_t bytes) {
  offerRegion("loomCommRegister", 0, buffer, bytes);  // fails here, before peers wait, on foreign memory
  uint64_t window = 0;
  runRegistration(*this, OperationKind::kRegister, [&](const Team& team, const WaitContext& wait) {
    RegionOffer mine = offerRegion("loomCommRegister", team.windows->nextWindow(), buffer, bytes);
    window = mine.window;
    return registerWindow(team, mine, wait);
  });
  LOOM_INFO("COLL", team_.rank, "registered " << bytes << " bytes as window #" << window);
  return reinterpret_cast<void*>(static_cast<uintptr_t>(window));
}

void Communicator::deregisterBuffer(void* handle) {
  const uint64_t window = reinterpret_cast<uintptr_t>(handle);
  runRegistration(*this, OperationKind::kDeregister,
                  [&](const Team& team, const WaitContext& wait) { return deregisterWindow(team, window, wait); });
}

void Communicator::abort() {
  aborted_.store(true);
  engine_->wake();
  if (connections_)
    connections_->announceFailure("rank " + std::to_string(team_.rank) + " aborted its communicator (loomCommAbort)");
}

void Communicator::recordError(const std::string& sentence) {
  std::lock_guard<std::mutex> lock(errorMutex_);
  lastError_ = sentence;
}

std::string Communicator::lastError() const {
  std::lock_guard<std::mutex> lock(errorMutex_);
  return lastError_;
}

}  // namespace loom
