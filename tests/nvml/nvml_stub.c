/* A stand-in libnvidia-ml.so.1 for tests on machines without the NVIDIA
 * driver: two P100-like GPUs at 0000:04:00.0 and 0000:07:00.0 (the bus ids of
 * the LLNL Pascal fixture) joined by 4 active NVLinks (links 0-3 of 6), the
 * way NVML reports them (8-digit domains). It exercises Loom's dlopen, symbol
 * binding, bus-id parsing and lane counting; it is not NVML. */
#include <stdio.h>
#include <string.h>

typedef struct {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;

static const unsigned kBuses[2] = {0x04, 0x07};

static void fill(unsigned gpu, nvmlPciInfo_t* p) {
  memset(p, 0, sizeof(*p));
  p->bus = kBuses[gpu];
  snprintf(p->busId, sizeof(p->busId), "00000000:%02X:00.0", kBuses[gpu]);
  snprintf(p->busIdLegacy, sizeof(p->busIdLegacy), "0000:%02X:00.0", kBuses[gpu]);
}

static unsigned gpuOf(void* device) { return (unsigned)(size_t)device - 1; }

int nvmlInit_v2(void) { return 0; }
int nvmlShutdown(void) { return 0; }
int nvmlDeviceGetCount_v2(unsigned* count) { *count = 2; return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned index, void** device) {
  if (index >= 2) return 2; /* NVML_ERROR_INVALID_ARGUMENT */
  *device = (void*)(size_t)(index + 1);
  return 0;
}
int nvmlDeviceGetPciInfo_v3(void* device, nvmlPciInfo_t* pci) { fill(gpuOf(device), pci); return 0; }
int nvmlDeviceGetNvLinkState(void* device, unsigned link, int* active) {
  (void)device;
  if (link >= 6) return 2;
  *active = link < 4;
  return 0;
}
int nvmlDeviceGetNvLinkRemotePciInfo_v2(void* device, unsigned link, nvmlPciInfo_t* pci) {
  (void)link;
  fill(1 - gpuOf(device), pci);
  return 0;
}
int nvmlSystemGetDriverVersion(char* version, unsigned length) { snprintf(version, length, "999.1.2-stub"); return 0; }
int nvmlSystemGetNVMLVersion(char* version, unsigned length) { snprintf(version, length, "12.999.1.2-stub"); return 0; }
int nvmlSystemGetCudaDriverVersion(int* version) { *version = 12040; return 0; }
