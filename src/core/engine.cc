#include "core/engine.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "base/error.h"
#include "transport/connection.h"

namespace loom {
namespace {

// Bounds one sleep, so aborts, dead peers and deadlines are noticed promptly.
constexpr int64_t kSleepSliceMs = 50;
// While operations keep moving the driver never sleeps; it still looks at
// the parked ones this often, so one stuck beside a busy one times out.
// Peers are asked about a wait only when the driver is about to sleep
// again after a sleep without progress: the fast path pays nothing for it.
constexpr int64_t kCheckEveryMs = 50;
// The background thread naps this long between looks for operations nobody
// drives, and sleeps until notified after this long without any (at most
// this long again: a bound, should a notice be missed).
constexpr auto kBackgroundNap = std::chrono::milliseconds(1);
constexpr auto kBackgroundIdle = std::chrono::milliseconds(100);
// A blocking call alone on the engine runs outside the lanes for at most
// this many steps (a small collective takes a few).
constexpr int kAloneMoves = 64;

int64_t nowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Deadline::Clock::now().time_since_epoch()).count();
}

}  // namespace

Engine::Engine(EngineHost& host, IdleSleep& idle, EngineSettings settings)
    : host_(host), idle_(idle), settings_(settings), lanes_(1 + 2 * static_cast<size_t>(settings.nranks)) {
  background_ = std::thread([this] { backgroundLoop(); });
}

Engine::~Engine() {
  stop();
}

void Engine::post(OperationPtr op) {
  pending_.fetch_add(1);
  {
    std::lock_guard<std::mutex> lock(postMutex_);
    posted_.push_back(std::move(op));
    countPosts(1);
    anyPosted_.store(true, std::memory_order_release);
  }
  wakeForPosted();
}

void Engine::post(std::vector<OperationPtr> ops) {
  if (ops.empty()) return;
  pending_.fetch_add(static_cast<int64_t>(ops.size()));
  {
    std::lock_guard<std::mutex> lock(postMutex_);
    for (auto& op : ops) posted_.push_back(std::move(op));
    countPosts(ops.size());
    anyPosted_.store(true, std::memory_order_release);
  }
  wakeForPosted();
}

