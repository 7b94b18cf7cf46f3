#include "perf_options.h"

#include <getopt.h>
#include <loom/version.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "perf_format.h"

namespace loom::perf {
namespace {

// nccl-tests' names; Loom's own spellings are accepted too.
struct TypeName {
  const char* name;
  loomDataType_t dtype;
};
constexpr TypeName kTypeNames[] = {
    {"int8", loomInt8},         {"uint8", loomUint8},       {"int32", loomInt32},     {"uint32", loomUint32},
    {"int64", loomInt64},       {"uint64", loomUint64},     {"half", loomFloat16},    {"float", loomFloat32},
    {"double", loomFloat64},    {"bfloat16", loomBfloat16}, {"float16", loomFloat16}, {"float32", loomFloat32},
    {"float64", loomFloat64},   {"int", loomInt32},
};
constexpr int kNcclTypeCount = 10;  // the first ten are nccl-tests' list
constexpr NamedOp kOps[] = {{loomSum, "sum"}, {loomProd, "prod"}, {loomMax, "max"}, {loomMin, "min"},
                            {loomAvg, "avg"}};

// Loom's own long options, past the range of short-option characters.
enum : int { kOptMem = 256, kOptStall, kOptCacheHot, kOptVersion };

[[noreturn]] void badValue(const std::string& sentence) {
  std::fprintf(stderr, "%s\n", sentence.c_str());
  std::exit(kExitBadArguments);
}

long integer(const char* flag, const char* text, long lo, long hi) {
  long value = 0;
  if (!parseInteger(text, &value) || value < lo || value > hi)
    badValue(std::string("invalid value '") + text + "' for " + flag + ": expected an integer from " +
             std::to_string(lo) + " to " + std::to_string(hi));
  return value;
}

size_t size(const char* name, const char* text) {
  size_t bytes = 0;
  if (!parseSize(text, &bytes))
    badValue(std::string("invalid size specified for '") + name + "': '" + text +
             "' (a number with an optional K, M or G suffix)");
  return bytes;
}

void ignored(PerfOptions& o, const char* flag, const char* value, const char* why) {
  o.notices.push_back(std::string("# Option ") + flag + " " + value + " ignored: " + why);
}

}  // namespace

const char* ncclTypeName(loomDataType_t dtype) {
  for (const TypeName& t : kTypeNames)
    if (t.dtype == dtype) return t.name;
  return "unknown";
}

const std::vector<loomDataType_t>& ncclTypeOrder() {
  static const std::vector<loomDataType_t> order = [] {
    std::vector<loomDataType_t> all;
    for (int i = 0; i < kNcclTypeCount; ++i) all.push_back(kTypeNames[i].dtype);
    return all;
  }();
  return order;
}

PerfOptions parseOptions(int argc, char** argv, const char* program, bool hasOp, bool hasRoot) {
  (void)hasOp;
  (void)hasRoot;  // as nccl-tests, -o and -r are accepted and unused where they mean nothing
  PerfOptions o;
  static const option kLong[] = {
      {"nthreads", required_argument, nullptr, 't'},     {"ngpus", required_argument, nullptr, 'g'},
      {"minbytes", required_argument, nullptr, 'b'},     {"maxbytes", required_argument, nullptr, 'e'},
      {"stepbytes", required_argument, nullptr, 'i'},    {"stepfactor", required_argument, nullptr, 'f'},
      {"iters", required_argument, nullptr, 'n'},        {"agg_iters", required_argument, nullptr, 'm'},
      {"warmup_iters", required_argument, nullptr, 'w'}, {"run_cycles", required_argument, nullptr, 'N'},
      {"parallel_init", required_argument, nullptr, 'p'}, {"check", required_argument, nullptr, 'c'},
      {"op", required_argument, nullptr, 'o'},           {"datatype", required_argument, nullptr, 'd'},
      {"root", required_argument, nullptr, 'r'},         {"blocking", required_argument, nullptr, 'z'},
      {"stream_null", required_argument, nullptr, 'y'},  {"timeout", required_argument, nullptr, 'T'},
      {"cudagraph", required_argument, nullptr, 'G'},    {"report_cputime", required_argument, nullptr, 'C'},
      {"report_timestamps", required_argument, nullptr, 'S'},
      {"output_file", required_argument, nullptr, 'J'},  {"average", required_argument, nullptr, 'a'},
      {"local_register", required_argument, nullptr, 'R'}, {"cta_policy", required_argument, nullptr, 'x'},
      {"device_implementation", required_argument, nullptr, 'D'},
      {"device_cta_count", required_argument, nullptr, 'V'}, {"memory", required_argument, nullptr, 'M'},
      {"unalign", required_argument, nullptr, 'u'},      {"per_iter_timing", required_argument, nullptr, 'I'},
      {"per_iter_skip", required_argument, nullptr, 'K'}, {"help", no_argument, nullptr, 'h'},
      {"mem", required_argument, nullptr, kOptMem},      {"stall", required_argument, nullptr, kOptStall},
      {"cache_hot", required_argument, nullptr, kOptCacheHot}, {"version", no_argument, nullptr, kOptVersion},
      {nullptr, 0, nullptr, 0}};
  bool factorGiven = false;
  int deviceImpl = 0;
  int c;
  while ((c = getopt_long(argc, argv, "t:g:b:e:i:f:n:m:w:N:p:I:K:c:o:d:r:z:y:T:hG:C:a:R:x:D:V:J:S:M:u:", kLong,
                          nullptr)) != -1) {
    switch (c) {
      case 'b': o.minBytes = size("minbytes", optarg); break;
      case 'e': o.maxBytes = size("maxbytes", optarg); break;
      case 'i': o.stepBytes = size("stepBytes", optarg); break;
      case 'f':
        o.stepFactor = integer("-f", optarg, 0, 1L << 30);
        factorGiven = true;
        break;
      case 'n': o.iters = integer("-n", optarg, 1, 1 << 30); break;
      case 'm': o.aggIters = integer("-m", optarg, 1, 1 << 20); break;
      case 'w': o.warmupIters = integer("-w", optarg, 0, 1 << 30); break;
      case 'N': o.cycles = integer("-N", optarg, 0, 1L << 40); break;
      case 'c': o.check = integer("-c", optarg, 0, 1 << 20); break;
      case 'z': o.blocking = integer("-z", optarg, 0, 3); break;
      case 'a': o.average = integer("-a", optarg, 0, 3); break;
      case 'T': o.timeoutSeconds = integer("-T", optarg, 0, 1 << 24); break;
      case 'C': o.reportCpuTime = integer("-C", optarg, 0, 1) ; break;
      case 'S': o.reportTimestamps = integer("-S", optarg, 0, 1); break;
      case 'u': o.unalign = integer("-u", optarg, 0, 1 << 20); break;
      case 'R': o.registerBuffers = integer("-R", optarg, 0, 2); break;
      case 'J': o.jsonPath = optarg; break;
      case 'r': o.root = integer("-r", optarg, -1, 1 << 24); break;
      case 't':
        if (integer("-t", optarg, 1, 1024) != 1)
          ignored(o, "-t", optarg, "one rank per process (start more with loomrun -n N or mpirun -np N)");
        break;
      case 'g':
        if (integer("-g", optarg, 1, 1024) != 1) ignored(o, "-g", optarg, "GPU-only (Loom ranks use host buffers)");
        break;
      case 'p':
        if (integer("-p", optarg, 0, 1) != 0) ignored(o, "-p", optarg, "one rank per process, nothing to init in parallel");
        break;
      case 'y':
        if (integer("-y", optarg, 0, 1) != 0) ignored(o, "-y", optarg, "GPU-only (CUDA streams)");
        break;
      case 'G':
        if (integer("-G", optarg, 0, 1 << 20) != 0) ignored(o, "-G", optarg, "GPU-only (CUDA graphs)");
        break;
      case 'M':
        if (integer("-M", optarg, 0, 1) != 0) ignored(o, "-M", optarg, "GPU-only (GPU memory usage report)");
        break;
      case 'x': integer("-x", optarg, 0, 2); ignored(o, "-x", optarg, "GPU-only (CTA policy)"); break;
      case 'D':
        deviceImpl = integer("-D", optarg, 0, 1 << 20);
        if (deviceImpl != 0) ignored(o, "-D", optarg, "GPU-only (device API kernels)");
        break;
      case 'V': integer("-V", optarg, 1, 128); ignored(o, "-V", optarg, "GPU-only (device API CTA count)"); break;
      case 'I':
        if (integer("-I", optarg, 0, 1) != 0) ignored(o, "-I", optarg, "per-iteration timing uses CUDA events");
        break;
      case 'K':
        if (integer("-K", optarg, 0, 1 << 30) != 0) ignored(o, "-K", optarg, "needs -I (per-iteration timing)");
        break;
      case 'd': {
        std::string name = optarg;
        o.dtypes.clear();
        if (name == "all") o.dtypes = ncclTypeOrder();
        for (const TypeName& t : kTypeNames)
          if (o.dtypes.empty() && name == t.name) o.dtypes.push_back(t.dtype);
        if (o.dtypes.empty()) {  // as nccl-tests: a notice, then float
          o.notices.push_back("invalid type " + name + ", defaulting to float .. ");
          o.dtypes = {loomFloat32};
        }
        break;
      }
      case 'o': {
        std::string name = optarg;
        o.ops.clear();
        for (const NamedOp& op : kOps)
          if (name == "all" || name == op.name) o.ops.push_back(op);
        if (o.ops.empty()) {  // "mulsum" lands here: Loom has no pre-multiplied sum
          o.notices.push_back("invalid op " + name + ", defaulting to sum .. ");
          o.ops = {kOps[0]};
        }
        break;
      }
      case kOptMem:
        o.memory = optarg;
        if (o.memory == "cuda") badValue("--mem cuda needs a Loom built with device-buffer support");
        if (o.memory != "host") badValue("--mem '" + o.memory + "' is not host or cuda");
        break;
      case kOptCacheHot: o.cacheHot = integer("--cache_hot", optarg, 0, 1) != 0; break;
      case kOptStall: {
        std::string spec = optarg;
        size_t colon = spec.find(':');
        if (colon == std::string::npos) badValue("--stall '" + spec + "' is not RANK:MILLISECONDS");
        o.stallRank = integer("--stall rank", spec.substr(0, colon).c_str(), 0, 1 << 24);
        o.stallMs = integer("--stall milliseconds", spec.substr(colon + 1).c_str(), 0, 3600 * 1000);
        break;
      }
      case 'h': printUsage(program); std::exit(kExitSuccess);
      case kOptVersion:
        std::printf("%s (Loom) %s\n", program, LOOM_VERSION_STRING);
        std::exit(kExitSuccess);
      default:  // getopt has said which option; nccl-tests then prints the usage and exits 0
        std::printf("invalid option '%c'\n", c);
        printUsage(program);
        std::exit(kExitSuccess);
    }
  }
  if (optind < argc) badValue(std::string("unexpected argument '") + argv[optind] + "'");
  if (o.minBytes > o.maxBytes)
    badValue("invalid sizes for 'minbytes' and 'maxbytes': " + std::to_string(o.minBytes) + " > " +
             std::to_string(o.maxBytes));
  // nccl-tests would loop forever on these; refuse them instead.
  if (o.stepFactor > 1 && o.minBytes == 0 && o.maxBytes > 0)
    badValue("-b 0 with -f " + std::to_string(o.stepFactor) + " would never grow: use -b 1 or more, or -i");
  if (o.stepFactor <= 1 && o.stepBytes == 0 && o.minBytes < o.maxBytes)
    badValue(std::string(factorGiven ? "-f 1" : "no -f") + " with -i 0 would never reach -e");
  return o;
}

}  // namespace loom::perf
