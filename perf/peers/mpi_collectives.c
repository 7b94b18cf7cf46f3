/* Tiny nccl-tests-style benchmark of MPI collectives, the Open MPI column of
 * perf/compare.
 *
 *   mpirun -np N mpi_collectives -c allreduce|allgather|reducescatter
 *          [-b MIN] [-e MAX] [-f FACTOR] [-n ITERS] [-w WARMUP] [-C 0|1]
 *
 * float32, sum. Sizes as nccl-tests: for allreduce the size is each rank's
 * buffer; for allgather and reducescatter it is the whole (gathered /
 * unscattered) buffer, and the element count is rounded down to a multiple
 * of the rank count. Out of place (separate send and receive buffers).
 *
 * Per size: WARMUP untimed calls, a barrier, ITERS timed blocking calls; the
 * time per call is averaged over ranks (as nccl-tests' default -a 1).
 * With -C 1 (default) one extra call on known data is checked afterwards
 * (outside the timing) and the number of wrong elements is printed.
 *
 * Output (rank 0): comment lines start with '#', then one line per size:
 *   size count time_us algbw busbw wrong
 * algbw = size / time (GB/s, 1e9); busbw = algbw * 2(n-1)/n for allreduce,
 * (n-1)/n for allgather and reducescatter, as nccl-tests.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { ALLREDUCE, ALLGATHER, REDUCESCATTER };

static size_t parse_size(const char *s) {
  char *end = NULL;
  double v = strtod(s, &end);
  if (end && *end) {
    switch (*end) {
      case 'k': case 'K': v *= 1024.0; break;
      case 'm': case 'M': v *= 1024.0 * 1024.0; break;
      case 'g': case 'G': v *= 1024.0 * 1024.0 * 1024.0; break;
      default: break;
    }
  }
  return v < 0 ? 0 : (size_t)v;
}

static void usage(const char *argv0) {
  fprintf(stderr,
          "usage: %s -c allreduce|allgather|reducescatter [-b MIN] [-e MAX] [-f FACTOR]"
          " [-n ITERS] [-w WARMUP] [-C 0|1]\n",
          argv0);
}

static void run(int coll, size_t count, float *send, float *recv, MPI_Comm comm, int nranks) {
  switch (coll) {
    case ALLREDUCE:
      MPI_Allreduce(send, recv, (int)count, MPI_FLOAT, MPI_SUM, comm);
      break;
    case ALLGATHER:
      MPI_Allgather(send, (int)(count / nranks), MPI_FLOAT, recv, (int)(count / nranks), MPI_FLOAT, comm);
      break;
    default:
      MPI_Reduce_scatter_block(send, recv, (int)(count / nranks), MPI_FLOAT, MPI_SUM, comm);
      break;
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);

  int coll = -1, iters = 20, warmup = 5, check = 1;
  size_t minb = 8, maxb = 8, factor = 2;
  int opt;
  while ((opt = getopt(argc, argv, "c:b:e:f:n:w:C:h")) != -1) {
    switch (opt) {
      case 'c':
        if (!strcmp(optarg, "allreduce")) coll = ALLREDUCE;
        else if (!strcmp(optarg, "allgather")) coll = ALLGATHER;
        else if (!strcmp(optarg, "reducescatter") || !strcmp(optarg, "reduce_scatter")) coll = REDUCESCATTER;
        break;
      case 'b': minb = parse_size(optarg); break;
      case 'e': maxb = parse_size(optarg); break;
      case 'f': factor = (size_t)atol(optarg); break;
      case 'n': iters = atoi(optarg); break;
      case 'w': warmup = atoi(optarg); break;
      case 'C': check = atoi(optarg); break;
      default:
        if (rank == 0) usage(argv[0]);
        MPI_Finalize();
        return opt == 'h' ? 0 : 2;
    }
  }
  if (coll < 0 || factor < 2 || iters < 1 || warmup < 0 || maxb < minb) {
    if (rank == 0) usage(argv[0]);
    MPI_Finalize();
    return 2;
  }
  const char *names[] = {"MPI_Allreduce", "MPI_Allgather", "MPI_Reduce_scatter_block"};
  const double busfactor = coll == ALLREDUCE ? 2.0 * (nranks - 1) / nranks : (double)(nranks - 1) / nranks;

  /* Buffers sized for the largest count: send and recv are each the whole
   * buffer, which covers allreduce and the bigger side of the others. */
  size_t maxcount = maxb / sizeof(float);
  if (maxcount == 0) maxcount = 1;
  float *send = NULL, *recv = NULL;
  if (posix_memalign((void **)&send, 4096, maxcount * sizeof(float)) ||
      posix_memalign((void **)&recv, 4096, maxcount * sizeof(float))) {
    fprintf(stderr, "rank %d: cannot allocate 2 x %zu bytes\n", rank, maxcount * sizeof(float));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  memset(send, 0, maxcount * sizeof(float));
  memset(recv, 0, maxcount * sizeof(float));

  if (rank == 0) {
    int len = 0;
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_Get_library_version(version, &len);
    char *nl = strchr(version, '\n');
    if (nl) *nl = '\0';
    printf("# %s, %d ranks, float32%s, out of place, blocking calls\n", names[coll], nranks,
           coll == ALLGATHER ? "" : " sum");
    printf("# library: %s\n", version);
    printf("# iters %d warmup %d; time averaged over ranks\n", iters, warmup);
    printf("# size count time_us algbw busbw wrong\n");
    fflush(stdout);
  }

  for (size_t size = minb; size <= maxb; size *= factor) {
    size_t count = size / sizeof(float);
    if (coll != ALLREDUCE) count = count / (size_t)nranks * (size_t)nranks;
    size_t block = coll == ALLREDUCE ? count : count / (size_t)nranks;

    for (int i = 0; i < warmup; i++) run(coll, count, send, recv, MPI_COMM_WORLD, nranks);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) run(coll, count, send, recv, MPI_COMM_WORLD, nranks);
    double local = (MPI_Wtime() - t0) / iters, sum = 0.0;
    MPI_Allreduce(&local, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double sec = sum / nranks;

    long long wrong = 0;
    if (check) {
      /* rank r contributes (r + 1) + (j % 7) at global element j. */
      size_t in = coll == ALLGATHER ? block : count;
      size_t base = coll == ALLGATHER ? (size_t)rank * block : 0;
      for (size_t j = 0; j < in; j++) send[j] = (float)(rank + 1) + (float)((base + j) % 7);
      run(coll, count, send, recv, MPI_COMM_WORLD, nranks);
      size_t out = coll == REDUCESCATTER ? block : count;
      size_t obase = coll == REDUCESCATTER ? (size_t)rank * block : 0;
      for (size_t j = 0; j < out; j++) {
        size_t g = obase + j;
        float expect;
        if (coll == ALLGATHER) {
          int owner = block ? (int)(g / block) : 0;
          expect = (float)(owner + 1) + (float)(g % 7);
        } else {
          expect = (float)nranks * (float)(nranks + 1) / 2.0f + (float)nranks * (float)(g % 7);
        }
        if (recv[j] != expect) wrong++;
      }
      long long total = 0;
      MPI_Allreduce(&wrong, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
      wrong = total;
      memset(send, 0, maxcount * sizeof(float));
    }

    if (rank == 0) {
      double algbw = sec > 0 ? (double)(count * sizeof(float)) / sec / 1e9 : 0.0;
      printf("%zu %zu %.3f %.4f %.4f %lld\n", size, count, sec * 1e6, algbw, algbw * busfactor, wrong);
      fflush(stdout);
    }
    if (size > SIZE_MAX / factor) break;
  }
  free(send);
  free(recv);
  MPI_Finalize();
  return 0;
}
