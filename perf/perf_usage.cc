// The -h text: nccl-tests' flags first, then Loom's own.
#include <cstdio>

#include "perf_options.h"

namespace loom::perf {

void printUsage(const char* program) {
  std::printf(
      "USAGE: %s \n\t"
      "[-t,--nthreads <num threads>] (1; more is ignored: one rank per process)\n\t"
      "[-g,--ngpus <gpus per thread>] (GPU-only, ignored)\n\t"
      "[-b,--minbytes <min size in bytes>] (K, M, G suffixes; 1.5M and 1MB work; default 32M)\n\t"
      "[-e,--maxbytes <max size in bytes>] (default 32M)\n\t"
      "[-i,--stepbytes <increment size>] (default 1M; used unless -f is above 1)\n\t"
      "[-f,--stepfactor <increment factor>] \n\t"
      "[-n,--iters <iteration count>] (default 20)\n\t"
      "[-m,--agg_iters <aggregated iteration count>] \n\t"
      "[-w,--warmup_iters <warmup iteration count>] (default 1)\n\t"
      "[-N,--run_cycles <cycle count> run & print each cycle (default: 1; 0=infinite)] \n\t"
      "[-p,--parallel_init <0/1>] (ignored: one rank per process)\n\t"
      "[-c,--check <check iteration count>] (default 1; 0 = no check, #wrong reads N/A)\n\t"
      "[-o,--op <sum/prod/min/max/avg/all>] \n\t"
      "[-d,--datatype <nccltype/all>] (int8 uint8 int32 uint32 int64 uint64 half float double bfloat16)\n\t"
      "[-r,--root <root>] (-1: every root)\n\t"
      "[-z,--blocking <0/1/2/3> 1=barrier after each inner iter (-m), 2=no barrier, 3=wait and barrier after "
      "each outer iter (-n)] \n\t"
      "[-y,--stream_null <0/1>] (GPU-only, ignored)\n\t"
      "[-T,--timeout <time in seconds>] (fail, naming the late ranks, exit 4)\n\t"
      "[-G,--cudagraph <num graph launches>] (GPU-only, ignored)\n\t"
      "[-C,--report_cputime <0/1>] (time until every operation was posted)\n\t"
      "[-S,--report_timestamps <0/1> report timestamps (default 0)] \n\t"
      "[-J,--output_file <file> write output to filepath, if accessible. Infer type from suffix (only json "
      "supported presently.)] \n\t"
      "[-a,--average <0/1/2/3> report average iteration time <0=RANK0/1=AVG/2=MIN/3=MAX>] \n\t"
      "[-R,--local_register <0/1/2> buffers from loomMemAlloc, registered with loomCommRegister (default: 0)] \n\t"
      "[-x,--cta_policy <0/1/2>] (GPU-only, ignored)\n\t"
      "[-D,--device_implementation <implementation number>] (GPU-only, ignored)\n\t"
      "[-V,--device_cta_count <number>] (GPU-only, ignored)\n\t"
      "[-M,--memory <0/1>] (GPU memory report: GPU-only, ignored)\n\t"
      "[-u,--unalign <index of first element> Misalign source and destination buffers (default: 0)] \n\t"
      "[-I,--per_iter_timing <0/1>] (ignored: CUDA event timing)\n\t"
      "[-K,--per_iter_skip <count>] (ignored, as -I)\n\t"
      "[-h,--help]\n"
      "Loom's own options:\n\t"
      "[--cache_hot <0/1> 1: every iteration on the same buffers (default 0: offsets rotate over a region\n\t"
      "    larger than the last-level cache, as nccl-tests rotates over its buffers)]\n\t"
      "[--mem host] (buffer memory; host only in this build)\n\t"
      "[--stall RANK:MS] (RANK sleeps MS before its first collective, to see -T name it)\n\t"
      "[--version] (print the binary's name and Loom's version, and exit)\n"
      "Launch with loomrun -n N, mpirun -np N, or torchrun-style variables.\n"
      "Exit status as nccl-tests: 0 success, 3 a Loom call failed, 4 timeout (-T), 7 wrong results,\n"
      "255 a bad size or value.\n",
      program);
}

}  // namespace loom::perf
