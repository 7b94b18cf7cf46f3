#include "topology/pci.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace loom::topo {

namespace {

bool hexDigits(const std::string& s, size_t from, size_t count) {
  if (from + count > s.size()) return false;
  for (size_t i = from; i < from + count; i++) {
    if (!std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

// Per-lane figure NCCL multiplies by the width and divides by 80 (GB/s).
double laneFactor(double gt) {
  if (gt >= 60) return 480;
  if (gt >= 30) return 240;
  if (gt >= 15) return 120;
  if (gt >= 7.5) return 60;
  if (gt >= 4.5) return 30;
  if (gt >= 2) return 15;
  return 0;
}

}  // namespace

std::optional<std::string> normalizeBusId(const std::string& text) {
  std::string s;
  for (char c : text) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // The domain is optional ("17:00.0") and may have up to 8 digits: NVML
  // writes "00000000:c0:00.0", sysfs "0000:c0:00.0"; both name one device.
  size_t firstColon = s.find(':');
  if (firstColon != std::string::npos && s.find(':', firstColon + 1) == std::string::npos) {
    s = "0000:" + s;
    firstColon = 4;
  }
  if (firstColon == std::string::npos || firstColon == 0 || firstColon > 8 || !hexDigits(s, 0, firstColon)) {
    return std::nullopt;
  }
  unsigned long domain = std::strtoul(s.substr(0, firstColon).c_str(), nullptr, 16);
  char prefix[16];
  std::snprintf(prefix, sizeof(prefix), "%04lx", domain);
  s = prefix + s.substr(firstColon);
  // dddd:bb:dd.f (a domain above 0xffff keeps its extra digits)
  if (s.size() < 12) return std::nullopt;
  size_t d = s.size() - 12;  // extra domain digits
  if (s[4 + d] != ':' || s[7 + d] != ':' || s[10 + d] != '.') return std::nullopt;
  if (!hexDigits(s, 5 + d, 2) || !hexDigits(s, 8 + d, 2) || !hexDigits(s, 11 + d, 1)) return std::nullopt;
  // Device numbers stop at 0x1f and functions at 7.
  if (std::strtol(s.substr(8 + d, 2).c_str(), nullptr, 16) > 0x1f || s[11 + d] > '7') return std::nullopt;
  return s;
}

double gigaTransfers(const std::string& linkSpeed) {
  char* end = nullptr;
  double v = std::strtod(linkSpeed.c_str(), &end);
  if (end == linkSpeed.c_str() || v <= 0) return 0;
  return v;
}

double pciUsableGBs(const std::string& linkSpeed, int width) {
  if (width <= 0) return 0;
  return width * laneFactor(gigaTransfers(linkSpeed)) / 80.0;
}

bool pciSpeedFromRawGBs(double rawGBs, std::string* linkSpeed, int* width) {
  // Raw per-lane GB/s after line encoding, Gen1..Gen5.
  static const struct { const char* speed; double lane; } kGens[] = {
      {"2.5 GT/s", 0.25}, {"5 GT/s", 0.5}, {"8 GT/s", 0.985}, {"16 GT/s", 1.969}, {"32 GT/s", 3.938}};
  static const int kWidths[] = {16, 8, 4, 2, 1};
  if (!(rawGBs > 0)) return false;
  for (int w : kWidths) {
    for (const auto& g : kGens) {
      if (std::fabs(w * g.lane - rawGBs) <= 0.03 * rawGBs) {
        *linkSpeed = g.speed;
        *width = w;
        return true;
      }
    }
  }
  return false;
}

int32_t parseHexOrInt(const std::string& text) {
  if (text.empty()) return -1;
  char* end = nullptr;
  long v = std::strtol(text.c_str(), &end, 0);
  if (*end != '\0' || v < 0 || v > 0x7fffffff) return -1;
  return static_cast<int32_t>(v);
}

std::string hexString(int32_t value, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%0*x", digits, static_cast<unsigned>(value));
  return buf;
}

}  // namespace loom::topo