void Engine::countPosts(size_t n) {
  // Under postMutex_, so a plain store: no read-modify-write on the post path.
  postsEver_.store(postsEver_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

void Engine::wakeForPosted() {
  ring();  // a driver asleep on other operations picks these up
  // A background thread that naps finds the work itself; one in a deep
  // sleep (nothing posted for a while) must be told. It sets its flag before
  // it looks at pending_ for the last time, this thread bumped pending_
  // before looking at the flag: one of the two sees the other.
  if (backgroundDeepAsleep_.load()) {
    std::lock_guard<std::mutex> lock(waitMutex_);
    changed_.notify_all();
  }
}

bool Engine::tryToDrive() {
  // A look first: a thread that waits on a busy driver does not keep
  // taking the cache line away from it.
  return !driving_.load(std::memory_order_relaxed) && !driving_.exchange(true, std::memory_order_acquire);
}

void Engine::stopDriving() {
  // Sequentially consistent, as notifyWaiters' load of idleWaiters_ after
  // it: a waiter counts itself, then looks at driving_; one of the two sees
  // the other, so no waiter sleeps through the driver's leaving.
  driving_.store(false);
}

template <typename Body>
bool Engine::driveIfFree(Body&& body) {
  if (!tryToDrive()) return false;
  body();
  stopDriving();
  notifyWaiters();
  return true;
}

void Engine::run(OperationPtr op) {
  const Request& request = op->request;  // the caller keeps op alive until run returns
  const bool drove = driveIfFree([&] {
    // With nothing else in flight the operation needs no lane (and no one
    // else can post while this blocking call holds the communicator), so it
    // runs here directly; only if it must wait longer than a spin does it
    // join its lane like any posted operation.
    int spun = 0;
    if (active_.empty() && !anyPosted_.load(std::memory_order_acquire)) {
      op->startsAtPosting = true;
      if (runAlone(*op, spun)) return;
    } else {
      absorbPosted();  // lane order is call order: operations posted before this one go first
    }
    pending_.fetch_add(1);
    joinLane(std::move(op));
    drive([&] { return request.done(); }, Deadline::never(), false, spun);
  });
  if (!drove) {
    post(std::move(op));
    waitFor(request, Deadline::never());
  }
  // The operation is the caller's (on its stack): the thread that finished
  // it retires it a moment after completing its request, and only then may
  // the caller return (TSan saw the background driver resetting a finished
  // operation's task while the caller destroyed it).
  while (!request.retired())
    if (!driveIfFree([&] { pollOnce(); })) std::this_thread::yield();
}

bool Engine::runAlone(Operation& op, int& spun) {
  Outcome outcome;
  for (int moves = 0;;) {
    const Progress progress = runUntilParked(op, outcome);
    if (progress == Progress::kEnded) break;
    if (progress == Progress::kMoved) {
      spun = 0;
      // A long operation goes to its lane, where the driver also publishes
      // heartbeats and looks at deadlines.
      if (++moves >= kAloneMoves) return false;
      continue;
    }
    if (spun >= settings_.spinIterations || anyPosted_.load(std::memory_order_relaxed)) return false;
    ++spun;
    cpuRelax();
  }
  // No lane holds it: retire it here, as retireFinished() would.
  endRequest(op, std::move(outcome));
  op.task.reset();
  op.request.markRetired();
  // The heartbeat, which peers read to tell a live rank from a stopped one,
  // keeps beating through a run of calls that never reach the lanes.
  checkNowAndThen(16);
  return true;
}

void Engine::joinLane(OperationPtr op) {
  enqueue(std::move(op));
  if (anyPosted_.load(std::memory_order_acquire)) absorbPosted();  // posted after it: behind it
}

bool Engine::runPostedAlone(const Request& request, int& spun) {
  if (!active_.empty() || !anyPosted_.load(std::memory_order_acquire)) return false;
  OperationPtr op;
  {
    std::lock_guard<std::mutex> lock(postMutex_);
    if (posted_.size() != 1 || &posted_.front()->request != &request) return false;
    op = std::move(posted_.front());
    posted_.clear();
    anyPosted_.store(false, std::memory_order_relaxed);
  }
  if (runAlone(*op, spun)) {
    pending_.fetch_sub(1);  // post() counted it
    return true;
  }
  joinLane(std::move(op));
  return false;
}

void Engine::poke() {
  driveIfFree([&] { pollOnce(); });
}

void Engine::waitFor(const Request& request, Deadline deadline) {
  auto done = [&] { return request.done(); };
  bool waitedForADriver = false;
  while (!request.done() && !deadline.expired()) {
    if (driveIfFree([&] {
          int spun = 0;
          if (!runPostedAlone(request, spun)) drive(done, deadline, false, spun);
        }))
      continue;
    // Another thread drives: it completes this request too. Wait for that,
    // or for it to leave (then drive here); the background driver leaves
    // as soon as it sees this thread wants to drive.
    wantToDrive_.fetch_add(1);
    ring();  // that driver, if asleep, wakes and gives way
    std::unique_lock<std::mutex> lock(waitMutex_);
    idleWaiters_.fetch_add(1);
    changed_.wait_for(lock, std::chrono::milliseconds(deadline.remainingMs(10)),
                      [&] { return request.done() || !driving_.load(); });
    idleWaiters_.fetch_sub(1);
    wantToDrive_.fetch_sub(1);
    waitedForADriver = true;
  }
  // Leaving without driving (the deadline passed) may leave work that the
  // background thread, asleep while this thread wanted to drive, must hear
  // of. (Having driven, driveIfFree told it already.)
  if (waitedForADriver) notifyWaiters();
}

void Engine::drain() {
  auto idle = [&] { return pending_.load() == 0; };
  while (!idle()) {
    if (driveIfFree([&] { drive(idle, Deadline::never(), false); })) continue;
    // As waitFor: the driver that is in the way gives way once told.
    wantToDrive_.fetch_add(1);
    ring();
    std::unique_lock<std::mutex> lock(waitMutex_);
    idleWaiters_.fetch_add(1);
    changed_.wait_for(lock, std::chrono::milliseconds(10), [&] { return idle() || !driving_.load(); });
    idleWaiters_.fetch_sub(1);
    wantToDrive_.fetch_sub(1);
  }
  notifyWaiters();
}

void Engine::stop() {
  if (!background_.joinable()) return;
  drain();
  {
    std::lock_guard<std::mutex> lock(waitMutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  ring();
  background_.join();
}

void Engine::notifyWaiters() {
  // The background thread in its deep sleep wants to hear only of work left
  // undriven (a blocking call that ran alone left none; a driver that
  // retires an operation still drives the rest): waking it after every call
  // would cost a futex wake and a context switch each.
  const bool backgroundMissesWork = backgroundDeepAsleep_.load() && pending_.load() > 0 && !driving_.load();
  if (idleWaiters_.load() == 0 && !backgroundMissesWork) return;
  std::lock_guard<std::mutex> lock(waitMutex_);
  changed_.notify_all();
}

void Engine::backgroundLoop() {
  auto lastBusy = Deadline::Clock::now();
  uint64_t postsSeen = postsEver_.load(std::memory_order_relaxed);
  std::unique_lock<std::mutex> lock(waitMutex_);
  auto undriven = [&] { return pending_.load() > 0 && !driving_.load() && wantToDrive_.load() == 0; };
  while (!stopping_) {
    const uint64_t posts = postsEver_.load(std::memory_order_relaxed);
    const bool work = undriven();
    if (posts != postsSeen || work) lastBusy = Deadline::Clock::now();
    postsSeen = posts;
    if (!work) {
      // Napping, a poster need not wake this thread. Only posts keep it
      // napping, though: a loop of blocking calls (their operations join a
      // lane, but their callers drive them) would otherwise keep it waking
      // every millisecond on every rank, a context switch that the ranks'
      // own threads pay for where ranks outnumber cores. A post, and a
      // driver that leaves work behind, wake a deep sleeper (wakeForPosted,
      // notifyWaiters); the slice only bounds a notice missed.
      if (Deadline::Clock::now() - lastBusy > kBackgroundIdle) {
        backgroundDeepAsleep_.store(true);
        changed_.wait_for(lock, kBackgroundIdle, [&] {
          return stopping_ || undriven() || postsEver_.load(std::memory_order_relaxed) != postsSeen;
        });
        backgroundDeepAsleep_.store(false);
      } else {
        changed_.wait_for(lock, kBackgroundNap);
      }
      continue;
    }
    lock.unlock();
    driveIfFree(
        [&] { drive([&] { return pending_.load() == 0 || wantToDrive_.load() > 0; }, Deadline::never(), true); });
    lock.lock();
  }
}

void Engine::drive(FunctionRef<bool()> done, Deadline deadline, bool background, int spunAlready) {
  int idlePolls = spunAlready;
  bool sleptSinceProgress = false;
  Deadline::Clock::time_point yieldUntil{};
  for (;;) {
    if (done()) return;
    if (pollOnce()) {
      idlePolls = 0;
      sleptSinceProgress = false;
      continue;
    }
    if (done() || deadline.expired()) return;
    if (!sleptSinceProgress) {
      if (idlePolls < settings_.spinIterations) {
        ++idlePolls;
        cpuRelax();
        continue;
      }
      // Yielding hands the core to the rank this one waits for when ranks
      // outnumber cores; sleeping costs the peer a futex wake.
      if (settings_.yieldMicros > 0) {
        if (idlePolls == settings_.spinIterations) {
          ++idlePolls;
          yieldUntil = Deadline::Clock::now() + std::chrono::microseconds(settings_.yieldMicros);
        }
        if (Deadline::Clock::now() < yieldUntil) {
          sched_yield();
          continue;
        }
      }
    }
    watchParked(true);
    const uint32_t armed = idle_.arm();
    if (pollOnce()) {
      idle_.disarm();
      watchParked(false);
      idlePolls = 0;
      sleptSinceProgress = false;
      continue;
    }
    // Peers are asked only once a sleep has passed without progress: a peer
    // that is merely slower (descheduled, or still busy with the data this
    // rank waits for) gets that long to move before it is blamed.
    const int64_t nextCheckMs = checkWaits(sleptSinceProgress);
    if (!finished_.empty() || done() || (background && wantToDrive_.load() > 0)) {
      idle_.disarm();
      watchParked(false);
      retireFinished();
      continue;
    }
    idle_.sleep(armed, std::min(nextCheckMs, deadline.remainingMs(kSleepSliceMs)), watched_);
    watchParked(false);
    sleptSinceProgress = true;
  }
}

void Engine::watchParked(bool on) {
  if (on) {
    for (Operation* op : active_)
      if (op->suspension.on != nullptr) watched_.push_back(op->suspension.on);
  }
  for (Waitable* w : watched_) w->watch(on);
  if (!on) watched_.clear();
}

void Engine::absorbPosted() {
  {
    std::lock_guard<std::mutex> lock(postMutex_);
    absorbing_.swap(posted_);  // both keep their capacity: no allocation per post
    anyPosted_.store(false, std::memory_order_relaxed);
  }
  for (auto& op : absorbing_) enqueue(std::move(op));
  absorbing_.clear();
}

std::deque<OperationPtr>& Engine::laneOf(const Lane& lane) {
  if (lane.tagged()) return taggedLanes_[{lane.peer, lane.tag}];
  return lanes_[lane.index(settings_.nranks)];
}

void Engine::enqueue(OperationPtr op) {
  auto& lane = laneOf(op->lane);
  lane.push_back(std::move(op));
  if (lane.size() == 1) active_.push_back(lane.front().get());
}

bool Engine::pollOnce() {
  bool moved = false;
  if (anyPosted_.load(std::memory_order_acquire)) {
    absorbPosted();
    moved = true;
  }
  for (Operation* op : active_) moved |= advance(*op);
  if (!finished_.empty()) retireFinished();
  if (moved && !active_.empty()) checkNowAndThen();
  return moved;
}

// A busy driver never sleeps; look at parked operations (and beat the
// heartbeat) now and then: the clock is read every so many rounds, since
// it costs as much as a round. A call run alone is one round of many
// polls: slow ones (a sanitizer, a starved core) may take a millisecond
// each, so the clock is read every 16 of them, or a rank could run its
// first hundreds of calls without one beat and then stop unnamed.
void Engine::checkNowAndThen(int roundsPerClockRead) {
  if (++movingRounds_ % roundsPerClockRead != 0 || nowMs() - lastCheckMs_ < kCheckEveryMs) return;
  checkWaits(false);
  retireFinished();
}

bool Engine::advance(Operation& op) {
  if (op.task.valid() && op.task.done()) return false;  // finished, retiring
  Outcome outcome;
  const Progress progress = runUntilParked(op, outcome);
  if (progress == Progress::kEnded) finish(op, std::move(outcome));
  return progress != Progress::kWaiting;
}

Engine::Progress Engine::runUntilParked(Operation& op, Outcome& outcome) {
  try {
    if (!op.started) {
      op.started = true;
      // Assigned only on failure: a string move on every call's path costs.
      Outcome begun = host_.beginOperation(op);
      if (begun.code != loomSuccess) {
        outcome = std::move(begun);
        return Progress::kEnded;
      }
      op.wait.suspension = &op.suspension;
      op.task = op.body ? op.body(host_.team(), op.wait) : op.step(host_.team(), op.args, op.wait);
      op.task.start();
    } else {
      if (op.suspension.on == nullptr || !op.suspension.on->ready()) return Progress::kWaiting;
      op.blockedSinceMs = -1;
      std::coroutine_handle<> parked = op.suspension.handle;
      op.suspension = {};
      parked.resume();
    }
  } catch (...) {
    op.task.reset();
    outcome = host_.endOperation(op, std::current_exception());
    return Progress::kEnded;
  }
  if (op.task.done()) {
    if (std::exception_ptr error = op.task.error()) outcome = host_.endOperation(op, std::move(error));
    return Progress::kEnded;
  }
  if (op.suspension.on == nullptr) {
    op.task.reset();
    outcome = host_.endOperation(
        op, std::make_exception_ptr(
                Error(loomInternalError, op.wait.describe() + " stopped without waiting on a connection")));
    return Progress::kEnded;
  }
  return Progress::kMoved;
}

void Engine::endRequest(Operation& op, Outcome&& outcome) {
  host_.operationEnded(op, outcome.code);
  op.request.complete(outcome.code, std::move(outcome.failure));
  op.suspension = {};
}

void Engine::finish(Operation& op, Outcome&& outcome) {
  const bool failed = outcome.code != loomSuccess;
  endRequest(op, std::move(outcome));
  finished_.push_back(&op);
  if (failed) {
    std::string because = host_.brokenBecause();
    if (!because.empty()) failStartedOperations(because);
  }
}

// A failed operation left its connections out of step; the others that
// started cannot finish on them.
void Engine::failStartedOperations(const std::string& because) {
  for (Operation* op : active_) {
    if (!op->started || std::find(finished_.begin(), finished_.end(), op) != finished_.end()) continue;
    op->task.reset();
    Outcome outcome;
    outcome.code = loomInvalidUsage;
    outcome.failure = op->wait.describe() + " cannot finish: this communicator failed (" + because +
                      "); destroy or abort it and create a new one";
    endRequest(*op, std::move(outcome));
    finished_.push_back(op);
  }
}

int64_t Engine::checkWaits(bool askPeers) {
  // A wait that outlasted a sleep may end in a stall report, which follows
  // every peer's heartbeat: a transport's thread reads those only on
  // descriptors this engine has not taken (it takes again only those it
  // then sleeps on).
  if (askPeers) idle_.returnDescriptors();
  const int64_t now = nowMs();
  lastCheckMs_ = now;
  int64_t next = kSleepSliceMs;
  int waitingFor = -1;
  int64_t longestSince = INT64_MAX;
  for (Operation* op : active_) {
    Waitable* on = op->suspension.on;
    if (on == nullptr || std::find(finished_.begin(), finished_.end(), op) != finished_.end()) continue;
    try {
      const WaitContext& wait = op->wait;
      // -1: a Recv from any source.
      const std::string peer = on->peer() >= 0 ? "rank " + std::to_string(on->peer()) : std::string("any rank");
      if (settings_.aborted != nullptr && settings_.aborted->load())
        fail(loomAborted,
             wait.describe() + " was aborted (loomCommAbort) while waiting for " + peer + " " + on->peerMustDo());
      if (askPeers) on->checkPeer(wait);
      if (op->blockedSinceMs < 0) op->blockedSinceMs = now;
      if (op->blockedSinceMs < longestSince) {
        longestSince = op->blockedSinceMs;
        waitingFor = on->peer();
      }
      const int64_t waited = now - op->blockedSinceMs;
      if (waited >= wait.timeoutMs)
        fail(loomTimeout, wait.describe() + " timed out after " + std::to_string(wait.timeoutMs) + " ms waiting for " +
                              peer + " " + on->peerMustDo() +
                              (on->peer() >= 0 ? " (is that rank stalled, or did it call a different collective?)"
                                               : " (no rank sent a message this Recv matches)") +
                              host_.stallReport(on->peer(), now));
      next = std::min(next, wait.timeoutMs - waited + 1);
    } catch (...) {
      op->task.reset();
      finish(*op, host_.endOperation(*op, std::current_exception()));
    }
  }
  host_.publishProgress(now, waitingFor);
  return next;
}

void Engine::retireFinished() {
  for (Operation* op : finished_) {
    const Lane which = op->lane;
    auto& lane = laneOf(which);
    auto at = std::find(active_.begin(), active_.end(), op);
    op->task.reset();  // its coroutine frames; a caller's handle may keep the rest
    // The last touch of op: a blocking caller may now leave and its stack
    // operation go (the lane's pointer to it does not own it), and a heap
    // operation may go with the lane's reference just below.
    op->request.markRetired();
    lane.pop_front();
    if (lane.empty()) {
      active_.erase(at);
      if (which.tagged()) taggedLanes_.erase({which.peer, which.tag});
    } else {
      *at = lane.front().get();
    }
    pending_.fetch_sub(1);
  }
  finished_.clear();
  notifyWaiters();
}

}  // namespace loom
