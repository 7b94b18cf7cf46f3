// Tiny nccl-tests-style benchmark of Gloo collectives (the Debian libgloo-dev
// C++ library, TCP transport over 127.0.0.1), the Gloo column of perf/compare.
// With GLOO_SOCKET_IFNAME set (PyTorch's name for it) the ranks use that
// interface's address instead, as across hosts (perf/compare-hosts).
//
//   loomrun -n N gloo_collectives -c allreduce|allgather|reducescatter
//           [-b MIN] [-e MAX] [-f FACTOR] [-n ITERS] [-w WARMUP] [-C 0|1] [-s STORE_DIR]
//
// Ranks come from RANK / WORLD_SIZE (loomrun, torchrun) or
// OMPI_COMM_WORLD_RANK / OMPI_COMM_WORLD_SIZE. They meet through a
// gloo::rendezvous::FileStore in STORE_DIR (-s, or $GLOO_STORE_DIR, or
// /tmp/loom-gloo-store-$MASTER_PORT); the directory must be fresh for each job.
//
// float32, sum. Sizes as nccl-tests: allreduce's size is each rank's buffer;
// allgather's and reducescatter's is the whole buffer, the element count
// rounded down to a multiple of the rank count.
//   allreduce      gloo::allreduce (AllreduceOptions, the API PyTorch's gloo
//                  backend uses), out of place, default algorithm (ring).
//   allgather      gloo::allgather (AllgatherOptions), out of place.
//   reducescatter  gloo::ReduceScatterHalvingDoubling<float>, the only
//                  reduce-scatter this Gloo has; it works in place on the
//                  whole buffer (no input copy is timed).
// Options and algorithm objects are built once per size, outside the timing.
//
// Per size: WARMUP untimed calls, a barrier, ITERS timed blocking calls; the
// time per call is averaged over ranks. With -C 1 (default) one extra call
// on known data is checked afterwards, outside the timing.
//
// Output (rank 0): '#' comment lines, then per size:
//   size count time_us algbw busbw wrong
// busbw factors as nccl-tests: 2(n-1)/n for allreduce, (n-1)/n otherwise.
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/config.h>
#include <gloo/math.h>
#include <gloo/reduce_scatter.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

namespace {

enum Coll { ALLREDUCE, ALLGATHER, REDUCESCATTER };

size_t parseSize(const char* s) {
  char* end = nullptr;
  double v = std::strtod(s, &end);
  if (end && *end) {
    switch (*end) {
      case 'k': case 'K': v *= 1024.0; break;
      case 'm': case 'M': v *= 1024.0 * 1024.0; break;
      case 'g': case 'G': v *= 1024.0 * 1024.0 * 1024.0; break;
      default: break;
    }
  }
  return v < 0 ? 0 : static_cast<size_t>(v);
}

int envInt(const char* a, const char* b, int fallback) {
  const char* v = std::getenv(a);
  if (!v) v = std::getenv(b);
  return v ? std::atoi(v) : fallback;
}

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void barrier(const std::shared_ptr<gloo::Context>& ctx) {
  gloo::BarrierOptions opts(ctx);
  gloo::barrier(opts);
}

double sumOverRanks(const std::shared_ptr<gloo::Context>& ctx, double v) {
  double out = 0.0;
  gloo::AllreduceOptions opts(ctx);
  opts.setInput(&v, 1);
  opts.setOutput(&out, 1);
  opts.setReduceFunction(static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<double>));
  gloo::allreduce(opts);
  return out;
}

// One size of one collective: set up once, then call run() repeatedly.
struct Bench {
  Coll coll;
  std::shared_ptr<gloo::Context> ctx;
  size_t count, block;
  float *send, *recv;
  std::unique_ptr<gloo::AllreduceOptions> ar;
  std::unique_ptr<gloo::AllgatherOptions> ag;
  std::unique_ptr<gloo::ReduceScatterHalvingDoubling<float>> rs;

