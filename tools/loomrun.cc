// loomrun: the local launcher for Loom programs.
//
//   loomrun -n N [--tag-output] [--timeout SECONDS] [--bind-to core|none] [--] CMD ARGS...
//
// Starts N ranks of CMD on this machine with the environment variables that
// torchrun sets (so the same program runs under either launcher) plus a fresh
// LOOM_SECRET that the bootstrap uses to authenticate its peers, and then
// supervises them as one job: when one rank fails, the others are stopped,
// because a collective job with a dead rank can only hang.
//
// Only libc and the standard library are used, so the tool builds anywhere
// the library does.

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <loom/version.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

extern char** environ;

namespace loom::tools {
namespace {

constexpr int kMaxRanks = 1024;
constexpr int kExitLaunchError = 1;
constexpr int kExitUsage = 2;
constexpr int kExitTimeout = 124;
constexpr int kExitCannotRun = 127;
constexpr int kStopGraceSeconds = 3;
// A rank printing megabytes without a newline would otherwise grow its line
// buffer without bound; past this size the partial line is emitted as is.
constexpr std::size_t kMaxBufferedLine = std::size_t{1} << 20;

using Clock = std::chrono::steady_clock;

constexpr const char kUsage[] =
    "Usage: loomrun -n N [--tag-output] [--timeout SECONDS] [--bind-to core|none] [--] CMD [ARGS...]\n"
    "\n"
    "Start N local ranks of CMD and supervise them as one job. Each rank gets\n"
    "torchrun's variables (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,\n"
    "GROUP_RANK=0, MASTER_ADDR=127.0.0.1, MASTER_PORT=<a free port>) and a\n"
    "LOOM_SECRET shared by the ranks of this job only. If a rank fails, the\n"
    "others are sent SIGTERM, and SIGKILL 3 seconds later.\n"
    "\n"
    "Options (before CMD):\n"
    "  -n, -np, --np N     number of ranks to start, 1 to 1024\n"
    "  --tag-output        prefix every line the ranks print with \"[RANK] \"\n"
    "  --timeout SECONDS   stop all ranks and exit 124 after SECONDS\n"
    "  --bind-to core|none core (default): pin rank i to the i-th CPU loomrun may\n"
    "                      use, round robin, as mpirun --bind-to core; none: leave\n"
    "                      ranks unbound. Loom orders its ring by where ranks are\n"
    "                      bound.\n"
    "  -h, --help          print this help and exit\n"
    "  -V, --version       print loomrun's version (Loom's) and exit\n"
    "  --                  end of options; the next word is CMD\n"
    "\n"
    "Exit status: 0 if every rank exited 0; otherwise the status of the first\n"
    "rank that failed (128+S if it was killed by signal S), 124 on timeout,\n"
    "128+S if loomrun received signal S, 2 for bad usage.\n";

// ---------------------------------------------------------------------------
// Small helpers for output and errors.

// Writes everything or gives up silently: if our own stdout/stderr is gone
// there is nowhere left to report the problem.
void writeAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t written = ::write(fd, data.data(), data.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return;
    }
    data.remove_prefix(static_cast<std::size_t>(written));
  }
}

// One write per message so that lines from loomrun and the ranks never mix.
void report(std::string_view message) {
  std::string line = "loomrun: ";
  line += message;
  line += '\n';
  writeAll(STDERR_FILENO, line);
}

struct UsageError {
  std::string sentence;
};

// A failed system call while setting the job up; the message names the call.
struct LaunchError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void throwErrno(const std::string& what) {
  throw LaunchError(what + ": " + std::strerror(errno));
}

std::string joinRanks(const std::vector<int>& ranks) {
  std::string joined;
  for (const int rank : ranks) {
    if (!joined.empty()) joined += ',';
    joined += std::to_string(rank);
  }
  return joined;
}

// "SIGSEGV (Segmentation fault)": the abbreviation is what people grep for,
// the description is what they understand.
std::string describeSignal(int signalNumber) {
  std::string name;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
  if (const char* abbreviation = sigabbrev_np(signalNumber)) {
    name = std::string("SIG") + abbreviation;
  }
#endif
  if (name.empty()) name = "signal " + std::to_string(signalNumber);
  if (const char* description = strsignal(signalNumber)) {
    name += std::string(" (") + description + ")";
  }
  return name;
}

