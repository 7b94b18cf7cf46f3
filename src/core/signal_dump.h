// LOOM_DUMP_ON_SIGNAL=USR1: `kill -USR1 <pid>` prints the flight recorder of
// every live communicator of that process to its log, and the process runs
// on. The handler only writes a byte to a pipe (all a signal handler may
// safely do); a thread of Loom's reads the pipe and prints, so a process
// stuck inside a collective still answers.
#pragma once

namespace loom {

class Communicator;

// Installs the handler for `signal` once per process (later calls with
// another signal are refused with loomInvalidUsage), and lists the
// communicator until it unlists itself.
void listForSignalDumps(int signal, const Communicator* communicator);
void unlistForSignalDumps(const Communicator* communicator);

}  // namespace loom
