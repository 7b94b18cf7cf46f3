/* Loom: topology-aware collective communication.
 *
 * The C API is the stable surface frameworks link against. Every call returns
 * a loomResult_t; loomCommGetLastError() gives the full sentence of the last
 * failure on a communicator (loomGetLastError() for calls without one).
 *
 * Semantics follow NCCL where NCCL has them: counts are in elements,
 * AllGather is in place when sendbuf == recvbuf + rank*sendcount,
 * ReduceScatter when sendbuf + rank*recvcount == recvbuf. `stream` is NULL
 * for host buffers. A NULL `request` makes a call block until the operation
 * is done; otherwise the call returns at once with a handle for loomWait,
 * loomTest and loomRequestFree. A communicator's collectives complete in
 * the order they were called; its Sends and Recvs progress independently
 * of them and of each other (see loomGroupStart below).
 *
 * Buffers and NULL. A buffer may be NULL exactly where no byte goes through
 * it on the calling rank; NULL anywhere else fails the call with
 * loomInvalidArgument, and so do buffers that overlap other than in place.
 * Buffers need no particular alignment.
 * - Every call with a count: with count 0, sendbuf, recvbuf and buf may be
 *   NULL. A call of count 0 is still a call: every rank makes it, it
 *   completes, and it takes its place among the calls around it. An empty
 *   Send is one message, as in MPI: it matches one Recv, which must be
 *   empty too.
 * - loomBroadcast: sendbuf is read at the root only; it may be NULL on the
 *   other ranks. In place at the root when sendbuf == recvbuf.
 * - loomReduce: recvbuf is written at the root only; it may be NULL on the
 *   other ranks. In place at the root when sendbuf == recvbuf.
 * - loomAllReduce, loomAllToAll: in place when sendbuf == recvbuf.
 * - loomSend reads buf, loomRecv writes it. Which of the two a call is, and
 *   whether any call is a collective, comes from the function called, never
 *   from a pointer's value.
 * Other pointers: comm, and every pointer a call writes its result through
 * (comm*, newcomm, id, count, rank, version, ptr, handle, done), must not
 * be NULL; `config` may be NULL (the defaults; loomCommSplit then inherits
 * the parent's timeout); `request` NULL means blocking; loomMemFree(NULL)
 * does nothing; loomCommRegister's buff and loomCommDeregister's handle
 * must not be NULL.
 */
#ifndef LOOM_LOOM_H
#define LOOM_LOOM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* LOOM_MAJOR, LOOM_MINOR, LOOM_PATCH, LOOM_VERSION_STRING, LOOM_VERSION_CODE. */
#include <loom/version.h>

/* The C API is all that libloom.so exports (the build hides everything else). */
#if defined(__GNUC__)
#define LOOM_API __attribute__((visibility("default")))
#else
#define LOOM_API
#endif

/* In C++ the enums are `: int`, so any int a caller passes (an unknown dtype
 * or op) is a valid value that Loom checks and refuses, not undefined
 * behaviour; C already treats them as int. Same size and ABI either way. */
#ifdef __cplusplus
#define LOOM_ENUM_INT : int
#else
#define LOOM_ENUM_INT
#endif

#define LOOM_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[LOOM_UNIQUE_ID_BYTES];
} loomUniqueId;

typedef struct loomComm* loomComm_t;
typedef struct loomRequest* loomRequest_t;

typedef enum {
  loomSuccess = 0,
  loomInProgress,
  loomTimeout,
  loomInvalidArgument,
  loomInvalidUsage,
  loomSystemError,
  loomRemoteError,
  loomInternalError,
  loomAborted,
  loomUnsupported
} loomResult_t;

typedef enum LOOM_ENUM_INT {
  loomInt8 = 0,
  loomUint8,
  loomInt32,
  loomUint32,
  loomInt64,
  loomUint64,
  loomFloat16,
  loomBfloat16,
  loomFloat32,
  loomFloat64
} loomDataType_t;
#define LOOM_NUM_DTYPES 10

typedef enum LOOM_ENUM_INT { loomSum = 0, loomProd, loomMax, loomMin, loomAvg } loomRedOp_t;
#define LOOM_NUM_OPS 5