// The same number a shell would report for the process.
int shellStatus(int waitStatus) {
  if (WIFEXITED(waitStatus)) return WEXITSTATUS(waitStatus);
  if (WIFSIGNALED(waitStatus)) return 128 + WTERMSIG(waitStatus);
  return 1;
}

bool exitedCleanly(int waitStatus) {
  return WIFEXITED(waitStatus) && WEXITSTATUS(waitStatus) == 0;
}

// ---------------------------------------------------------------------------
// Command line.

struct Options {
  int ranks = 0;
  bool tagOutput = false;
  bool bindToCore = true;
  std::optional<double> timeoutSeconds;
  std::string timeoutText;  // as the user wrote it, for the timeout message
  std::vector<std::string> command;
  bool showHelp = false;
  bool showVersion = false;
};

bool isAllDigits(std::string_view text) {
  if (text.empty()) return false;
  for (const char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

int parseRankCount(const std::string& text) {
  // Long digit strings are out of range anyway; checking the length first
  // keeps strtol from overflowing.
  if (isAllDigits(text) && text.size() <= 5) {
    const long value = std::strtol(text.c_str(), nullptr, 10);
    if (value >= 1 && value <= kMaxRanks) return static_cast<int>(value);
  }
  throw UsageError{"the number of ranks must be a whole number from 1 to " + std::to_string(kMaxRanks) + ", not '" +
                   text + "'"};
}

double parseTimeout(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  // The upper bound keeps the deadline arithmetic far from overflow.
  if (text.empty() || *end != '\0' || errno != 0 || !std::isfinite(value) || value <= 0 || value > 1e8) {
    throw UsageError{"--timeout needs a positive number of seconds, not '" + text + "'"};
  }
  return value;
}

// Splits "--np=4" into ("--np", "4"); other words come back unchanged.
std::pair<std::string, std::optional<std::string>> splitInlineValue(const std::string& arg) {
  const auto equals = arg.find('=');
  if (arg.rfind("--", 0) != 0 || equals == std::string::npos) return {arg, std::nullopt};
  return {arg.substr(0, equals), arg.substr(equals + 1)};
}

Options parseCommandLine(int argc, char** argv) {
  Options options;
  bool haveRankCount = false;
  int index = 1;
  // Takes the option's value from "--name=value" or from the next word.
  auto takeValue = [&](const std::string& name, const std::optional<std::string>& inlineValue,
                       const std::string& what) {
    if (inlineValue) return *inlineValue;
    if (index + 1 >= argc) throw UsageError{"option " + name + " needs " + what};
    return std::string(argv[++index]);
  };

  for (; index < argc; ++index) {
    const std::string arg = argv[index];
    if (arg == "--") {
      ++index;
      break;
    }
    if (arg.empty() || arg[0] != '-') break;  // the first word of CMD
    const auto [name, inlineValue] = splitInlineValue(arg);
    if (name == "-h" || name == "--help") {
      options.showHelp = true;
      return options;
    } else if (name == "--version" || name == "-V") {
      options.showVersion = true;
      return options;
    } else if (name == "--tag-output" && !inlineValue) {
      options.tagOutput = true;
    } else if (name == "-n" || name == "-np" || name == "--np") {
      options.ranks = parseRankCount(takeValue(name, inlineValue, "the number of ranks"));
      haveRankCount = true;
    } else if (name == "--bind-to") {
      const std::string policy = takeValue(name, inlineValue, "core or none");
      if (policy != "core" && policy != "none") throw UsageError{"--bind-to takes core or none, not '" + policy + "'"};
      options.bindToCore = policy == "core";
    } else if (name == "--timeout") {
      options.timeoutText = takeValue(name, inlineValue, "a number of seconds");
      options.timeoutSeconds = parseTimeout(options.timeoutText);
    } else {
      throw UsageError{"unknown option '" + arg + "' (options go before the command; see loomrun --help)"};
    }
  }

  if (!haveRankCount) throw UsageError{"the number of ranks is missing; pass it as -n N"};
  for (; index < argc; ++index) options.command.emplace_back(argv[index]);
  if (options.command.empty()) {
    throw UsageError{"no command given; put it after the options, as in loomrun -n 2 -- ./program"};
  }
  return options;
}

// ---------------------------------------------------------------------------
// What every rank of the job shares.

// The port is free when we look, and the ranks bind it moments later; the
// kernel does not hand out a port it just gave us again soon, which is the
// same bet torchrun makes.
std::string pickFreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throwErrno("cannot open a socket to find a free port");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    const int saved = errno;
    ::close(fd);
    errno = saved;
    throwErrno("cannot find a free port on 127.0.0.1");
  }
  ::close(fd);
  return std::to_string(ntohs(address.sin_port));
}

