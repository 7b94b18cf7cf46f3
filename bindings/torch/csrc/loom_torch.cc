// The Python module loom_torch._C: the function torch.distributed calls to
// make a "loom" process group (loom_torch/__init__.py registers it).
#include <pybind11/chrono.h>
#include <torch/extension.h>

#include "process_group_loom.h"

namespace loom_torch {
namespace {

c10::intrusive_ptr<ProcessGroupBase> createProcessGroup(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                        int size, const std::chrono::duration<float>& timeout) {
  return c10::make_intrusive<ProcessGroupLoom>(store, rank, size,
                                               std::chrono::duration_cast<std::chrono::milliseconds>(timeout));
}

}  // namespace
}  // namespace loom_torch

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "Loom's torch.distributed backend";
  m.def("create_process_group", &loom_torch::createProcessGroup, pybind11::arg("store"), pybind11::arg("rank"),
        pybind11::arg("size"), pybind11::arg("timeout"),
        "A process group of `size` ranks on Loom; ranks meet through `store`.",
        pybind11::call_guard<pybind11::gil_scoped_release>());
  m.def("loom_version", [] {
    int version = 0;
    loomGetVersion(&version);
    return version;
  });
}
