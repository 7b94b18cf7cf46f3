#include "core/communicator.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <numeric>

#include "bootstrap/socket.h"
#include "core/error.h"
#include "core/logging.h"
#include "collectives/window_registration.h"
#include "topology/placement.h"
#include "transport/shm/cross_memory_attach.h"
#include "transport/shm/shm_transport.h"

namespace loom {
namespace {

// What ranks tell each other at init to decide how they connect.
struct PeerIdentity {
  std::string host;  // hostname plus boot id: two containers may share a name
  pid_t pid = 0;

  std::string encode() const { return host + "\n" + std::to_string(pid); }
  static PeerIdentity decode(const std::string& text, int rank) {
    PeerIdentity identity;
    size_t newline = text.rfind('\n');
    char* end = nullptr;
    long pid = newline == std::string::npos ? 0 : std::strtol(text.c_str() + newline + 1, &end, 10);
    if (newline == std::string::npos || end == nullptr || *end != '\0' || pid <= 0)
      fail(loomRemoteError, "rank " + std::to_string(rank) + " sent a malformed identity at init");
    identity.host = text.substr(0, newline);
    identity.pid = static_cast<pid_t>(pid);
    return identity;
  }
};

PeerIdentity myIdentity() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  std::string bootId;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> bootId;
  return PeerIdentity{std::string(name) + "/" + bootId, getpid()};
}

std::string hostPart(const std::string& host) {
  return host.substr(0, host.find('/'));
}

// Spinning helps only when the rank being waited for has a core of its own.
int chooseSpinIterations(const CommConfig& config, int localRanks) {
  if (config.spinIterations >= 0) return config.spinIterations;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return localRanks > cores ? 50 : 2000;
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
    : config_(config) {
  logStartup();
  team_.rank = rank;
  team_.nranks = nranks;
  team_.ring.resize(nranks);
  std::iota(team_.ring.begin(), team_.ring.end(), 0);
  team_.ringPosition = rank;
  team_.transport = nullptr;
  team_.windows = &windows_;
  team_.tuning.force = config.algorithm == "ring"       ? Tuning::Force::kRing
                       : config.algorithm == "allpairs" ? Tuning::Force::kAllPairs
                       : config.algorithm == "direct"   ? Tuning::Force::kDirect
                       : config.algorithm == "tree"     ? Tuning::Force::kTree
                                                        : Tuning::Force::kAuto;
  team_.tuning.allPairsMaxBytes = config.allPairsMaxBytes;
  team_.tuning.directMinBytes = config.directMinBytes;
  team_.tuning.treeMaxBytes = config.treeMaxBytes;
  spinIterations_ = chooseSpinIterations(config, nranks);
  yieldMicros_ = config.yieldMicros;
  rendezvous_ = std::make_unique<bootstrap::RendezvousClient>(address, rank, nranks, config.timeoutMs);
  connectPeers(*rendezvous_);
  orderRing(*rendezvous_);
  LOOM_INFO("INIT", rank,
            "Loom " << LOOM_VERSION_STRING << " communicator"
                    << (config.name.empty() ? "" : " '" + config.name + "'") << " ready: rank " << rank << " of "
                    << nranks << ", pid " << getpid() << ", timeout " << config.timeoutMs << " ms, spin "
                    << spinIterations_);
}

void Communicator::connectPeers(bootstrap::RendezvousClient& rendezvous) {
  std::vector<std::string> identities = rendezvous.allGather(myIdentity().encode());
  std::vector<pid_t> pids(team_.nranks);
  const PeerIdentity me = myIdentity();
  for (int peer = 0; peer < team_.nranks; ++peer) {
    PeerIdentity identity = PeerIdentity::decode(identities[peer], peer);
    if (identity.host != me.host)
      fail(loomUnsupported, "rank " + std::to_string(peer) + " runs on host " + hostPart(identity.host) + " and rank " +
                                std::to_string(team_.rank) + " on " + hostPart(me.host) +
                                ": this Loom connects ranks of one host only (shared memory); the TCP and RDMA "
                                "transports come later");
    pids[peer] = identity.pid;
  }
  if (team_.nranks == 1) return;
  shm::FifoGeometry geometry{config_.shmSlotBytes, config_.shmSlots};
  if (config_.crossMemoryAttach) shm::enableCrossMemoryAttach();
  auto shm = std::make_unique<shm::ShmTransport>(team_.rank, pids, geometry, config_.crossMemoryAttach, rendezvous);
  const std::string whyNoSingleCopy =
      config_.crossMemoryAttach ? shm->peerMemoryUnavailable() : std::string("LOOM_CMA is not 1");
  // A forced algorithm is never silently replaced: a benchmark or test that
  // asked for single-copy reads must not measure the FIFOs instead.
  if (config_.algorithm == "direct" && shm->peerMemory() == nullptr)
    fail(loomUnsupported, "LOOM_ALGO=direct needs single-copy reads of peers' memory, which are off: " +
                              whyNoSingleCopy + "; set LOOM_CMA=1, or unset LOOM_ALGO");
  if (team_.rank == 0) {
    if (shm->peerMemory() != nullptr)
      LOOM_INFO("INIT", team_.rank,
                "large AllReduce/AllGather/ReduceScatter read peers' buffers directly (cross-memory attach) from "
                    << config_.directMinBytes << " bytes");
    else
      LOOM_INFO("INIT", team_.rank, "single-copy reads off, every byte goes through the FIFOs: " << whyNoSingleCopy);
  }
  transport_ = std::move(shm);
  team_.transport = transport_.get();
  for (int peer = 0; peer < team_.nranks; ++peer) {
    if (peer == team_.rank) continue;
    LOOM_INFO("INIT", team_.rank,
              "rank " << team_.rank << " <-> rank " << peer << " (pid " << pids[peer] << ") via shared memory, "
                      << geometry.slots << " slots of " << geometry.slotBytes / 1024 << " KiB each way");
  }
}

// Ranks tell each other where they run; the ring then crosses sockets and
// NUMA nodes as few times as possible, whatever the rank numbering.
void Communicator::orderRing(bootstrap::RendezvousClient& rendezvous) {
  if (team_.nranks == 1) return;
  const topo::RankPlacement mine = topo::ownPlacement(processTopology(config_));
  std::vector<std::string> all = rendezvous.allGather(std::string(reinterpret_cast<const char*>(&mine), sizeof(mine)));
  std::vector<topo::RankPlacement> placements(team_.nranks);
  for (int r = 0; r < team_.nranks; ++r) {
    if (all[r].size() != sizeof(topo::RankPlacement))
      fail(loomRemoteError, "rank " + std::to_string(r) + " sent a placement of " + std::to_string(all[r].size()) +
                                " bytes, not " + std::to_string(sizeof(topo::RankPlacement)) +
                                ": is every rank running the same Loom?");
    std::memcpy(&placements[r], all[r].data(), sizeof(topo::RankPlacement));
    placements[r].host[sizeof(placements[r].host) - 1] = '\0';
  }
  team_.ring = topo::ringOrder(placements);
  for (int i = 0; i < team_.nranks; ++i)
    if (team_.ring[i] == team_.rank) team_.ringPosition = i;
  if (team_.rank == 0) {
    topo::RingCrossings crossings = topo::countCrossings(placements, team_.ring);
    LOOM_INFO("INIT", team_.rank,
              "ring " << describeRing(team_.ring) << " crosses " << crossings.packages << " socket boundaries and "
                      << crossings.numas << " NUMA boundaries inside a socket");
  }
  for (int peer = 0; peer < team_.nranks; ++peer) {
    if (peer == team_.rank) continue;
    LOOM_INFO("INIT", team_.rank,
              "rank " << peer << " runs on socket " << placements[peer].package << ", NUMA node "
                      << placements[peer].numa << ": " << relation(topo::locality(mine, placements[peer])) << " rank "
                      << team_.rank);
  }
}

Communicator::~Communicator() {
  engine_.drain();
}

Communicator::OpInfo Communicator::nextOperation(const char* name, const CollectiveCall* call) {
  OpInfo info{name, ++operations_, {}};
  if (call != nullptr) {
    info.call = *call;
    info.call.number = ++collectives_;
  }
  LOOM_TRACE("COLL", team_.rank, name << " #" << info.sequence);
  return info;
}

std::shared_ptr<Request> Communicator::submit(const char* name, const CollectiveCall* call, Body body) {
  auto request = std::make_shared<Request>(config_.timeoutMs);
  std::lock_guard<std::mutex> lock(submitMutex_);  // held while queuing, so order = sequence order
  OpInfo info = nextOperation(name, call);
  engine_.post([this, info, body = std::move(body), request] {
    Outcome outcome = execute(info, body);
    request->complete(outcome.code, std::move(outcome.failure));
  });
  return request;
}

loomResult_t Communicator::run(const char* name, const CollectiveCall* call, BodyRef body, std::string* error) {
  std::shared_ptr<Request> queued;
  {
    std::lock_guard<std::mutex> lock(submitMutex_);  // held while running inline: issue order holds
    OpInfo info = nextOperation(name, call);
    Outcome outcome;
    if (engine_.runInlineIfIdle([&] { outcome = execute(info, body); })) {
      if (outcome.code != loomSuccess) *error = std::move(outcome.failure);
      return outcome.code;
    }
    queued = std::make_shared<Request>(config_.timeoutMs);
    engine_.post([this, info, body = Body(body), queued] {
      Outcome late = execute(info, body);
      queued->complete(late.code, std::move(late.failure));
    });
  }
  loomResult_t result = queued->waitUntilDone();
  if (result != loomSuccess) *error = queued->error();
  return result;
}

Communicator::Outcome Communicator::execute(const OpInfo& info, BodyRef body) {
  WaitContext wait;
  wait.timeoutMs = config_.timeoutMs;
  wait.aborted = &aborted_;
  wait.spinIterations = spinIterations_;
  wait.yieldMicros = yieldMicros_;
  wait.rank = team_.rank;
  wait.operation = info.name;
  wait.sequence = info.sequence;
  if (info.isCollective()) wait.call = &info.call;
  wait.commName = &config_.name;

  Outcome outcome;
  if (broken_.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(errorMutex_);
    outcome.code = brokenBy_ == loomAborted ? loomAborted : loomInvalidUsage;
    outcome.failure = wait.describe() + " cannot run: this communicator failed earlier (" + brokenSentence_ +
                      "); destroy or abort it and create a new one";
  } else if (aborted_.load()) {
    outcome.code = loomAborted;
    outcome.failure = wait.describe() + " was aborted (loomCommAbort) before it started";
  } else {
    try {
      if (info.isCollective() && transport_) transport_->announceCollectiveStarted(info.call);
      body(team_, wait);
      return outcome;
    } catch (const Error& e) {
      outcome.code = e.code();
      outcome.failure = e.what();
      if (outcome.code == loomTimeout && info.isCollective()) outcome.failure += arrivalReport(info.call.number);
    } catch (const std::exception& e) {
      outcome.code = loomInternalError;
      outcome.failure = wait.describe() + " failed inside Loom: " + e.what();
    }
    {
      std::lock_guard<std::mutex> lock(errorMutex_);
      brokenBy_ = outcome.code;
      brokenSentence_ = outcome.failure;
      broken_.store(true, std::memory_order_release);
    }
    if (transport_) transport_->announceFailure(outcome.failure);
  }
  LOOM_WARN("COLL", team_.rank, outcome.failure);
  recordError(outcome.failure);
  return outcome;
}

std::string Communicator::arrivalReport(uint64_t collective) const {
  std::string late;
  for (int peer = 0; peer < team_.nranks; ++peer) {
    int64_t started = transport_->collectivesStartedBy(peer);
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
    address.endpoint = bootstrap::startRendezvous(address.secret, 0, config.timeoutMs);
    address.endpoint.ipv4 = bootstrap::advertisedAddress(socketInterfaceName());
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
void runRegistration(Communicator& comm, const char* name, const Body& body) {
  CollectiveCall call;
  std::strncpy(call.name, name, sizeof(call.name) - 1);
  std::optional<Error> refusal;
  std::string error;
  loomResult_t result = comm.run(
      name, &call, [&](const Team& team, const WaitContext& wait) { refusal = body(team, wait); }, &error);
  if (result != loomSuccess) fail(result, error);
  if (refusal) throw *refusal;
}

}  // namespace

void* Communicator::registerBuffer(void* buffer, size_t bytes) {
  shm::offerWindow("loomCommRegister", 0, buffer, bytes);  // fails here, before peers wait, on foreign memory
  uint64_t window = 0;
  runRegistration(*this, "Register", [&](const Team& team, const WaitContext& wait) {
    shm::WindowOffer mine = shm::offerWindow("loomCommRegister", team.windows->nextWindow(), buffer, bytes);
    window = mine.window;
    return registerWindow(team, mine, wait);
  });
  LOOM_INFO("COLL", team_.rank, "registered " << bytes << " bytes as window #" << window);
  return reinterpret_cast<void*>(static_cast<uintptr_t>(window));
}

void Communicator::deregisterBuffer(void* handle) {
  const uint64_t window = reinterpret_cast<uintptr_t>(handle);
  runRegistration(*this, "Deregister",
                  [&](const Team& team, const WaitContext& wait) { return deregisterWindow(team, window, wait); });
}

void Communicator::abort() {
  aborted_.store(true);
  if (transport_)
    transport_->announceFailure("rank " + std::to_string(team_.rank) + " aborted its communicator (loomCommAbort)");
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