// 128 bits from the kernel's CSPRNG, as hex so it travels in the environment.
std::string makeSecret() {
  unsigned char bytes[16];
  std::size_t filled = 0;
  while (filled < sizeof(bytes)) {
    const ssize_t got = ::getrandom(bytes + filled, sizeof(bytes) - filled, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      throwErrno("cannot read random bytes for LOOM_SECRET");
    }
    filled += static_cast<std::size_t>(got);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string secret;
  for (const unsigned char byte : bytes) {
    secret += kHex[byte >> 4];
    secret += kHex[byte & 0xf];
  }
  return secret;
}

struct JobEnvironment {
  int worldSize;
  std::string masterPort;
  std::string secret;
};

std::vector<std::string> rankEnvironment(const JobEnvironment& job, int rank) {
  const std::vector<std::pair<std::string, std::string>> overrides = {
      {"RANK", std::to_string(rank)},
      {"WORLD_SIZE", std::to_string(job.worldSize)},
      {"LOCAL_RANK", std::to_string(rank)},
      {"LOCAL_WORLD_SIZE", std::to_string(job.worldSize)},
      {"GROUP_RANK", "0"},
      {"MASTER_ADDR", "127.0.0.1"},
      {"MASTER_PORT", job.masterPort},
      {"LOOM_SECRET", job.secret},
  };
  auto isOverridden = [&](std::string_view entry) {
    for (const auto& [name, value] : overrides) {
      if (entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 && entry[name.size()] == '=') {
        return true;
      }
    }
    return false;
  };

  std::vector<std::string> environment;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    if (!isOverridden(*entry)) environment.emplace_back(*entry);
  }
  for (const auto& [name, value] : overrides) environment.push_back(name + "=" + value);
  return environment;
}

// execvp wants NULL-terminated arrays of char*; the strings must outlive it.
std::vector<char*> asExecArray(std::vector<std::string>& words) {
  std::vector<char*> array;
  for (auto& word : words) array.push_back(word.data());
  array.push_back(nullptr);
  return array;
}

// ---------------------------------------------------------------------------
// Tagged output: one pipe per rank and stream, forwarded line by line.

struct TaggedStream {
  int readFd = -1;       // our end of the rank's pipe; -1 once closed
  int destination = -1;  // loomrun's own stdout or stderr
  std::string prefix;    // "[3] "
  std::string partial;   // text after the last newline seen so far
};

// Writes every complete line with its prefix in one write() call, so lines
// from different ranks interleave only at line boundaries.
void forwardCompleteLines(TaggedStream& stream) {
  std::string tagged;
  std::size_t start = 0;
  for (std::size_t newline; (newline = stream.partial.find('\n', start)) != std::string::npos; start = newline + 1) {
    tagged += stream.prefix;
    tagged.append(stream.partial, start, newline + 1 - start);
  }
  stream.partial.erase(0, start);
  if (stream.partial.size() >= kMaxBufferedLine) {
    tagged += stream.prefix + stream.partial + '\n';
    stream.partial.clear();
  }
  writeAll(stream.destination, tagged);
}

// Reads what the pipe holds right now. Returns false at end of file.
bool readAvailable(TaggedStream& stream) {
  char buffer[65536];
  for (;;) {
    const ssize_t got = ::read(stream.readFd, buffer, sizeof(buffer));
    if (got > 0) {
      stream.partial.append(buffer, static_cast<std::size_t>(got));
      forwardCompleteLines(stream);
      continue;
    }
    if (got == 0) return false;
    if (errno == EINTR) continue;
    // EAGAIN: drained for now. Any other error: treat the stream as ended.
    return errno == EAGAIN || errno == EWOULDBLOCK;
  }
}

