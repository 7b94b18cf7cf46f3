#include "core/signal_dump.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "core/communicator.h"

namespace loom {
namespace {

std::mutex listMutex;
std::vector<const Communicator*>& listed() {
  static auto* communicators = new std::vector<const Communicator*>();  // outlives static destruction
  return *communicators;
}
int installedSignal = 0;
int wakeFds[2] = {-1, -1};

void onSignal(int) {
  const int saved = errno;
  const char byte = 1;
  [[maybe_unused]] ssize_t ignored = write(wakeFds[1], &byte, 1);
  errno = saved;
}

void dumpOnEveryByte(int signal) {
  const std::string why = std::string("on SIG") + sigabbrev_np(signal);
  char bytes[64];
  for (;;) {
    const ssize_t got = read(wakeFds[0], bytes, sizeof(bytes));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return;
    std::lock_guard<std::mutex> lock(listMutex);
    for (const Communicator* communicator : listed()) communicator->dumpFlightRecorder(why, true);
  }
}

void install(int signal) {
  if (pipe2(wakeFds, O_CLOEXEC) != 0) failSystem("LOOM_DUMP_ON_SIGNAL: cannot create the pipe for dumps", errno);
  fcntl(wakeFds[1], F_SETFL, O_NONBLOCK);  // a burst of signals must never block the handler
  struct sigaction action {};
  action.sa_handler = onSignal;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  if (sigaction(signal, &action, nullptr) != 0)
    failSystem(std::string("LOOM_DUMP_ON_SIGNAL: cannot handle SIG") + sigabbrev_np(signal), errno);
  std::thread(dumpOnEveryByte, signal).detach();
  installedSignal = signal;
}

}  // namespace

void listForSignalDumps(int signal, const Communicator* communicator) {
  std::lock_guard<std::mutex> lock(listMutex);
  if (installedSignal == 0) install(signal);
  if (installedSignal != signal)
    fail(loomInvalidUsage, std::string("LOOM_DUMP_ON_SIGNAL asks for SIG") + sigabbrev_np(signal) +
                               " but this process dumps on SIG" + sigabbrev_np(installedSignal) +
                               " already: one signal per process");
  listed().push_back(communicator);
}

void unlistForSignalDumps(const Communicator* communicator) {
  std::lock_guard<std::mutex> lock(listMutex);
  auto& all = listed();
  all.erase(std::remove(all.begin(), all.end(), communicator), all.end());
}

}  // namespace loom
