#include "perf_options.h"

#include <getopt.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace loom::perf {
namespace {

// nccl-tests' names first, then Loom's.
struct TypeName {
  const char* name;
  loomDataType_t dtype;
};
constexpr TypeName kTypeNames[] = {
    {"int8", loomInt8},       {"uint8", loomUint8},    {"int32", loomInt32},     {"uint32", loomUint32},
    {"int64", loomInt64},     {"uint64", loomUint64},  {"half", loomFloat16},    {"bfloat16", loomBfloat16},
    {"float", loomFloat32},   {"double", loomFloat64}, {"float16", loomFloat16}, {"float32", loomFloat32},
    {"float64", loomFloat64}, {"int", loomInt32},
};

[[noreturn]] void usageError(const char* program, const std::string& sentence) {
  std::fprintf(stderr, "%s: %s (see %s -h)\n", program, sentence.c_str(), program);
  std::exit(2);
}

long parseInt(const char* program, const char* flag, const char* text, long lo, long hi) {
  char* end = nullptr;
  errno = 0;
  long value = std::strtol(text, &end, 10);
  if (*text == '\0' || *end != '\0' || errno != 0 || value < lo || value > hi)
    usageError(program, std::string(flag) + " '" + text + "' is not an integer from " + std::to_string(lo) + " to " +
                            std::to_string(hi));
  return value;
}

void printHelp(const char* program, bool hasOp, bool hasRoot) {
  std::printf(
      "Usage: %s [options]   (flags as nccl-tests)\n"
      "  -b, --minbytes SIZE     smallest size (K, M, G suffixes), default 32M\n"
      "  -e, --maxbytes SIZE     largest size, default 32M\n"
      "  -f, --stepfactor N      multiply the size by N each step, default 2\n"
      "  -i, --stepbytes SIZE    add SIZE each step instead\n"
      "  -n, --iters N           timed iterations per size, default 20\n"
      "  -w, --warmup_iters N    untimed iterations first, default 5\n"
      "  -N, --run_cycles N      run the whole sweep N times, default 1\n"
      "  -c, --check 0|1         check results (zero tolerance; avg: 2 ulp), default 1\n"
      "  -z, --blocking 0|1      1: each operation blocks; 0: post all, then wait, default 0\n"
      "  -a, --average 0..3      time reported: 0 rank 0, 1 average, 2 min, 3 max over ranks, default 1\n"
      "  -d, --datatype TYPE     int8 uint8 int32 uint32 int64 uint64 half bfloat16 float double, or all\n"
      "%s%s"
      "  -T, --timeout SECONDS   abort and fail, naming the late ranks, if an operation takes longer\n"
      "  -u, --unalign BYTES     offset buffers by BYTES from their allocation\n"
      "  -R, --local_register 0|1|2  1 or 2: buffers from loomMemAlloc, registered with loomCommRegister\n"
      "                          (single-copy collectives), default 0\n"
      "  -J, --output_file FILE  also write the results as JSON\n"
      "      --mem host|cuda     buffer memory (host only in this build)\n"
      "      --stall RANK:MS     RANK sleeps MS before its first collective (to see -T name it)\n"
      "Launch with loomrun -n N, mpirun -np N, or torchrun-style variables.\n",
      program, hasOp ? "  -o, --op OP             sum prod max min avg, or all\n" : "",
      hasRoot ? "  -r, --root N            root rank, or -1 for all roots, default 0\n" : "");
}

}  // namespace

size_t parseSize(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || end == text.c_str() || errno != 0 || text[0] == '-')
    throw std::invalid_argument("'" + text + "' is not a size");
  std::string suffix(end);
  unsigned long long scale = 1;
  if (suffix == "K" || suffix == "k")
    scale = 1ULL << 10;
  else if (suffix == "M" || suffix == "m")
    scale = 1ULL << 20;
  else if (suffix == "G" || suffix == "g")
    scale = 1ULL << 30;
  else if (!suffix.empty())
    throw std::invalid_argument("'" + text + "' has an unknown suffix (use K, M or G)");
  if (value > (1ULL << 40) / scale) throw std::invalid_argument("'" + text + "' is larger than 1 TiB");
  return static_cast<size_t>(value * scale);
}

const char* ncclTypeName(loomDataType_t dtype) {
  for (const TypeName& t : kTypeNames)
    if (t.dtype == dtype) return t.name;
  return "unknown";
}

