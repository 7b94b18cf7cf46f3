#include "transport/identity.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>

#include "base/error.h"

namespace loom {

namespace {

// LOOM_HOST_ID names the host instead of hostname and boot id: for
// containers that share a kernel but should not share memory, and for tests
// that make several hosts of one machine. Printable, no '/' or newline (the
// encoding's separators), at most 200 bytes.
std::string hostIdFromEnvironment() {
  const char* value = std::getenv("LOOM_HOST_ID");
  if (value == nullptr || value[0] == '\0') return {};
  const std::string id(value);
  if (id.size() > 200)
    fail(loomInvalidArgument, "LOOM_HOST_ID is " + std::to_string(id.size()) + " bytes long; at most 200 are allowed");
  for (const char c : id)
    if (c < 0x21 || c > 0x7e || c == '/')
      fail(loomInvalidArgument,
           "LOOM_HOST_ID='" + id + "' has a character other than printable ASCII without spaces or '/'");
  return id;
}

}  // namespace

RankIdentity RankIdentity::mine(const topo::RankPlacement& place, std::vector<DeviceIdentity> devices) {
  RankIdentity identity{hostIdFromEnvironment(), getpid(), place, std::move(devices)};
  if (!identity.host.empty()) return identity;
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  std::string bootId;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> bootId;
  identity.host = std::string(name) + "/" + bootId;
  return identity;
}

std::vector<DeviceIdentity> devicesOf(const topo::Topology& topology) {
  std::vector<DeviceIdentity> devices;
  auto numaOf = [&](int node) {
    const int cpu = topology.rootCpu(node);
    return cpu >= 0 ? topology.nodes[cpu].numa : -1;
  };
  for (int id : topology.gpus()) {
    const topo::Node& gpu = topology.nodes[id];
    devices.push_back({DeviceIdentity::Kind::kGpu, gpu.name, gpu.pci.busId, numaOf(id), "", gpu.model});
  }
  for (int id : topology.nics()) {
    const topo::Node& nic = topology.nodes[id];
    for (size_t p = 0; p < nic.nets.size(); ++p) {
      const topo::NetPort& port = nic.nets[p];
      std::string guid;
      for (const auto& [key, value] : port.extra)
        if (key == "guid") guid = value;
      // An RDMA NIC lists its OpenFabrics device first (mlx5_0), then its
      // network interfaces (ib0, eth2).
      const bool rdma = nic.rdma && p == 0;
      devices.push_back({DeviceIdentity::Kind::kNic, port.name, nic.pci.busId, numaOf(id), rdma ? "rdma" : "ip", guid});
    }
  }
  return devices;
}

namespace {

constexpr size_t kMaxDevices = 1024;
constexpr size_t kMaxDeviceField = 256;

// Fields travel between tabs and lines: a name holding either (a topology
// file may say anything) is sent with '?' there.
std::string plain(const std::string& field) {
  std::string text = field.substr(0, kMaxDeviceField);
  for (char& c : text)
    if (c == '\t' || c == '\n') c = '?';
  return text;
}

std::vector<std::string> splitTabs(const std::string& line) {
  std::vector<std::string> fields;
  size_t at = 0;
  while (true) {
    const size_t tab = line.find('\t', at);
    fields.push_back(line.substr(at, tab - at));
    if (tab == std::string::npos) return fields;
    at = tab + 1;
  }
}

}  // namespace

// "host\npid\n", the placement's bytes, then a line per device:
// "gpu|nic\tname\tbusId\tnuma\tfabric\taddress\n".
std::string RankIdentity::encode() const {
  std::string text =
      host + "\n" + std::to_string(pid) + "\n" + std::string(reinterpret_cast<const char*>(&place), sizeof(place));
  for (size_t d = 0; d < devices.size() && d < kMaxDevices; ++d) {
    const DeviceIdentity& device = devices[d];
    text += std::string(device.kind == DeviceIdentity::Kind::kGpu ? "gpu" : "nic") + "\t" + plain(device.name) + "\t" +
            plain(device.busId) + "\t" + std::to_string(device.numa) + "\t" + plain(device.fabric) + "\t" +
            plain(device.address) + "\n";
  }
  return text;
}

RankIdentity RankIdentity::decode(const std::string& text, int rank) {
  auto malformed = [&](const std::string& what) {
    fail(loomRemoteError, "rank " + std::to_string(rank) + " sent a malformed identity at init (" +
                              std::to_string(text.size()) + " bytes, " + what +
                              "; is every rank running the same Loom?)");
  };
  RankIdentity identity;
  const size_t hostEnd = text.find('\n');
  const size_t pidEnd = hostEnd == std::string::npos ? std::string::npos : text.find('\n', hostEnd + 1);
  if (hostEnd == std::string::npos || hostEnd == 0 || pidEnd == std::string::npos) malformed("no host and pid");
  identity.host = text.substr(0, hostEnd);
  const std::string pidText = text.substr(hostEnd + 1, pidEnd - hostEnd - 1);
  char* end = nullptr;
  const long pid = std::strtol(pidText.c_str(), &end, 10);
  if (pidText.empty() || end == nullptr || *end != '\0' || pid <= 0) malformed("no pid");
  identity.pid = static_cast<pid_t>(pid);
  const size_t placeAt = pidEnd + 1;
  if (text.size() < placeAt + sizeof(topo::RankPlacement)) malformed("its placement cut short");
  std::memcpy(&identity.place, text.data() + placeAt, sizeof(identity.place));
  identity.place.host[sizeof(identity.place.host) - 1] = '\0';
  identity.place.nic[sizeof(identity.place.nic) - 1] = '\0';

  size_t at = placeAt + sizeof(topo::RankPlacement);
  while (at < text.size()) {
    const size_t lineEnd = text.find('\n', at);
    if (lineEnd == std::string::npos) malformed("a device line without its end");
    if (identity.devices.size() == kMaxDevices) malformed("more than " + std::to_string(kMaxDevices) + " devices");
    const std::vector<std::string> fields = splitTabs(text.substr(at, lineEnd - at));
    at = lineEnd + 1;
    if (fields.size() != 6 || (fields[0] != "gpu" && fields[0] != "nic"))
      malformed("device " + std::to_string(identity.devices.size()) +
                " is not 'gpu|nic, name, bus id, numa, fabric, "
                "address'");
    for (const std::string& field : fields)
      if (field.size() > kMaxDeviceField) malformed("a device field longer than " + std::to_string(kMaxDeviceField));
    DeviceIdentity device;
    device.kind = fields[0] == "gpu" ? DeviceIdentity::Kind::kGpu : DeviceIdentity::Kind::kNic;
    device.name = fields[1];
    device.busId = fields[2];
    const long numa = std::strtol(fields[3].c_str(), &end, 10);
    if (fields[3].empty() || *end != '\0' || numa < -1 || numa > 1 << 20)
      malformed("device " + std::to_string(identity.devices.size()) + " has NUMA node '" + fields[3] + "'");
    device.numa = static_cast<int>(numa);
    device.fabric = fields[4];
    device.address = fields[5];
    identity.devices.push_back(std::move(device));
  }
  return identity;
}

}  // namespace loom