// Called at end of file or when the rank has exited: whatever the rank wrote
// is in the pipe by then, so drain it and print an unfinished last line too.
// Later writes by leftover grandchildren are not waited for, so they cannot
// keep loomrun alive.
void finishStream(TaggedStream& stream) {
  if (stream.readFd < 0) return;
  readAvailable(stream);
  if (!stream.partial.empty()) {
    writeAll(stream.destination, stream.prefix + stream.partial + '\n');
    stream.partial.clear();
  }
  ::close(stream.readFd);
  stream.readFd = -1;
}

// ---------------------------------------------------------------------------
// Starting ranks.

struct Rank {
  int index = 0;
  pid_t pid = -1;  // also its process group id
  bool running = false;
  TaggedStream out;
  TaggedStream err;
};

// Everything a child needs after fork, prepared beforehand so that the child
// only makes system calls between fork and exec.
struct ChildSetup {
  char* const* argv;
  char* const* envp;
  const char* commandName;
  int rank;
  pid_t supervisor;
  int stdoutFd;  // -1: keep loomrun's
  int stderrFd;
  sigset_t signalMask;
  rlimit fileLimit;
  int bindCpu;  // -1: leave the CPU binding alone
};

[[noreturn]] void becomeRank(const ChildSetup& setup) {
  // Its own process group lets loomrun stop the rank together with anything
  // it started (sh -c 'prog', mpi-style wrappers) with one kill().
  ::setpgid(0, 0);
  // Die with loomrun even if it is SIGKILLed; the getppid() check closes the
  // window in which loomrun died before the prctl took effect.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != setup.supervisor) ::_exit(kExitLaunchError);

  if (setup.stdoutFd >= 0) ::dup2(setup.stdoutFd, STDOUT_FILENO);
  if (setup.stderrFd >= 0) ::dup2(setup.stderrFd, STDERR_FILENO);
  // Undo what loomrun changed for itself; ignored signals and limits survive
  // exec and the program should start as if run from the shell.
  ::signal(SIGPIPE, SIG_DFL);
  ::setrlimit(RLIMIT_NOFILE, &setup.fileLimit);
  ::sigprocmask(SIG_SETMASK, &setup.signalMask, nullptr);
  if (setup.bindCpu >= 0) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(setup.bindCpu, &one);
    ::sched_setaffinity(0, sizeof(one), &one);
  }

  environ = const_cast<char**>(setup.envp);
  ::execvp(setup.argv[0], setup.argv);

  char message[512];
  const int length = std::snprintf(message, sizeof(message), "loomrun: rank %d: cannot run '%s': %s\n", setup.rank,
                                   setup.commandName, std::strerror(errno));
  if (length > 0) {
    writeAll(STDERR_FILENO, std::string_view(message, std::min<std::size_t>(length, sizeof(message) - 1)));
  }
  ::_exit(kExitCannotRun);
}

struct Pipe {
  int readFd;
  int writeFd;
};

// Close-on-exec on both ends so that no rank inherits another rank's pipes;
// dup2 onto stdout/stderr clears the flag on the copies the rank keeps.
Pipe makeOutputPipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throwErrno("cannot create a pipe for --tag-output");
  // Only our end is non-blocking; the rank's writes must block as usual.
  ::fcntl(fds[0], F_SETFL, ::fcntl(fds[0], F_GETFL) | O_NONBLOCK);
  return {fds[0], fds[1]};
}

// --tag-output keeps two pipes per rank open, more than the usual soft limit
// of 1024 descriptors allows for large N; the hard limit is normally ample.
void raiseFileLimitFor(std::size_t descriptorsNeeded, const rlimit& current) {
  if (current.rlim_cur == RLIM_INFINITY || current.rlim_cur >= descriptorsNeeded) return;
  rlimit raised = current;
  raised.rlim_cur = current.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &raised);
}

// ---------------------------------------------------------------------------
// The job: start the ranks, then supervise them until all have exited.

