// Path class names and the bandwidth figures Loom assumes; the path search
// itself is in path_finder.cc.
#include "topology/paths.h"

namespace loom::topo {

namespace {

constexpr const char* kNames[] = {"LOC", "NVL", "NVB", "PIX", "PXB", "PHB", "SYS", "NET"};

}  // namespace

const char* pathClassName(PathClass c) { return kNames[static_cast<int>(c)]; }

bool parsePathClass(const std::string& name, PathClass* out) {
  for (int i = 0; i < 8; i++) {
    if (name == kNames[i]) {
      *out = static_cast<PathClass>(i);
      return true;
    }
  }
  return false;
}

double nvlinkGBsPerLane(int sm) {
  if (sm >= 100) return 40.1;
  if (sm >= 90) return 20.6;
  if (sm >= 70) return 20.0;
  if (sm >= 60) return 18.0;
  return 20.0;
}

double interCpuGBs(const Node& cpu) {
  if (cpu.arch == "ppc64") return 32;
  if (cpu.vendor == "AuthenticAMD") return 16;
  if (cpu.vendor == "GenuineIntel") return cpu.modelId >= 0x55 ? 10 : 6;
  return 6;
}

}  // namespace loom::topo
