// Drives a communicator's operations. Every posted operation is a task
// (operation.h) that runs until one of its connections cannot move, parks,
// and is resumed once that connection can. One progress loop polls the
// parked operations; when nothing can move it spins briefly, yields, then
// sleeps where the transports say (transport/idle_sleep.h): the rank's
// doorbell, which peers ring when they post to this rank or free its slots,
// or the descriptors its waits lend.
//
// Any thread may drive, one at a time: a thread that waits on a request
// drives the engine itself until its request is done (so a posted-then-
// waited operation costs what a blocking call costs, with no hand-over
// between threads), and a background thread drives while nobody waits, so
// operations progress while the caller computes. docs/ENGINE.md has the why.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/deadline.h"
#include "base/function_ref.h"
#include "core/operation.h"
#include "transport/idle_sleep.h"

namespace loom {

struct Outcome {
  loomResult_t code = loomSuccess;
  std::string failure;  // the sentence; empty on success
};

// What the engine needs from its communicator.
class EngineHost {
 public:
  virtual ~EngineHost() = default;
  // Fills in op.wait and announces a collective. A failed outcome (the
  // communicator failed earlier, or was aborted) ends op before it starts.
  virtual Outcome beginOperation(Operation& op) = 0;
  // How op failed (`error`), as an outcome; records the failure, after
  // which the communicator is broken. Called only for a failure: what every
  // end needs belongs in operationEnded.
  virtual Outcome endOperation(Operation& op, std::exception_ptr error) = 0;
  // Every operation's end, however it came (the flight recorder's).
  virtual void operationEnded(Operation& op, loomResult_t result) = 0;
  // The heartbeat, at least every 50 ms while operations are pending
  // (steady clock ms; waitingFor: the peer the longest wait is on, or -1).
  virtual void publishProgress(int64_t nowMs, int waitingFor) = 0;
  // For a timeout's sentence: who the wait on `peer` really waits for,
  // following what each rank says it waits on, up to one that shows no sign
  // of life; empty if nothing can be told.
  virtual std::string stallReport(int peer, int64_t nowMs) const = 0;
  // Why the communicator cannot go on, once a failure broke it; else empty.
  virtual std::string brokenBecause() const = 0;
  virtual const Team& team() const = 0;
};

struct EngineSettings {
  int nranks = 1;
  int spinIterations = 1000;  // polls before yielding
  int64_t yieldMicros = 0;    // time spent yielding before sleeping
  int64_t timeoutMs = 0;      // longest an operation may wait without progress
  const std::atomic<bool>* aborted = nullptr;
};

class Engine {
 public:
  // `idle`: where a driver sleeps when nothing can move, and what wakes it
  // (transport/idle_sleep.h); it outlives the engine.
  Engine(EngineHost& host, IdleSleep& idle, EngineSettings settings);
  ~Engine();  // stop()
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // From any thread. Operations posted together (a group) become visible
  // to the progress loop at once.
  void post(std::vector<OperationPtr> ops);
  void post(OperationPtr op);
  // Posts op and drives until it is done, on this thread: the blocking
  // call's path. Without another driver in the way it skips the hand-over
  // through the posted list. The caller keeps op alive until this returns.
  void run(OperationPtr op);
  // Drives the engine on this thread until the request is done or the
  // deadline passes (then the operation keeps running).
  void waitFor(const Request& request, Deadline deadline);
  // One round of progress if no other thread drives (loomTest: MPI_Test
  // progresses too, so polling alone completes an operation).
  void poke();
  // Drives until every posted operation has ended.
  void drain();
  // Drains, then stops the background thread. Nothing may be posted after.
  void stop();
  // Wakes a sleeping driver (after an abort).
  void wake() { ring(); }