typedef struct loomConfig {
  size_t size;       /* sizeof(loomConfig_t): lets the struct grow compatibly */
  int64_t timeoutMs; /* -1: LOOM_TIMEOUT_MS, else 600000 (10 minutes) */
  const char* name;  /* shown in log lines and error sentences; may be NULL */
} loomConfig_t;

#define LOOM_CONFIG_INITIALIZER \
  { sizeof(loomConfig_t), -1, NULL }

LOOM_API const char* loomGetErrorString(loomResult_t result);
/* The full sentence of the last failure on comm, or "" if none. */
LOOM_API const char* loomCommGetLastError(loomComm_t comm);
/* The last failure of a call made by this thread that had no communicator
 * to report on (for example loomCommInitRank). */
LOOM_API const char* loomGetLastError(void);
LOOM_API loomResult_t loomGetVersion(int* version);

LOOM_API loomResult_t loomGetUniqueId(loomUniqueId* id);
LOOM_API loomResult_t loomCommInitRank(loomComm_t* comm, int nranks, loomUniqueId id, int rank, const loomConfig_t* config);
LOOM_API loomResult_t loomCommInitFromEnv(loomComm_t* comm, const loomConfig_t* config);
/* As ncclCommSplit: ranks with the same color form a new communicator,
 * ordered by key then by rank in comm. color < 0 (LOOM_SPLIT_NOCOLOR) gives
 * *newcomm = NULL. Collective over comm. */
#define LOOM_SPLIT_NOCOLOR (-1)
LOOM_API loomResult_t loomCommSplit(loomComm_t comm, int color, int key, loomComm_t* newcomm, const loomConfig_t* config);
LOOM_API loomResult_t loomCommCount(loomComm_t comm, int* count);
LOOM_API loomResult_t loomCommUserRank(loomComm_t comm, int* rank);
/* The communicator's asynchronous error, as ncclCommGetAsyncError: *asyncError
 * is loomSuccess while it is healthy, and once an operation failed (whether
 * or not anyone waits on it) that failure's code, whose sentence
 * loomCommGetLastError(comm) gives. Any thread, any time, without waiting on
 * anything: what a framework's watchdog polls to abort a communicator whose
 * peers failed while the training loop was busy elsewhere. */
LOOM_API loomResult_t loomCommGetAsyncError(loomComm_t comm, loomResult_t* asyncError);
/* A sum whose every input is first multiplied by a scalar, as NCCL's
 * ncclRedOpCreatePreMulSum with a host scalar: scalar 1/nranks averages in
 * one pass. `scalar` points to one value of `dtype`, copied now (each rank
 * may pass its own). The op belongs to comm, works on reductions of `dtype`
 * (AllReduce, ReduceScatter, Reduce), and may be destroyed as soon as the
 * last call using it has returned: the scaling happens when a call is made.
 * Every rank must make its ops in the same order, so that they agree on
 * their numbers. */
LOOM_API loomResult_t loomRedOpCreatePreMulSum(loomRedOp_t* op, const void* scalar, loomDataType_t dtype,
                                               loomComm_t comm);
LOOM_API loomResult_t loomRedOpDestroy(loomRedOp_t op, loomComm_t comm);
/* Waits for the communicator's pending operations, then frees it. */
LOOM_API loomResult_t loomCommDestroy(loomComm_t comm);
/* Fails every pending operation of comm with loomAborted, within a second,
 * and frees it. Pending requests stay valid until freed. */
LOOM_API loomResult_t loomCommAbort(loomComm_t comm);

LOOM_API loomResult_t loomAllReduce(const void* sendbuf, void* recvbuf, size_t count, loomDataType_t dtype, loomRedOp_t op,
                           loomComm_t comm, void* stream, loomRequest_t* request);
LOOM_API loomResult_t loomAllGather(const void* sendbuf, void* recvbuf, size_t sendcount, loomDataType_t dtype, loomComm_t comm,
                           void* stream, loomRequest_t* request);
LOOM_API loomResult_t loomReduceScatter(const void* sendbuf, void* recvbuf, size_t recvcount, loomDataType_t dtype,
                               loomRedOp_t op, loomComm_t comm, void* stream, loomRequest_t* request);
