// Virtual time for the in-memory fabric, when one thread drives all of its
// ranks (the schedule simulator, simulate/): each rank keeps a clock, and
// every message is stamped with when it would arrive over the link between
// its ranks, so the latest clock after a call is the call's predicted time
// on a machine the process does not have. A latency/bandwidth (alpha/beta)
// model per link class:
//
// - every message costs its sender a copy into the slot and its receiver a
//   copy (or a reduction) out of it, each half of one rank's stream through
//   shared memory, so a rank that relays messages moves at that stream,
//   and its receiver the link's cost of taking one more message in (its
//   system calls, its polls), so a rank that many send to pays for each;
// - between ranks of one host it arrives one latency after the copy in;
// - between hosts it then takes the first free stretch of its sending
//   host's network link (which all that host's ranks share) from when it
//   was copied in, and arrives one latency after it has been through: the
//   link is a calendar, so a message the driver posts late but that is due
//   early still goes before those due after it;
// - a sender that finds its slots full waits until the receiver frees one.
//
// Nothing is modelled of contention on a receiving host's link or inside a
// host.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace loom::mem {

struct LinkTimes {
  double latencyUs = 0;   // from a post to its receiver seeing it
  double bytesPerUs = 0;  // one rank's stream (shared memory), or one host's link (network)
  double messageUs = 0;   // what taking one message in costs its receiver
};

struct TimelineModel {
  std::vector<int> hostOf;  // by rank
  LinkTimes local;          // between ranks of one host
  LinkTimes network;        // between hosts
};

// Messages and bytes that crossed one class of link.
struct LinkTraffic {
  uint64_t messages = 0;
  uint64_t bytes = 0;
};

// When a link is busy: disjoint stretches of time, touching ones merged.
class LinkCalendar {
 public:
  // Takes the first free stretch of `lengthUs` from `fromUs` on; returns its end.
  double reserve(double fromUs, double lengthUs);

 private:
  std::map<double, double> busy_;  // start -> end
};

class Timeline {
 public:
  explicit Timeline(TimelineModel model);

  // What a message carries: when it arrives, and how many messages lead to
  // it one after another from the call's start (its step).
  struct Stamp {
    double arrivesAtUs = 0;
    uint32_t step = 0;
  };
  // Rank `from` posts `bytes` to `to` in a slot its receiver freed at
  // `freedUs`: the sender's clock moves past its copy, and the message's
  // stamp is returned.
  Stamp post(int from, int to, size_t bytes, double freedUs);
  // Rank `rank` took a message stamped `stamp`.
  void arrived(int rank, const Stamp& stamp) {
    if (clocks_[rank] < stamp.arrivesAtUs) clocks_[rank] = stamp.arrivesAtUs;
    if (steps_[rank] < stamp.step) steps_[rank] = stamp.step;
  }
  // Rank `rank` is done with a message of `bytes` from `from`: returns when
  // its slot is free.
  double released(int rank, int from, size_t bytes);

  double clockUs(int rank) const { return clocks_[rank]; }
  double latestUs() const;
  // The longest chain of messages each waiting for the one before (a ring
  // AllReduce's 2 (P - 1), halving/doubling's 2 log2 P on a power of two).
  uint32_t deepestStep() const;
  const LinkTraffic& local() const { return local_; }
  const LinkTraffic& network() const { return network_; }

 private:
  double copyUs(size_t bytes) const { return static_cast<double>(bytes) / (2 * model_.local.bytesPerUs); }

  TimelineModel model_;
  std::vector<double> clocks_;       // by rank
  std::vector<uint32_t> steps_;      // by rank: the deepest step it has taken in
  std::vector<LinkCalendar> links_;  // by host: its network link
  LinkTraffic local_;
  LinkTraffic network_;
};

}  // namespace loom::mem
