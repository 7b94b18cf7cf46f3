// What TCP's sockets got for kernel buffers. Unset, LOOM_SOCKET_BUFFER_BYTES
// leaves them to the kernel's autotuning, which grows each socket's buffers
// with its traffic up to net.ipv4.tcp_wmem / tcp_rmem (4 and 6 MiB by
// default): larger than any fixed size a process may set without
// privileges (net.core.wmem_max, 208 KiB by default), as NCCL and Gloo also
// leave them. Set, it fixes both buffers of every data socket (as Open MPI's
// btl_tcp_sndbuf/rcvbuf do), and a size the kernel caps is said, not
// silently taken.
#pragma once

namespace loom::tcp {

// One INFO line per rank on what `fd` (a connected data socket) has, or a
// WARN when it has less than `requested` (0: nothing was asked).
void reportSocketBuffers(int rank, int fd, int requested);

}  // namespace loom::tcp
