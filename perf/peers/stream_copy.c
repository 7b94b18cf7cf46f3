/* STREAM-style copy bandwidth probe using every online CPU.
 *
 * One pthread per online CPU, each copying its contiguous share of two large
 * arrays (a -> c, as STREAM's "Copy" kernel) after touching its own share
 * first (so pages land near the thread that uses them). Bandwidth counts the
 * bytes read plus the bytes written, as STREAM does (2 x array bytes per
 * pass; write-allocate traffic is not counted).
 *
 * Two kernels are timed, interleaved trial by trial:
 *   loop    c[j] = a[j] over doubles, as STREAM's Copy (-O2 vectorises it);
 *   memcpy  glibc memcpy of each thread's share (may use non-temporal stores,
 *           which avoids write-allocate reads and is often faster).
 * The reported "copy" figure is the better of the two medians, since it is
 * used as an upper bound on what a collective can move through memory.
 *
 * Usage: stream_copy [-m MIB_PER_ARRAY] [-t TRIALS] [-p THREADS]
 * Output (one "key value" per line, then a summary line):
 *   threads 2
 *   array_mib 256
 *   trial loop 12.34      (GB/s, one line per trial and kernel)
 *   trial memcpy 13.45
 *   median_loop_GBps 12.34
 *   median_memcpy_GBps 13.45
 *   copy_GBps 13.45
 * GB = 1e9 bytes, as STREAM and nccl-tests use.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct {
  int id;
  int nthreads;
  double *a, *c;
  size_t n;            /* elements per array */
  pthread_barrier_t *start, *stop;
  volatile int *kernel; /* 0 loop, 1 memcpy, -1 quit */
} worker_t;

static void share(const worker_t *w, size_t *lo, size_t *hi) {
  size_t per = (w->n + (size_t)w->nthreads - 1) / (size_t)w->nthreads;
  *lo = per * (size_t)w->id;
  *hi = *lo + per;
  if (*lo > w->n) *lo = w->n;
  if (*hi > w->n) *hi = w->n;
}

static void *worker(void *arg) {
  worker_t *w = (worker_t *)arg;
  size_t lo, hi;
  share(w, &lo, &hi);
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(w->id % CPU_SETSIZE, &set);
  /* Best effort: pinning may be refused in a container; the probe still works. */
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  for (size_t j = lo; j < hi; j++) {
    w->a[j] = 1.0 + (double)(j & 7);
    w->c[j] = 0.0;
  }
  for (;;) {
    pthread_barrier_wait(w->start);
    int k = *w->kernel;
    if (k < 0) break;
    if (k == 0) {
      double *restrict c = w->c;
      const double *restrict a = w->a;
      for (size_t j = lo; j < hi; j++) c[j] = a[j];
    } else {
      memcpy(w->c + lo, w->a + lo, (hi - lo) * sizeof(double));
    }
    pthread_barrier_wait(w->stop);
  }
  return NULL;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof(double), cmp);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char **argv) {
  long mib = 256;
  int trials = 10;
  long nthreads = sysconf(_SC_NPROCESSORS_ONLN);
  int opt;
  while ((opt = getopt(argc, argv, "m:t:p:h")) != -1) {
    switch (opt) {
      case 'm': mib = atol(optarg); break;
      case 't': trials = atoi(optarg); break;
      case 'p': nthreads = atol(optarg); break;
      default:
        fprintf(stderr, "usage: %s [-m MIB_PER_ARRAY] [-t TRIALS] [-p THREADS]\n", argv[0]);
        return opt == 'h' ? 0 : 2;
    }
  }
  if (mib < 1 || trials < 1 || nthreads < 1) {
    fprintf(stderr, "stream_copy: -m, -t and -p must be positive\n");
    return 2;
  }
  size_t bytes = (size_t)mib << 20;
  size_t n = bytes / sizeof(double);
  double *a = NULL, *c = NULL;
  if (posix_memalign((void **)&a, 4096, bytes) || posix_memalign((void **)&c, 4096, bytes)) {
    fprintf(stderr, "stream_copy: cannot allocate 2 x %ld MiB\n", mib);
    return 1;
  }
  /* Write both arrays first: never-written memory reads as the kernel's one
   * shared zero page, which stays in cache and inflates "bandwidth" 2-4x. */
  for (size_t i = 0; i < n; i++) {
    a[i] = (double)i;
    c[i] = 0.0;
  }
  pthread_barrier_t start, stop;
  pthread_barrier_init(&start, NULL, (unsigned)nthreads + 1);
  pthread_barrier_init(&stop, NULL, (unsigned)nthreads + 1);
  volatile int kernel = 0;
  pthread_t *tids = calloc((size_t)nthreads, sizeof(pthread_t));
  worker_t *ws = calloc((size_t)nthreads, sizeof(worker_t));
  for (long i = 0; i < nthreads; i++) {
    ws[i] = (worker_t){(int)i, (int)nthreads, a, c, n, &start, &stop, &kernel};
    if (pthread_create(&tids[i], NULL, worker, &ws[i])) {
      fprintf(stderr, "stream_copy: pthread_create failed\n");
      return 1;
    }
  }
  printf("threads %ld\narray_mib %ld\n", nthreads, mib);
  double *loop = calloc((size_t)trials, sizeof(double));
  double *mc = calloc((size_t)trials, sizeof(double));
  /* One untimed pass of each kernel first (page faults, frequency ramp). */
  for (int t = -1; t < trials; t++) {
    for (int k = 0; k < 2; k++) {
      kernel = k;
      pthread_barrier_wait(&start);
      double t0 = now();
      pthread_barrier_wait(&stop);
      double dt = now() - t0;
      double gbps = 2.0 * (double)(n * sizeof(double)) / dt / 1e9;
      if (t < 0) continue;
      (k == 0 ? loop : mc)[t] = gbps;
      printf("trial %s %.2f\n", k == 0 ? "loop" : "memcpy", gbps);
    }
  }
  kernel = -1;
  pthread_barrier_wait(&start);
  for (long i = 0; i < nthreads; i++) pthread_join(tids[i], NULL);
  /* Keep the copies observable so they cannot be optimised away. */
  if (c[n / 2] != a[n / 2]) {
    fprintf(stderr, "stream_copy: copy check failed\n");
    return 1;
  }
  double ml = median(loop, trials), mm = median(mc, trials);
  printf("median_loop_GBps %.2f\nmedian_memcpy_GBps %.2f\ncopy_GBps %.2f\n", ml, mm, ml > mm ? ml : mm);
  free(loop);
  free(mc);
  free(tids);
  free(ws);
  free(a);
  free(c);
  return 0;
}