 private:
  // One driver at a time: driving_ is its lock (a try-lock; threads that
  // find it taken wait on changed_, or go on with something else).
  bool tryToDrive();
  void stopDriving();
  // Runs body as the driver if no other thread drives; false if one does.
  template <typename Body>
  bool driveIfFree(Body&& body);
  // spunAlready: idle polls the caller made before (they count against the spin).
  void drive(FunctionRef<bool()> done, Deadline deadline, bool background, int spunAlready = 0);
  // After a post: wakes a driver asleep on other operations, and a
  // background thread in its deep sleep.
  void wakeForPosted();
  void countPosts(size_t n);
  bool pollOnce();
  void absorbPosted();
  // Marks (or unmarks) the connections parked operations wait on, so that
  // the peers behind them ring the doorbell while this driver sleeps.
  void watchParked(bool on);
  // Wakes a driver asleep on other operations.
  void ring() { idle_.ring(); }
  void enqueue(OperationPtr op);
  // Runs op on this thread with no lane, the blocking call's fast path:
  // true once it ended (completed and retired); false if it must wait longer
  // than the spin allows, or took many steps, or something was posted
  // meanwhile: then it goes to its lane as it is (started or not). `spun`:
  // the idle polls it made since it last moved.
  bool runAlone(Operation& op, int& spun);
  // The same for a posted operation its poster now waits for, when it is
  // the only one in flight (post, then wait at once): true once it ended;
  // false if it is not alone, or joined its lane (then drive on).
  bool runPostedAlone(const Request& request, int& spun);
  // Puts op (started or not) at the back of its lane, then whatever was
  // posted meanwhile behind it.
  void joinLane(OperationPtr op);
  bool advance(Operation& op);
  // Starts op, or resumes it if the connection it parked on can move, and
  // runs it until it parks again or ends (then outcome says how).
  enum class Progress { kWaiting, kMoved, kEnded };
  Progress runUntilParked(Operation& op, Outcome& outcome);
  // Reports op's end (flight recorder, request); the caller retires it.
  void endRequest(Operation& op, Outcome&& outcome);
  void finish(Operation& op, Outcome&& outcome);
  // Every 256 calls, if kCheckEveryMs passed: checkWaits (deadlines, heartbeat).
  void checkNowAndThen(int roundsPerClockRead = 256);
  // Fails parked operations that waited too long, were aborted, or (with
  // askPeers) wait for a peer that failed, exited or called something else.
  // Returns the milliseconds until the next deadline of a parked one.
  int64_t checkWaits(bool askPeers);
  void retireFinished();
  void failStartedOperations(const std::string& because);
  void backgroundLoop();
  void notifyWaiters();

  EngineHost& host_;
  IdleSleep& idle_;
  EngineSettings settings_;

  // Posted operations not yet seen by the driver.
  std::mutex postMutex_;
  std::vector<OperationPtr> posted_;
  std::vector<OperationPtr> absorbing_;  // the driver's, swapped with posted_
  std::atomic<bool> anyPosted_{false};
  std::atomic<int64_t> pending_{0};     // posted and not yet ended
  std::atomic<uint64_t> postsEver_{0};  // operations posted since the start (the background thread's hint)

  // Touched only by the driver (the thread that set driving_).
  std::deque<OperationPtr>& laneOf(const Lane& lane);
  std::vector<std::deque<OperationPtr>> lanes_;  // tag 0's, by Lane::index
  // Recv lanes of other tags, by (peer, tag); a lane that empties goes.
  std::map<std::pair<int, int>, std::deque<OperationPtr>> taggedLanes_;
  std::vector<Operation*> active_;    // the head of every non-empty lane
  std::vector<Operation*> finished_;  // ended this round, still at their lane's head
  std::vector<Waitable*> watched_;    // watched while the driver sleeps
  int64_t lastCheckMs_ = 0;
  uint64_t movingRounds_ = 0;

  // Threads that wait without driving, and the background thread.
  std::mutex waitMutex_;
  std::condition_variable changed_;  // an operation ended, or the driver left
  std::atomic<int> idleWaiters_{0};
  std::atomic<int> wantToDrive_{0};
  std::atomic<bool> driving_{false};  // a thread drives (tryToDrive)
  bool stopping_ = false;
  std::atomic<bool> backgroundDeepAsleep_{false};  // posts must notify it
  std::thread background_;
};

}  // namespace loom