  Bench(Coll c, std::shared_ptr<gloo::Context> cx, size_t n, float* s, float* r)
      : coll(c), ctx(std::move(cx)), count(n), send(s), recv(r) {
    const int nranks = ctx->size;
    block = coll == ALLREDUCE ? count : count / nranks;
    if (coll == ALLREDUCE) {
      ar = std::make_unique<gloo::AllreduceOptions>(ctx);
      ar->setInput(send, count);
      ar->setOutput(recv, count);
      ar->setReduceFunction(static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
    } else if (coll == ALLGATHER) {
      ag = std::make_unique<gloo::AllgatherOptions>(ctx);
      ag->setInput(send + static_cast<size_t>(ctx->rank) * block, block);
      ag->setOutput(recv, count);
    } else {
      // In place on send: rank r's reduced block ends up at the front of send.
      std::vector<int> recvElems(nranks, static_cast<int>(block));
      rs = std::make_unique<gloo::ReduceScatterHalvingDoubling<float>>(
          ctx, std::vector<float*>{send}, static_cast<int>(count), recvElems);
    }
  }

  void run() {
    if (ar) gloo::allreduce(*ar);
    else if (ag) gloo::allgather(*ag);
    else rs->run();
  }
};

void usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s -c allreduce|allgather|reducescatter [-b MIN] [-e MAX] [-f FACTOR]"
               " [-n ITERS] [-w WARMUP] [-C 0|1] [-s STORE_DIR]\n",
               argv0);
}

}  // namespace

