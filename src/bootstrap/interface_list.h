// LOOM_SOCKET_IFNAME's syntax, which is NCCL_SOCKET_IFNAME's, so that a
// job script written for NCCL means the same to Loom:
//   eth,ib      interfaces whose names start with eth or ib
//   ^docker,lo  every interface but those starting with docker or lo
//   =eth0       exactly eth0 (and ^=eth0: every interface but eth0)
// An entry may end in :PORT, which NCCL reads for InfiniBand ports and
// ignores for sockets; Loom accepts and ignores it too. Pure: parsed once,
// then asked about names; host_interfaces.h reads the system.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace loom::bootstrap {

struct InterfaceList {
  std::string text;                // as the user wrote it, for sentences
  std::vector<std::string> names;  // prefixes, or whole names when `exact`
  bool exclude = false;            // leading '^'
  bool exact = false;              // '=' (after the '^', if any)

  // Whether interface `name` is one the list selects.
  bool matches(std::string_view name) const;
};

// Throws loomInvalidArgument with a sentence naming `variable`, the value
// and the rule it breaks: an empty list or entry, '^' or '=' with nothing
// after, a character no interface name has (space, '/'), a port that is not
// a number.
InterfaceList parseInterfaceList(const std::string& text, const char* variable);

}  // namespace loom::bootstrap
