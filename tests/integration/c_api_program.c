/* A program written only against include/loom/loom.h, in C99, as a
 * framework would link Loom. Launched as `loomrun -n 5 c_api_program`, it
 * runs every collective for every dtype and op and checks each result
 * exactly (avg in floating types: within 2 ulp, since the division rounds).
 * Exit status 0 only if every value was right. */
#include <loom/loom.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define CHECK_OK(call, comm)                                                                              \
  do {                                                                                                    \
    loomResult_t rc_ = (call);                                                                            \
    if (rc_ != loomSuccess) {                                                                             \
      fprintf(stderr, "%s failed: %s: %s\n", #call, loomGetErrorString(rc_), loomCommGetLastError(comm)); \
      exit(1);                                                                                            \
    }                                                                                                     \
  } while (0)

/* Small integers only: exact in every dtype. */
static uint16_t halfFromInt(int v) {
  uint16_t sign = v < 0 ? 0x8000 : 0;
  unsigned m = (unsigned)(v < 0 ? -v : v);
  if (m == 0) return sign;
  int e = 0;
  while ((m >> e) > 1) e++;
  uint16_t mantissa = (uint16_t)((m << (10 - e)) & 0x3ff);
  return (uint16_t)(sign | ((e + 15) << 10) | mantissa);
}

static double halfToDouble(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v = e == 0 ? ldexp(m, -24) : ldexp(1024 + m, e - 25);
  return (h & 0x8000) ? -v : v;
}

static void put(loomDataType_t t, void* base, size_t i, double v) {
  float f = (float)v;
  uint32_t bits;
  switch (t) {
    case loomInt8: ((int8_t*)base)[i] = (int8_t)v; break;
    case loomUint8: ((uint8_t*)base)[i] = (uint8_t)v; break;
    case loomInt32: ((int32_t*)base)[i] = (int32_t)v; break;
    case loomUint32: ((uint32_t*)base)[i] = (uint32_t)v; break;
    case loomInt64: ((int64_t*)base)[i] = (int64_t)v; break;
    case loomUint64: ((uint64_t*)base)[i] = (uint64_t)v; break;
    case loomFloat16: ((uint16_t*)base)[i] = halfFromInt((int)v); break;
    case loomBfloat16:
      memcpy(&bits, &f, 4);
      ((uint16_t*)base)[i] = (uint16_t)(bits >> 16);
      break;
    case loomFloat32: ((float*)base)[i] = f; break;
    case loomFloat64: ((double*)base)[i] = v; break;
  }
}

static double get(loomDataType_t t, const void* base, size_t i) {
  uint32_t bits;
  float f;
  switch (t) {
    case loomInt8: return ((const int8_t*)base)[i];
    case loomUint8: return ((const uint8_t*)base)[i];
    case loomInt32: return ((const int32_t*)base)[i];
    case loomUint32: return ((const uint32_t*)base)[i];
    case loomInt64: return (double)((const int64_t*)base)[i];
    case loomUint64: return (double)((const uint64_t*)base)[i];
    case loomFloat16: return halfToDouble(((const uint16_t*)base)[i]);
    case loomBfloat16:
      bits = (uint32_t)((const uint16_t*)base)[i] << 16;
      memcpy(&f, &bits, 4);
      return f;
    case loomFloat32: return ((const float*)base)[i];
    case loomFloat64: return ((const double*)base)[i];
  }
  return 0;
}

static int isUnsigned(loomDataType_t t) {
  return t == loomUint8 || t == loomUint32 || t == loomUint64;
}
static int isFloat(loomDataType_t t) {
  return t >= loomFloat16;
}

static double input(loomDataType_t t, loomRedOp_t op, int rank, size_t i) {
  int v;
  if (op == loomProd) return ((size_t)rank + i) % 4 == 0 ? 2 : 1;
  v = (int)((rank * 11 + i * 5) % 9);
  return isUnsigned(t) ? v : v - 4;
}

static double reduced(loomDataType_t t, loomRedOp_t op, int nranks, size_t i) {
  double acc = input(t, op, 0, i);
  int r;
  for (r = 1; r < nranks; ++r) {
    double v = input(t, op, r, i);
    if (op == loomProd)
      acc *= v;
    else if (op == loomMax)
      acc = v > acc ? v : acc;
    else if (op == loomMin)
      acc = v < acc ? v : acc;
    else
      acc += v;
  }
  if (op == loomAvg) acc = isFloat(t) ? acc / nranks : trunc(acc / nranks);
  return acc;
}

static int mantissaBits(loomDataType_t t) {
  return t == loomFloat16 ? 10 : t == loomBfloat16 ? 7 : t == loomFloat32 ? 23 : 52;
}

static void expectValue(const char* what, loomDataType_t t, loomRedOp_t op, size_t i, double expected, double actual) {
  double tolerance = 0;
  if (op == loomAvg && isFloat(t) && expected != 0) tolerance = 2 * ldexp(1.0, ilogb(expected) - mantissaBits(t));
  if (fabs(actual - expected) <= tolerance) return;
  if (failures++ < 20)
    fprintf(stderr, "%s %s %s element %zu: got %g, expected %g\n", what, loomTypeName(t), loomOpName(op), i, actual,
            expected);
}

static void countCall(loomRequest_t request, loomResult_t result, void* calls) {
  (void)request;
  if (result == loomSuccess) ++*(int*)calls;
}

int main(void) {
  loomComm_t comm;
  int rank, nranks, t, o;
  const size_t count = 1031; /* prime: uneven blocks, several per rank */
  loomResult_t rc = loomCommInitFromEnv(&comm, NULL);
  if (rc != loomSuccess) {
    fprintf(stderr, "loomCommInitFromEnv: %s: %s\n", loomGetErrorString(rc), loomGetLastError());
    return 1;
  }
  loomCommUserRank(comm, &rank);
  loomCommCount(comm, &nranks);

  for (t = 0; t < LOOM_NUM_DTYPES; ++t) {
    loomDataType_t dtype = (loomDataType_t)t;
    size_t size = loomTypeSize(dtype), i;
    unsigned char* send = malloc(size * count * nranks);
    unsigned char* recv = malloc(size * count * nranks);
    loomRequest_t request;
    for (o = 0; o < LOOM_NUM_OPS; ++o) {
      loomRedOp_t op = (loomRedOp_t)o;
      for (i = 0; i < count * nranks; ++i) put(dtype, send, i, input(dtype, op, rank, i));
      /* AllReduce, async then waited. */
      CHECK_OK(loomAllReduce(send, recv, count, dtype, op, comm, NULL, &request), comm);
      CHECK_OK(loomWait(request, -1), comm);
      loomRequestFree(request);
      for (i = 0; i < count; ++i)
        expectValue("AllReduce", dtype, op, i, reduced(dtype, op, nranks, i), get(dtype, recv, i));
      /* ReduceScatter: this rank's block of the reduced whole. */
      CHECK_OK(loomReduceScatter(send, recv, count, dtype, op, comm, NULL, NULL), comm);
      for (i = 0; i < count; ++i)
        expectValue("ReduceScatter", dtype, op, i, reduced(dtype, op, nranks, rank * count + i), get(dtype, recv, i));
      /* Reduce to the last rank. */
      CHECK_OK(loomReduce(send, recv, count, dtype, op, nranks - 1, comm, NULL, NULL), comm);
      if (rank == nranks - 1)
        for (i = 0; i < count; ++i)
          expectValue("Reduce", dtype, op, i, reduced(dtype, op, nranks, i), get(dtype, recv, i));
    }
    /* Data movement, with sum's inputs. */
    for (i = 0; i < count * nranks; ++i) put(dtype, send, i, input(dtype, loomSum, rank, i));
    CHECK_OK(loomAllGather(send, recv, count, dtype, comm, NULL, NULL), comm);
    for (i = 0; i < count * nranks; ++i)
      expectValue("AllGather", dtype, loomSum, i, input(dtype, loomSum, (int)(i / count), i % count),
                  get(dtype, recv, i));
    CHECK_OK(loomBroadcast(send, recv, count, dtype, 1 % nranks, comm, NULL, NULL), comm);
    for (i = 0; i < count; ++i)
      expectValue("Broadcast", dtype, loomSum, i, input(dtype, loomSum, 1 % nranks, i), get(dtype, recv, i));
    CHECK_OK(loomAllToAll(send, recv, count, dtype, comm, NULL, NULL), comm);
    for (i = 0; i < count * nranks; ++i)
      expectValue("AllToAll", dtype, loomSum, i, input(dtype, loomSum, (int)(i / count), rank * count + i % count),
                  get(dtype, recv, i));
    /* Gather to the last rank, Scatter from the first. */
    CHECK_OK(loomGather(send, rank == nranks - 1 ? recv : NULL, count, dtype, nranks - 1, comm, NULL, NULL), comm);
    if (rank == nranks - 1)
      for (i = 0; i < count * nranks; ++i)
        expectValue("Gather", dtype, loomSum, i, input(dtype, loomSum, (int)(i / count), i % count),
                    get(dtype, recv, i));
    CHECK_OK(loomScatter(rank == 0 ? send : NULL, recv, count, dtype, 0, comm, NULL, NULL), comm);
    for (i = 0; i < count; ++i)
      expectValue("Scatter", dtype, loomSum, i, input(dtype, loomSum, 0, rank * count + i), get(dtype, recv, i));
    /* AllToAllv: rank q's block for this rank is q + 1 elements long, at the
     * start of this rank's block of q's send buffer. */
    {
      size_t* sendCounts = malloc(sizeof(size_t) * 4 * nranks);
      size_t *sdispls = sendCounts + nranks, *recvCounts = sdispls + nranks, *rdispls = recvCounts + nranks;
      int q;
      for (q = 0; q < nranks; ++q) {
        sendCounts[q] = (size_t)rank + 1;
        sdispls[q] = (size_t)q * count;
        recvCounts[q] = (size_t)q + 1;
        rdispls[q] = (size_t)q * count;
      }
      CHECK_OK(loomAllToAllv(send, sendCounts, sdispls, recv, recvCounts, rdispls, dtype, comm, NULL, NULL), comm);
      for (q = 0; q < nranks; ++q)
        for (i = 0; i <= (size_t)q; ++i)
          expectValue("AllToAllv", dtype, loomSum, i, input(dtype, loomSum, q, rank * count + i),
                      get(dtype, recv, q * count + i));
      free(sendCounts);
    }
    if (nranks > 1) {
      int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
      if (rank % 2 == 0) {
        CHECK_OK(loomSend(send, count, dtype, next, comm, NULL, NULL), comm);
        CHECK_OK(loomRecv(recv, count, dtype, prev, comm, NULL, NULL), comm);
      } else {
        CHECK_OK(loomRecv(recv, count, dtype, prev, comm, NULL, NULL), comm);
        CHECK_OK(loomSend(send, count, dtype, next, comm, NULL, NULL), comm);
      }
      for (i = 0; i < count; ++i)
        expectValue("SendRecv", dtype, loomSum, i, input(dtype, loomSum, prev, i), get(dtype, recv, i));
      /* The same ring with every rank's Recv first, blocking calls in a group. */
      memset(recv, 0, size * count);
      CHECK_OK(loomGroupStart(), comm);
      CHECK_OK(loomRecv(recv, count, dtype, prev, comm, NULL, NULL), comm);
      CHECK_OK(loomSend(send, count, dtype, next, comm, NULL, NULL), comm);
      CHECK_OK(loomGroupEnd(), comm);
      for (i = 0; i < count; ++i)
        expectValue("grouped SendRecv", dtype, loomSum, i, input(dtype, loomSum, prev, i), get(dtype, recv, i));
      /* Tagged: tag 9 sent before tag 4, received after it, blocking. */
      {
        loomRequest_t sent[2];
        memset(recv, 0, size * count);
        CHECK_OK(loomSendTagged(send, count, dtype, next, 9, comm, NULL, &sent[0]), comm);
        CHECK_OK(loomSendTagged(send, count > 0 ? 1 : 0, dtype, next, 4, comm, NULL, &sent[1]), comm);
        CHECK_OK(loomRecvTagged(recv, count > 0 ? 1 : 0, dtype, prev, 4, comm, NULL, NULL), comm);
        if (count > 0)
          expectValue("tag 4 Recv", dtype, loomSum, 0, input(dtype, loomSum, prev, 0), get(dtype, recv, 0));
        CHECK_OK(loomRecvTagged(recv, count, dtype, prev, 9, comm, NULL, NULL), comm);
        for (i = 0; i < count; ++i)
          expectValue("tag 9 Recv", dtype, loomSum, i, input(dtype, loomSum, prev, i), get(dtype, recv, i));
        CHECK_OK(loomWait(sent[0], -1), comm);
        CHECK_OK(loomWait(sent[1], -1), comm);
        loomRequestFree(sent[0]);
        loomRequestFree(sent[1]);
      }
    }
    free(send);
    free(recv);
  }
  {
    /* A completion callback, and a healthy communicator's async error. */
    loomRequest_t request;
    loomResult_t asyncError = loomInternalError;
    int calls = 0;
    CHECK_OK(loomBarrier(comm, &request), comm);
    CHECK_OK(loomWait(request, -1), comm);
    CHECK_OK(loomRequestSetCallback(request, countCall, &calls), comm);
    if (calls != 1) {
      fprintf(stderr, "rank %d: the callback of an ended request ran %d times, not once\n", rank, calls);
      ++failures;
    }
    loomRequestFree(request);
    CHECK_OK(loomCommGetAsyncError(comm, &asyncError), comm);
    if (asyncError != loomSuccess) {
      fprintf(stderr, "rank %d: a healthy communicator's async error is %s\n", rank, loomGetErrorString(asyncError));
      ++failures;
    }
  }
  CHECK_OK(loomBarrier(comm, NULL), comm);
  CHECK_OK(loomCommDestroy(comm), comm);
  if (failures)
    fprintf(stderr, "rank %d: %d wrong values\n", rank, failures);
  else if (rank == 0)
    printf("c_api_program: %d ranks, every collective x dtype x op exact\n", nranks);
  return failures ? 1 : 0;
}