int main(int argc, char** argv) {
  int coll = -1, iters = 20, warmup = 5, check = 1;
  size_t minb = 8, maxb = 8, factor = 2;
  std::string storeDir;
  if (const char* d = std::getenv("GLOO_STORE_DIR")) storeDir = d;
  int opt;
  while ((opt = getopt(argc, argv, "c:b:e:f:n:w:C:s:h")) != -1) {
    switch (opt) {
      case 'c':
        if (!std::strcmp(optarg, "allreduce")) coll = ALLREDUCE;
        else if (!std::strcmp(optarg, "allgather")) coll = ALLGATHER;
        else if (!std::strcmp(optarg, "reducescatter") || !std::strcmp(optarg, "reduce_scatter")) coll = REDUCESCATTER;
        break;
      case 'b': minb = parseSize(optarg); break;
      case 'e': maxb = parseSize(optarg); break;
      case 'f': factor = static_cast<size_t>(std::atol(optarg)); break;
      case 'n': iters = std::atoi(optarg); break;
      case 'w': warmup = std::atoi(optarg); break;
      case 'C': check = std::atoi(optarg); break;
      case 's': storeDir = optarg; break;
      default: usage(argv[0]); return opt == 'h' ? 0 : 2;
    }
  }
  if (coll < 0 || factor < 2 || iters < 1 || warmup < 0 || maxb < minb) {
    usage(argv[0]);
    return 2;
  }
  const int rank = envInt("RANK", "OMPI_COMM_WORLD_RANK", -1);
  const int nranks = envInt("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", -1);
  if (rank < 0 || nranks < 1 || rank >= nranks) {
    std::fprintf(stderr, "gloo_collectives: set RANK and WORLD_SIZE (launch with loomrun -n N)\n");
    return 2;
  }
  if (storeDir.empty()) {
    const char* port = std::getenv("MASTER_PORT");
    storeDir = std::string("/tmp/loom-gloo-store-") + (port ? port : "default");
  }
  mkdir(storeDir.c_str(), 0700);  // every rank tries; EEXIST is fine

  try {
    gloo::transport::tcp::attr attr;
    const char* ifname = std::getenv("GLOO_SOCKET_IFNAME");
    if (ifname && *ifname) {
      attr.iface = ifname;
      attr.ai_family = AF_INET;  // not the interface's link-local IPv6 address
    } else {
      attr.hostname = "127.0.0.1";
    }
    auto dev = gloo::transport::tcp::CreateDevice(attr);
    gloo::rendezvous::FileStore store(storeDir);
    auto rctx = std::make_shared<gloo::rendezvous::Context>(rank, nranks);
    rctx->setTimeout(std::chrono::milliseconds(600000));
    rctx->connectFullMesh(store, dev);
    std::shared_ptr<gloo::Context> ctx = rctx;

    const double busfactor =
        coll == ALLREDUCE ? 2.0 * (nranks - 1) / nranks : static_cast<double>(nranks - 1) / nranks;
    const char* names[] = {"gloo::allreduce (ring)", "gloo::allgather",
                           "gloo::ReduceScatterHalvingDoubling (in place)"};
    size_t maxcount = maxb / sizeof(float);
    if (maxcount == 0) maxcount = 1;
    std::vector<float> sendv(maxcount, 0.0f), recvv(maxcount, 0.0f);
    float* send = sendv.data();
    float* recv = recvv.data();

    if (rank == 0) {
      std::printf("# %s, %d ranks, float32%s, blocking calls\n", names[coll], nranks,
                  coll == ALLGATHER ? "" : " sum");
      std::printf("# library: Gloo %d.%d.%d (Debian libgloo-dev), transport tcp (%s)\n", GLOO_VERSION_MAJOR,
                  GLOO_VERSION_MINOR, GLOO_VERSION_PATCH, dev->str().c_str());
      std::printf("# iters %d warmup %d; time averaged over ranks\n", iters, warmup);
      std::printf("# size count time_us algbw busbw wrong\n");
      std::fflush(stdout);
    }

    for (size_t size = minb; size <= maxb; size *= factor) {
      size_t count = size / sizeof(float);
      if (coll != ALLREDUCE) count = count / nranks * nranks;
      if (count == 0) {
        // Gloo rejects empty buffers; nothing to time.
        if (rank == 0) std::printf("# %zu: 0 elements, skipped\n", size);
      } else {
        Bench b(static_cast<Coll>(coll), ctx, count, send, recv);
        for (int i = 0; i < warmup; i++) b.run();
        barrier(ctx);
        double t0 = now();
        for (int i = 0; i < iters; i++) b.run();
        double sec = sumOverRanks(ctx, (now() - t0) / iters) / nranks;

        long long wrong = 0;
        if (check) {
          const size_t block = b.block;
          const size_t in = coll == ALLGATHER ? block : count;
          const size_t base = coll == ALLGATHER ? static_cast<size_t>(rank) * block : 0;
          float* src = coll == ALLGATHER ? send + base : send;
          for (size_t j = 0; j < in; j++) src[j] = static_cast<float>(rank + 1) + static_cast<float>((base + j) % 7);
          b.run();
          const size_t out = coll == REDUCESCATTER ? block : count;
          const size_t obase = coll == REDUCESCATTER ? static_cast<size_t>(rank) * block : 0;
          const float* res = coll == REDUCESCATTER ? send : recv;  // RS leaves rank r's block at the front
          for (size_t j = 0; j < out; j++) {
            size_t g = obase + j;
            float expect = coll == ALLGATHER
                               ? static_cast<float>(g / block + 1) + static_cast<float>(g % 7)
                               : static_cast<float>(nranks) * (nranks + 1) / 2.0f + static_cast<float>(nranks) * (g % 7);
            if (res[j] != expect) wrong++;
          }
          wrong = static_cast<long long>(sumOverRanks(ctx, static_cast<double>(wrong)));
          std::fill(sendv.begin(), sendv.end(), 0.0f);
        }
        if (rank == 0) {
          double algbw = sec > 0 ? static_cast<double>(count * sizeof(float)) / sec / 1e9 : 0.0;
          std::printf("%zu %zu %.3f %.4f %.4f %lld\n", size, count, sec * 1e6, algbw, algbw * busfactor, wrong);
          std::fflush(stdout);
        }
      }
      if (size > SIZE_MAX / factor) break;
    }
    barrier(ctx);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gloo_collectives rank %d: %s\n", rank, e.what());
    return 1;
  }
  return 0;
}
