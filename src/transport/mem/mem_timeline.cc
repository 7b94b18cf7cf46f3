#include "transport/mem/mem_timeline.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <utility>

#include "base/error.h"

namespace loom::mem {

double LinkCalendar::reserve(double fromUs, double lengthUs) {
  double start = fromUs;
  auto next = busy_.upper_bound(start);
  if (next != busy_.begin() && std::prev(next)->second > start) start = std::prev(next)->second;
  while (next != busy_.end() && next->first < start + lengthUs) {
    start = std::max(start, next->second);
    ++next;
  }
  const double sent = start + lengthUs;
  if (lengthUs <= 0) return sent;
  double end = sent;
  // Merge with the stretches it touches, so that a link busy without a gap
  // stays one entry.
  auto at = busy_.lower_bound(start);
  if (at != busy_.begin() && std::prev(at)->second >= start) {
    at = std::prev(at);
    start = at->first;
    end = std::max(end, at->second);
    at = busy_.erase(at);
  }
  while (at != busy_.end() && at->first <= end) {
    end = std::max(end, at->second);
    at = busy_.erase(at);
  }
  busy_.emplace(start, end);
  return sent;
}

Timeline::Timeline(TimelineModel model)
    : model_(std::move(model)), clocks_(model_.hostOf.size(), 0.0), steps_(model_.hostOf.size(), 0) {
  if (model_.local.bytesPerUs <= 0 || model_.network.bytesPerUs <= 0 || model_.local.latencyUs < 0 ||
      model_.network.latencyUs < 0 || model_.local.messageUs < 0 || model_.network.messageUs < 0)
    fail(loomInvalidArgument, "a timeline needs positive bandwidths and latencies of at least zero");
  int hosts = 0;
  for (int host : model_.hostOf) {
    if (host < 0) fail(loomInvalidArgument, "a timeline's host numbers start at 0, not " + std::to_string(host));
    hosts = std::max(hosts, host + 1);
  }
  links_.assign(static_cast<size_t>(hosts), LinkCalendar());
}

Timeline::Stamp Timeline::post(int from, int to, size_t bytes, double freedUs) {
  double& clock = clocks_[from];
  clock = std::max(clock, freedUs) + copyUs(bytes);
  const uint32_t step = steps_[from] + 1;
  const int host = model_.hostOf[from];
  if (host == model_.hostOf[to]) {
    ++local_.messages;
    local_.bytes += bytes;
    return {clock + model_.local.latencyUs, step};
  }
  ++network_.messages;
  network_.bytes += bytes;
  const double sent = links_[host].reserve(clock, static_cast<double>(bytes) / model_.network.bytesPerUs);
  return {sent + model_.network.latencyUs, step};
}

double Timeline::released(int rank, int from, size_t bytes) {
  const LinkTimes& link = model_.hostOf[rank] == model_.hostOf[from] ? model_.local : model_.network;
  clocks_[rank] += copyUs(bytes) + link.messageUs;
  return clocks_[rank];
}

double Timeline::latestUs() const {
  return clocks_.empty() ? 0.0 : *std::max_element(clocks_.begin(), clocks_.end());
}

uint32_t Timeline::deepestStep() const {
  return steps_.empty() ? 0 : *std::max_element(steps_.begin(), steps_.end());
}

}  // namespace loom::mem
