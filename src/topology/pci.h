// PCI vocabulary shared by every source: bus ids, device classes and the
// usable bandwidth of a link of a given generation and width.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace loom::topo {

// "0000:17:00.0" (domain optional, 1 to 8 digits, any case) -> canonical
// lower-case "dddd:bb:dd.f"; nullopt if it is not a PCI address (NCCL's
// NVSwitch placeholder "fffffff:ffff:ff" is not).
std::optional<std::string> normalizeBusId(const std::string& text);

// Classes as NCCL writes them (24 bits: class, subclass, prog-if).
inline bool isBridgeClass(int32_t c) { return c >= 0 && (c >> 8) == 0x0604; }
inline bool isDisplayClass(int32_t c) { return c >= 0 && (c >> 16) == 0x03; }
inline bool isNetworkClass(int32_t c) { return c >= 0 && (c >> 16) == 0x02; }
inline bool isNvSwitchClass(int32_t c) { return c >= 0 && (c >> 8) == 0x0680 && c != 0x068001; }
// NCCL's class for a CPU at the far end of an NVLink (POWER9's NPU).
inline bool isNvlinkCpuClass(int32_t c) { return c == 0x068001; }
constexpr int32_t kNvidiaVendor = 0x10de;

// "16 GT/s", "16.0 GT/s PCIe", "32 GT/s PCIe/s" -> 16 or 32; 0 if unknown.
double gigaTransfers(const std::string& linkSpeed);

// NCCL's usable bandwidth of a PCIe link: width * per-lane figure / 80, so
// Gen3 x16 = 12 GB/s, Gen4 x16 = 24 GB/s, Gen5 x16 = 48 GB/s. 0 if unknown.
double pciUsableGBs(const std::string& linkSpeed, int width);

// hwloc reports a link as raw GB/s (15.75 for Gen3 x16) without generation
// or width; pick the widest standard width that explains it, since that is
// how GPUs and NICs are almost always connected. Returns false if nothing fits.
bool pciSpeedFromRawGBs(double rawGBs, std::string* linkSpeed, int* width);

// "0x10de" or "4318" -> value; -1 if empty or malformed.
int32_t parseHexOrInt(const std::string& text);
std::string hexString(int32_t value, int digits);  // "0x030200"

}  // namespace loom::topo