LOOM_API loomResult_t loomBroadcast(const void* sendbuf, void* recvbuf, size_t count, loomDataType_t dtype, int root,
                           loomComm_t comm, void* stream, loomRequest_t* request);
LOOM_API loomResult_t loomReduce(const void* sendbuf, void* recvbuf, size_t count, loomDataType_t dtype, loomRedOp_t op,
                        int root, loomComm_t comm, void* stream, loomRequest_t* request);
LOOM_API loomResult_t loomAllToAll(const void* sendbuf, void* recvbuf, size_t count, loomDataType_t dtype, loomComm_t comm,
                          void* stream, loomRequest_t* request);
/* AllToAllv, as MPI_Alltoallv: this rank sends sendcounts[q] elements at
 * sendbuf + sdispls[q] to rank q, and receives recvcounts[q] elements from
 * rank q at recvbuf + rdispls[q] (counts and displacements in elements,
 * nranks entries each, read before the call returns). What rank r sends
 * rank q must be what q expects from r: where they disagree, q fails on
 * r's first message with loomInvalidUsage naming both counts (ranks left
 * waiting on q then fail with loomRemoteError quoting it). There is no in-place
 * form: the buffers' used ranges may not overlap. */
LOOM_API loomResult_t loomAllToAllv(const void* sendbuf, const size_t* sendcounts, const size_t* sdispls, void* recvbuf,
                                    const size_t* recvcounts, const size_t* rdispls, loomDataType_t dtype,
                                    loomComm_t comm, void* stream, loomRequest_t* request);
/* Gather: every rank's sendcount elements land in the root's recvbuf, rank r's
 * at element r * sendcount (recvbuf holds nranks * sendcount; it matters at
 * the root only, as in MPI_Gather). Scatter: block r of the root's sendbuf
 * (recvcount elements at r * recvcount) lands in rank r's recvbuf; sendbuf
 * matters at the root only. In place at the root: sendbuf == recvbuf +
 * root * count for Gather, recvbuf == sendbuf + root * count for Scatter. */
LOOM_API loomResult_t loomGather(const void* sendbuf, void* recvbuf, size_t sendcount, loomDataType_t dtype, int root,
                                 loomComm_t comm, void* stream, loomRequest_t* request);
LOOM_API loomResult_t loomScatter(const void* sendbuf, void* recvbuf, size_t recvcount, loomDataType_t dtype, int root,
                                  loomComm_t comm, void* stream, loomRequest_t* request);
LOOM_API loomResult_t loomSend(const void* buf, size_t count, loomDataType_t dtype, int peer, loomComm_t comm, void* stream,
                      loomRequest_t* request);
LOOM_API loomResult_t loomRecv(void* buf, size_t count, loomDataType_t dtype, int peer, loomComm_t comm, void* stream,
                      loomRequest_t* request);
LOOM_API loomResult_t loomBarrier(loomComm_t comm, loomRequest_t* request);

/* Point-to-point semantics, as MPI's Isend/Irecv: posted Sends and Recvs
 * progress whatever order they were posted in (every rank may post its Recv
 * before its Send), and the Sends and Recvs between one pair of ranks match
 * in posting order. A Recv's count and datatype must equal the matching
 * Send's: otherwise the Recv fails with loomInvalidUsage naming both. Sends
 * and Recvs in flight never hold up the communicator's collectives, nor the
 * other way round; collectives run in the order they were called.
 *
 * Mismatched calls: every message carries its operation's kind, number,
 * count, datatype, op and root, and its receiver checks them before reading
 * a byte, so ranks that called different collectives (or one with other
 * arguments) fail on their first exchange with loomInvalidUsage naming both
 * calls; ranks that were only waiting on them get loomRemoteError quoting
 * that sentence. A rank whose part of the call needed nothing from the
 * disagreeing ranks (a Broadcast root, a Send) finishes it and gets the
 * error from its next call. A communicator that failed refuses further
 * calls until destroyed or aborted.
 *
 * Threads: a communicator takes one call at a time. A call (a blocking one
 * until it returns) made while another thread's call on the same
 * communicator has not returned fails with loomInvalidUsage naming both,
 * and changes nothing. loomWait, loomTest, loomRequestFree and
 * loomCommAbort may be called from any thread at any time. Communicators
 * are independent: one per thread (loomCommSplit) is the way to issue
 * from several threads. Calls from several threads that never overlap run
 * in the order they were made, which must be the same on every rank.
 *
 * Groups, as ncclGroupStart/ncclGroupEnd: the calls a thread makes between
 * them are checked at once (bad arguments fail the call itself) and
 * launched together by the outermost loomGroupEnd. A call inside a group
 * that has a request returns its handle at once; a blocking call (request
 * NULL) returns loomSuccess at once and is complete when loomGroupEnd
 * returns. Groups nest. loomGroupEnd returns the first failure among the
 * group's blocking calls, its sentence (from loomGetLastError) naming the
 * operation; a failed call with a request reports through its request. */
