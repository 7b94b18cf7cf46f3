#include "bootstrap/interface_list.h"

#include <cctype>

#include "base/error.h"

namespace loom::bootstrap {
namespace {

constexpr const char* kSyntax =
    "write interface name prefixes separated by commas (eth,ib), '^' first to exclude them (^docker,lo), '=' "
    "for whole names (=eth0, ^=docker0)";

// What Linux refuses in an interface name (dev_valid_name), and so can only
// be a typo here (':' is the port separator).
bool neverInName(char c) {
  return std::isspace(static_cast<unsigned char>(c)) || c == '/';
}

}  // namespace

bool InterfaceList::matches(std::string_view name) const {
  bool listed = false;
  for (const std::string& entry : names) {
    if (exact ? name == entry : name.substr(0, entry.size()) == entry) {
      listed = true;
      break;
    }
  }
  return listed != exclude;
}

InterfaceList parseInterfaceList(const std::string& text, const char* variable) {
  const std::string named = std::string(variable) + "='" + text + "'";
  InterfaceList list;
  list.text = text;
  std::string_view rest = text;
  if (!rest.empty() && rest.front() == '^') {
    list.exclude = true;
    rest.remove_prefix(1);
  }
  if (!rest.empty() && rest.front() == '=') {
    list.exact = true;
    rest.remove_prefix(1);
  }
  if (rest.empty())
    fail(loomInvalidArgument, named + " names no interface: " + kSyntax + "; unset it for the default order");
  size_t number = 0;
  for (;;) {
    const size_t comma = rest.find(',');
    std::string_view entry = rest.substr(0, comma);
    ++number;
    const std::string which = "entry " + std::to_string(number);
    const size_t colon = entry.find(':');
    if (colon != std::string_view::npos) {
      const std::string_view port = entry.substr(colon + 1);
      if (port.empty() || port.find_first_not_of("0123456789") != std::string_view::npos)
        fail(loomInvalidArgument, named + ": " + which + " ends in ':" + std::string(port) +
                                      "', which is not a port number (NCCL's name:port; sockets ignore the port)");
      entry = entry.substr(0, colon);
    }
    if (entry.empty())
      fail(loomInvalidArgument, named + ": " + which + " is empty (two commas, or one at an end?); " + kSyntax);
    if (entry.front() == '^' || entry.front() == '=')
      fail(loomInvalidArgument, named + ": " + which + " starts with '" + std::string(1, entry.front()) +
                                    "', which applies to the whole list and goes once at its start (^=eth0,eth1)");
    for (char c : entry)
      if (neverInName(c))
        fail(loomInvalidArgument, named + ": " + which + " '" + std::string(entry) + "' holds '" + std::string(1, c) +
                                      "', which no interface name has; " + kSyntax);
    list.names.emplace_back(entry);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return list;
}

}  // namespace loom::bootstrap