class Job {
 public:
  explicit Job(Options options) : options_(std::move(options)) {}

  int run() {
    prepareSignalHandling();
    startRanks();
    if (options_.timeoutSeconds) {
      timeoutDeadline_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                            std::chrono::duration<double>(*options_.timeoutSeconds));
    }
    while (runningCount_ > 0) {
      waitForEvents();
      actOnDeadlines();
    }
    for (auto& rank : ranks_) {
      finishStream(rank.out);
      finishStream(rank.err);
    }
    if (!stoppedRanks_.empty()) {
      report("stopped ranks " + joinRanks(stoppedRanks_) + " after " + stopReason_);
    }
    return exitCode_.value_or(0);
  }

 private:
  enum class Phase { kRunning, kStopping };

  // Signals are blocked and read from a signalfd, so that child exits,
  // forwarded signals and rank output all arrive through one poll() and no
  // handler runs in the middle of bookkeeping.
  void prepareSignalHandling() {
    sigset_t handled;
    sigemptyset(&handled);
    for (const int signalNumber : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) {
      sigaddset(&handled, signalNumber);
    }
    if (::sigprocmask(SIG_BLOCK, &handled, &originalSignalMask_) != 0) {
      throwErrno("cannot block signals");
    }
    signalFd_ = ::signalfd(-1, &handled, SFD_NONBLOCK | SFD_CLOEXEC);
    if (signalFd_ < 0) throwErrno("cannot create a signalfd");
    // A closed stdout (loomrun ... | head) must not kill the supervisor
    // before it has stopped the ranks; such output is dropped instead.
    ::signal(SIGPIPE, SIG_IGN);
  }

  void startRanks() {
    JobEnvironment job{options_.ranks, pickFreePort(), makeSecret()};
    std::vector<char*> argv = asExecArray(options_.command);
    rlimit fileLimit{};
    ::getrlimit(RLIMIT_NOFILE, &fileLimit);
    if (options_.tagOutput) {
      raiseFileLimitFor(2 * static_cast<std::size_t>(options_.ranks) + 64, fileLimit);
    }

    ranks_.resize(options_.ranks);
    for (int index = 0; index < options_.ranks; ++index) {
      Rank& rank = ranks_[index];
      rank.index = index;
      std::vector<std::string> environment = rankEnvironment(job, index);
      std::vector<char*> envp = asExecArray(environment);
      ChildSetup setup{argv.data(), envp.data(), options_.command[0].c_str(), index,     ::getpid(),
                       -1,          -1,          originalSignalMask_,         fileLimit, cpuForRank(index)};
      try {
        startRank(rank, setup);
      } catch (const LaunchError& error) {
        // Ranks already started would wait forever for the missing one.
        report("cannot start rank " + std::to_string(index) + ": " + error.what());
        failJob(kExitLaunchError, "rank " + std::to_string(index) + " could not be started");
        return;
      }
    }
  }

  // --bind-to core: the rank-th CPU of those loomrun may use, round robin.
  // Unbound ranks all start on loomrun's CPU and share it until the load
  // balancer spreads them, tens of milliseconds later; and when ranks
  // outnumber CPUs, pinning them evenly beats the scheduler's shuffling
  // (8 B AllReduce, 4 ranks on 2 CPUs: 13 us pinned, 25-30 us unbound).
  int cpuForRank(int rank) const {
    if (!options_.bindToCore) return -1;
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (::sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return -1;
    std::vector<int> cpus;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &allowed)) cpus.push_back(cpu);
    if (cpus.empty()) return -1;
    return cpus[rank % cpus.size()];
  }

  void startRank(Rank& rank, ChildSetup& setup) {
    std::optional<Pipe> outPipe;
    std::optional<Pipe> errPipe;
    if (options_.tagOutput) {
      outPipe = makeOutputPipe();
      try {
        errPipe = makeOutputPipe();
      } catch (...) {
        ::close(outPipe->readFd);
        ::close(outPipe->writeFd);
        throw;
      }
      setup.stdoutFd = outPipe->writeFd;
      setup.stderrFd = errPipe->writeFd;
    }

    const pid_t pid = ::fork();
    if (pid == 0) becomeRank(setup);
    const int forkErrno = errno;
    for (const auto& pipe : {outPipe, errPipe}) {
      if (pipe) ::close(pipe->writeFd);  // the rank holds the write ends now
    }
    if (pid < 0) {
      for (const auto& pipe : {outPipe, errPipe}) {
        if (pipe) ::close(pipe->readFd);
      }
      errno = forkErrno;
      throwErrno("fork");
    }

    // Also set the group here: the child may not have run yet when we first
    // need to signal it. EACCES after its exec is harmless; it did it itself.
    ::setpgid(pid, pid);
    rank.pid = pid;
    rank.running = true;
    ++runningCount_;
    rankByPid_[pid] = rank.index;
    if (options_.tagOutput) {
      // Appended piecewise: `"[" + std::string` trips GCC 12's false -Wrestrict (PR 105329).
      std::string prefix = "[";
      prefix += std::to_string(rank.index);
      prefix += "] ";
      rank.out = TaggedStream{outPipe->readFd, STDOUT_FILENO, prefix, {}};
      rank.err = TaggedStream{errPipe->readFd, STDERR_FILENO, prefix, {}};
    }
  }

  // Sleeps in poll() until a signal, rank output or the next deadline.
  void waitForEvents() {
    std::vector<pollfd> watched{{signalFd_, POLLIN, 0}};
    std::vector<TaggedStream*> streams;
    for (auto& rank : ranks_) {
      for (TaggedStream* stream : {&rank.out, &rank.err}) {
        if (stream->readFd < 0) continue;
        watched.push_back({stream->readFd, POLLIN, 0});
        streams.push_back(stream);
      }
    }

    const int ready = ::poll(watched.data(), watched.size(), millisecondsUntilNextDeadline());
    if (ready <= 0) return;  // deadline reached, or EINTR from SIGSTOP/SIGCONT
    if (watched[0].revents != 0) handleSignals();
    for (std::size_t i = 0; i < streams.size(); ++i) {
      // handleSignals() may have finished this stream already.
      if (watched[i + 1].revents == 0 || streams[i]->readFd < 0) continue;
      if (!readAvailable(*streams[i])) finishStream(*streams[i]);
    }
  }

  std::optional<Clock::time_point> nextDeadline() const {
    if (phase_ == Phase::kRunning) return timeoutDeadline_;
    if (!sentSigkill_) return stopDeadline_;
    return std::nullopt;
  }

  int millisecondsUntilNextDeadline() const {
    const auto deadline = nextDeadline();
    if (!deadline) return -1;
    const auto remaining = *deadline - Clock::now();
    if (remaining <= Clock::duration::zero()) return 0;
    // Round up so we never wake just before the deadline and spin.
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(remaining).count();
    return static_cast<int>(std::min<long long>(ms, 24LL * 3600 * 1000));
  }

  void handleSignals() {
    signalfd_siginfo info;
    while (::read(signalFd_, &info, sizeof(info)) == static_cast<ssize_t>(sizeof(info))) {
      if (info.ssi_signo == SIGCHLD) {
        // SIGCHLDs coalesce: reap everything that has exited.
        reapExitedRanks();
      } else {
        onStopRequest(static_cast<int>(info.ssi_signo));
      }
    }
  }

  void reapExitedRanks() {
    int waitStatus = 0;
    pid_t pid;
    while ((pid = ::waitpid(-1, &waitStatus, WNOHANG)) > 0) {
      const auto found = rankByPid_.find(pid);
      if (found != rankByPid_.end()) onRankExited(ranks_[found->second], waitStatus);
    }
  }

  void onRankExited(Rank& rank, int waitStatus) {
    rank.running = false;
    --runningCount_;
    finishStream(rank.out);
    finishStream(rank.err);
    // Once we are stopping the job, ranks dying is what we asked for.
    if (phase_ != Phase::kRunning || exitedCleanly(waitStatus)) return;

    report(describeRankExit(rank, waitStatus));
    failJob(shellStatus(waitStatus), "rank " + std::to_string(rank.index) + " failed");
  }

  static std::string describeRankExit(const Rank& rank, int waitStatus) {
    std::string text = "rank " + std::to_string(rank.index) + " (pid " + std::to_string(rank.pid) + ")";
    if (WIFSIGNALED(waitStatus)) {
      text += " was killed by signal " + describeSignal(WTERMSIG(waitStatus));
      if (WCOREDUMP(waitStatus)) text += ", core dumped";
    } else {
      text += " exited with status " + std::to_string(shellStatus(waitStatus));
    }
    return text;
  }

  // SIGINT/SIGTERM/SIGHUP to loomrun: pass it on so the ranks can clean up.
  // A second one means the user is not willing to wait.
  void onStopRequest(int signalNumber) {
    const std::string name = describeSignal(signalNumber);
    if (phase_ == Phase::kRunning) {
      report("received " + name + "; forwarding it to ranks " + joinRanks(runningRanks()));
      failJob(128 + signalNumber, "receiving " + name, signalNumber);
    } else if (runningCount_ > 0) {
      report("received " + name + " again; killing ranks " + joinRanks(runningRanks()));
      killRemainingRanks();
    }
  }

  void actOnDeadlines() {
    const auto now = Clock::now();
    if (phase_ == Phase::kRunning && timeoutDeadline_ && now >= *timeoutDeadline_) {
      report("timed out after " + options_.timeoutText + " s with ranks " + joinRanks(runningRanks()) +
             " still running");
      failJob(kExitTimeout, "the " + options_.timeoutText + " s timeout");
    } else if (phase_ == Phase::kStopping && !sentSigkill_ && now >= stopDeadline_ && runningCount_ > 0) {
      report("ranks " + joinRanks(runningRanks()) + " did not stop within " + std::to_string(kStopGraceSeconds) +
             " s; sending SIGKILL");
      killRemainingRanks();
    }
  }

  // Records the first cause of failure (it decides the exit status) and
  // asks the ranks still running to stop.
  void failJob(int exitCode, const std::string& reason, int stopSignal = SIGTERM) {
    exitCode_ = exitCode;
    stopReason_ = reason;
    phase_ = Phase::kStopping;
    stoppedRanks_ = runningRanks();
    signalRunningRanks(stopSignal);
    stopDeadline_ = Clock::now() + std::chrono::seconds(kStopGraceSeconds);
  }

  void killRemainingRanks() {
    signalRunningRanks(SIGKILL);
    sentSigkill_ = true;
  }

  // Only ranks not yet reaped: their pid, and so their group id, cannot have
  // been reused by an unrelated process.
  void signalRunningRanks(int signalNumber) {
    for (const auto& rank : ranks_) {
      if (rank.running) ::kill(-rank.pid, signalNumber);
    }
  }

  std::vector<int> runningRanks() const {
    std::vector<int> indices;
    for (const auto& rank : ranks_) {
      if (rank.running) indices.push_back(rank.index);
    }
    return indices;
  }

  Options options_;
  std::vector<Rank> ranks_;
  std::unordered_map<pid_t, int> rankByPid_;
  int runningCount_ = 0;
  int signalFd_ = -1;
  sigset_t originalSignalMask_{};

  Phase phase_ = Phase::kRunning;
  std::optional<int> exitCode_;  // set by the first failure only
  std::string stopReason_;
  std::vector<int> stoppedRanks_;
  std::optional<Clock::time_point> timeoutDeadline_;
  Clock::time_point stopDeadline_{};
  bool sentSigkill_ = false;
};

int runLauncher(int argc, char** argv) {
  Options options;
  try {
    options = parseCommandLine(argc, argv);
  } catch (const UsageError& error) {
    report(error.sentence + ".");
    return kExitUsage;
  }
  if (options.showHelp) {
    writeAll(STDOUT_FILENO, kUsage);
    return 0;
  }
  if (options.showVersion) {
    writeAll(STDOUT_FILENO, "loomrun (Loom) " LOOM_VERSION_STRING "\n");
    return 0;
  }
  try {
    return Job(std::move(options)).run();
  } catch (const LaunchError& error) {
    report(error.what());
    return kExitLaunchError;
  }
}

}  // namespace
}  // namespace loom::tools

int main(int argc, char** argv) {
  return loom::tools::runLauncher(argc, argv);
}