PerfOptions parseOptions(int argc, char** argv, const char* program, bool hasOp, bool hasRoot) {
  PerfOptions o;
  static const option kLong[] = {{"minbytes", required_argument, nullptr, 'b'},
                                 {"maxbytes", required_argument, nullptr, 'e'},
                                 {"stepfactor", required_argument, nullptr, 'f'},
                                 {"stepbytes", required_argument, nullptr, 'i'},
                                 {"iters", required_argument, nullptr, 'n'},
                                 {"warmup_iters", required_argument, nullptr, 'w'},
                                 {"check", required_argument, nullptr, 'c'},
                                 {"blocking", required_argument, nullptr, 'z'},
                                 {"average", required_argument, nullptr, 'a'},
                                 {"datatype", required_argument, nullptr, 'd'},
                                 {"op", required_argument, nullptr, 'o'},
                                 {"root", required_argument, nullptr, 'r'},
                                 {"timeout", required_argument, nullptr, 'T'},
                                 {"run_cycles", required_argument, nullptr, 'N'},
                                 {"unalign", required_argument, nullptr, 'u'},
                                 {"local_register", required_argument, nullptr, 'R'},
                                 {"output_file", required_argument, nullptr, 'J'},
                                 {"mem", required_argument, nullptr, 'M'},
                                 {"stall", required_argument, nullptr, 'S'},
                                 {"help", no_argument, nullptr, 'h'},
                                 {nullptr, 0, nullptr, 0}};
  int c;
  bool stepBytesGiven = false;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":b:e:f:i:n:w:c:z:a:d:o:r:T:N:u:R:J:h", kLong, nullptr)) != -1) {
    try {
      switch (c) {
        case 'b': o.minBytes = parseSize(optarg); break;
        case 'e': o.maxBytes = parseSize(optarg); break;
        case 'f': o.stepFactor = parseInt(program, "-f", optarg, 1, 1 << 20); break;
        case 'i':
          o.stepBytes = parseSize(optarg);
          stepBytesGiven = true;
          break;
        case 'n': o.iters = parseInt(program, "-n", optarg, 1, 1 << 24); break;
        case 'w': o.warmupIters = parseInt(program, "-w", optarg, 0, 1 << 24); break;
        case 'c': o.check = parseInt(program, "-c", optarg, 0, 1); break;
        case 'z': o.blocking = parseInt(program, "-z", optarg, 0, 1); break;
        case 'a': o.average = parseInt(program, "-a", optarg, 0, 3); break;
        case 'T': o.timeoutSeconds = parseInt(program, "-T", optarg, 0, 1 << 20); break;
        case 'N': o.cycles = parseInt(program, "-N", optarg, 1, 1 << 20); break;
        case 'u': o.unalign = parseInt(program, "-u", optarg, 0, 4095); break;
        case 'R': o.registerBuffers = parseInt(program, "-R", optarg, 0, 2); break;
        case 'J': o.jsonPath = optarg; break;
        case 'S': {
          std::string spec = optarg;
          size_t colon = spec.find(':');
          if (colon == std::string::npos) usageError(program, "--stall '" + spec + "' is not RANK:MILLISECONDS");
          o.stallRank = parseInt(program, "--stall rank", spec.substr(0, colon).c_str(), 0, 1 << 24);
          o.stallMs = parseInt(program, "--stall milliseconds", spec.substr(colon + 1).c_str(), 0, 3600 * 1000);
          break;
        }
        case 'M':
          o.memory = optarg;
          if (o.memory == "cuda") usageError(program, "--mem cuda needs a Loom built with device-buffer support");
          if (o.memory != "host") usageError(program, "--mem '" + o.memory + "' is not host or cuda");
          break;
        case 'r':
          if (!hasRoot) usageError(program, "-r: this collective has no root");
          o.root = parseInt(program, "-r", optarg, -1, 1 << 24);
          break;
        case 'd': {
          std::string name = optarg;
          o.dtypes.clear();
          for (int d = 0; d < LOOM_NUM_DTYPES; ++d)
            if (name == "all" || name == ncclTypeName(static_cast<loomDataType_t>(d)))
              o.dtypes.push_back(static_cast<loomDataType_t>(d));
          for (const TypeName& t : kTypeNames)
            if (o.dtypes.empty() && name == t.name) o.dtypes.push_back(t.dtype);
          if (o.dtypes.empty()) usageError(program, "-d '" + name + "' is not a data type (try -d all)");
          break;
        }
        case 'o': {
          if (!hasOp) usageError(program, "-o: this collective does not reduce");
          std::string name = optarg;
          o.ops.clear();
          for (int op = 0; op < LOOM_NUM_OPS; ++op)
            if (name == "all" || name == loomOpName(static_cast<loomRedOp_t>(op)))
              o.ops.push_back(static_cast<loomRedOp_t>(op));
          if (o.ops.empty()) usageError(program, "-o '" + name + "' is not sum, prod, max, min, avg or all");
          break;
        }
        case 'h': printHelp(program, hasOp, hasRoot); std::exit(0);
        case ':': usageError(program, std::string("option ") + argv[optind - 1] + " needs a value");
        default: usageError(program, std::string("unknown option ") + argv[optind - 1]);
      }
    } catch (const std::invalid_argument& e) {
      usageError(program, std::string("-") + static_cast<char>(c) + ": " + e.what());
    }
  }
  if (optind < argc) usageError(program, std::string("unexpected argument '") + argv[optind] + "'");
  if (o.minBytes > o.maxBytes) usageError(program, "-b is larger than -e");
  if (!stepBytesGiven) o.stepBytes = 0;
  if (stepBytesGiven && o.stepBytes == 0) usageError(program, "-i 0 would never reach -e");
  if (!stepBytesGiven && o.stepFactor < 2 && o.minBytes != o.maxBytes)
    usageError(program, "-f 1 without -i would never reach -e");
  return o;
}

}  // namespace loom::perf