LOOM_API loomResult_t loomGroupStart(void);
LOOM_API loomResult_t loomGroupEnd(void);

/* Registered buffers: single-copy collectives on one host.
 *
 * loomMemAlloc returns page-aligned host memory that other processes can map
 * (a memfd); loomMemFree releases it (NULL is a no-op) and fails with
 * loomInvalidUsage while a communicator still has it registered.
 *
 * loomCommRegister is collective over comm: every rank calls it, in the same
 * order relative to its other collectives, each with its own buffer (sizes
 * may differ). buff..buff+size must lie inside one loomMemAlloc allocation.
 * Every rank then maps every other's buffer, or, if any rank cannot (ranks in
 * different pid namespaces or under different users), all fail alike with
 * loomSystemError and nothing is registered. Once registered, an AllReduce,
 * AllGather or ReduceScatter whose send and receive buffers lie in
 * registered buffers on every rank (and whose size is at least
 * LOOM_DIRECT_MIN_BYTES) copies each byte once, straight between the ranks'
 * buffers, instead of staging it through shared-memory FIFOs. Calls with
 * any other buffers run as before. loomCommDeregister is collective too: every
 * rank passes the handle of the same registration. Destroying the
 * communicator drops its registrations. */
LOOM_API loomResult_t loomMemAlloc(void** ptr, size_t size);
LOOM_API loomResult_t loomMemFree(void* ptr);
LOOM_API loomResult_t loomCommRegister(loomComm_t comm, void* buff, size_t size, void** handle);
LOOM_API loomResult_t loomCommDeregister(loomComm_t comm, void* handle);

/* loomSuccess once done; otherwise the operation's own error. timeoutMs -1
 * waits until the operation ends: it cannot hang, since each of its waits on
 * a peer is bounded by the communicator's timeout, and a timed-out
 * operation's sentence names the rank it waited for. timeoutMs >= 0 (0:
 * poll; large values saturate) returns loomTimeout when the operation is not
 * done by then, while the operation keeps running and the request stays
 * valid. */
LOOM_API loomResult_t loomWait(loomRequest_t request, int64_t timeoutMs);
LOOM_API loomResult_t loomTest(loomRequest_t request, int* done);
/* May be called on a finished or pending request; a pending op still runs. */
LOOM_API loomResult_t loomRequestFree(loomRequest_t request);
/* Calls callback(request, result, userData) once, when the operation ends,
 * with its result: on the thread that ends it (the communicator's progress
 * thread, or a thread inside loomWait, loomTest or a blocking call on that
 * communicator), or on the calling thread before this returns if it has
 * ended already. This is how a framework completes its futures without a
 * thread per operation. The callback must return quickly and must not call
 * Loom on that communicator (it runs inside its progress); it must not free
 * the request, and `request` may be used in it only for loomWait(request, 0)
 * to read the failure sentence. One callback per request: a second call
 * fails with loomInvalidUsage and leaves the first. */
typedef void (*loomCallback_t)(loomRequest_t request, loomResult_t result, void* userData);
LOOM_API loomResult_t loomRequestSetCallback(loomRequest_t request, loomCallback_t callback, void* userData);

LOOM_API size_t loomTypeSize(loomDataType_t dtype); /* 0 for an unknown dtype */
LOOM_API const char* loomTypeName(loomDataType_t dtype);
LOOM_API const char* loomOpName(loomRedOp_t op);

#ifdef __cplusplus
}
#endif

#endif /* LOOM_LOOM_H */
