/**
 * @file loom.h
 * @brief Loom: topology-aware collective communication. The C API.
 *
 * The C API is the stable surface frameworks link against. Every call returns
 * a ::loomResult_t; loomCommGetLastError() gives the full sentence of the last
 * failure on a communicator (loomGetLastError() for calls without one).
 *
 * Semantics follow NCCL where NCCL has them: counts are in elements,
 * AllGather is in place when `sendbuf == recvbuf + rank*sendcount`,
 * ReduceScatter when `sendbuf + rank*recvcount == recvbuf`. `stream` is NULL
 * for host buffers. A NULL `request` makes a call block until the operation
 * is done; otherwise the call returns at once with a handle for loomWait(),
 * loomTest() and loomRequestFree(). A communicator's collectives complete in
 * the order they were called; its Sends and Recvs progress independently
 * of them and of each other (see loomGroupStart() below, and
 * @ref loom_semantics).
 *
 * @par Buffers and NULL
 * A buffer may be NULL exactly where no byte goes through
 * it on the calling rank; NULL anywhere else fails the call with
 * ::loomInvalidArgument, and so do buffers that overlap other than in place.
 * Buffers need no particular alignment.
 * - Every call with a count: with count 0, sendbuf, recvbuf and buf may be
 *   NULL. A call of count 0 is still a call: every rank makes it, it
 *   completes, and it takes its place among the calls around it. An empty
 *   Send is one message, as in MPI: it matches one Recv, which must be
 *   empty too.
 * - loomBroadcast(): sendbuf is read at the root only; it may be NULL on the
 *   other ranks. In place at the root when `sendbuf == recvbuf`.
 * - loomReduce(): recvbuf is written at the root only; it may be NULL on the
 *   other ranks. In place at the root when `sendbuf == recvbuf`.
 * - loomAllReduce(), loomAllToAll(): in place when `sendbuf == recvbuf`.
 * - loomSend() reads buf, loomRecv() writes it. Which of the two a call is, and
 *   whether any call is a collective, comes from the function called, never
 *   from a pointer's value.
 *
 * @par Other pointers
 * comm, and every pointer a call writes its result through
 * (comm*, newcomm, id, count, rank, version, ptr, handle, done), must not
 * be NULL; `config` may be NULL (the defaults; loomCommSplit() then inherits
 * the parent's timeout); `request` NULL means blocking; loomMemFree(NULL)
 * does nothing; loomCommRegister()'s buff and loomCommDeregister()'s handle
 * must not be NULL.
 *
 * @par Version
 * LOOM_MAJOR, LOOM_MINOR, LOOM_PATCH, LOOM_VERSION_STRING and
 * LOOM_VERSION_CODE come from loom/version.h, which CMake generates from the
 * project's version and this header includes. loomGetVersion() gives the
 * version of the library actually loaded.
 *
 * @par Topics
 * - @ref loom_types
 * - @ref loom_errors
 * - @ref loom_comm
 * - @ref loom_collectives
 * - @ref loom_semantics
 * - @ref loom_registered
 * - @ref loom_requests
 * - @ref loom_typeinfo
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

/**
 * @defgroup loom_types Types and constants
 * @brief Handles, result codes, element types, reduction ops and the
 * communicator configuration.
 * @{
 */

/**
 * @brief Marks the functions of the C API as exported.
 *
 * The C API is all that libloom.so exports (the build hides everything else).
 * With GCC and Clang it is `__attribute__((visibility("default")))`,
 * elsewhere empty.
 */
#if defined(__GNUC__)
#define LOOM_API __attribute__((visibility("default")))
#else
#define LOOM_API
#endif

/**
 * @brief The underlying type of ::loomDataType_t and ::loomRedOp_t: `: int`
 * in C++, nothing in C.
 *
 * In C++ the enums are `: int`, so any int a caller passes (an unknown dtype
 * or op) is a valid value that Loom checks and refuses, not undefined
 * behaviour; C already treats them as int. Same size and ABI either way.
 */
#ifdef __cplusplus
#define LOOM_ENUM_INT : int
#else
#define LOOM_ENUM_INT
#endif

/** @brief Size in bytes of a ::loomUniqueId (128). */
#define LOOM_UNIQUE_ID_BYTES 128
/**
 * @brief What every rank passes to loomCommInitRank() to meet the others.
 *
 * Made by loomGetUniqueId() in one process, which sends all
 * #LOOM_UNIQUE_ID_BYTES bytes to the other ranks any way it likes. It holds
 * the address of the rendezvous that loomGetUniqueId() started and the secret
 * a rank must prove it holds to join: whoever has the id can join. Plain
 * bytes, copied by value; there is nothing to free.
 */
typedef struct {
  char internal[LOOM_UNIQUE_ID_BYTES]; /**< Opaque; copy it whole, never edit it. */
} loomUniqueId;

/**
 * @brief A communicator: this rank's place in a group of ranks.
 *
 * Opaque handle made by loomCommInitRank(), loomCommInitFromEnv() or
 * loomCommSplit(), and owned by the caller until loomCommDestroy() or
 * loomCommAbort() frees it. A call through a handle that was destroyed or
 * aborted fails with ::loomInvalidUsage instead of touching freed memory.
 */
typedef struct loomComm* loomComm_t;
/**
 * @brief One posted operation, returned by a call given a non-NULL `request`.
 *
 * Opaque handle owned by the caller, who waits on it with loomWait() or
 * loomTest() and must release it with loomRequestFree() (a pending operation
 * still runs to its end after that).
 */
typedef struct loomRequest* loomRequest_t;

/**
 * @brief What every call returns. loomGetErrorString() names a code;
 * loomCommGetLastError() and loomGetLastError() give the sentence of the
 * failure.
 */
typedef enum {
  loomSuccess = 0,     /**< No error ("no error"). */
  loomInProgress,      /**< The operation has not finished ("operation in progress"). No call of this version
                            returns it: loomTest() reports a pending operation as ::loomSuccess with `*done` 0. */
  loomTimeout,         /**< A wait ran out ("operation timed out"): a wait on a peer (at init, on the other
                            ranks) outlasted the communicator's timeout, and the sentence names the rank waited
                            for; or loomWait()'s own `timeoutMs` passed while the operation keeps running. */
  loomInvalidArgument, /**< An argument was refused ("invalid argument"): a NULL pointer, a bad dtype, op,
                            rank, color, count or handle, overlapping buffers, a malformed configuration or LOOM_
                            environment variable. */
  loomInvalidUsage,    /**< A call that is not allowed now ("invalid usage"): on a destroyed communicator, while
                            another thread's call on it has not returned, ranks that called mismatched operations,
                            a communicator that failed earlier, loomGroupEnd() without loomGroupStart(). */
  loomSystemError,     /**< A system call failed, or memory ran out ("system call failed"); the sentence names
                            the call and errno. */
  loomRemoteError,     /**< A remote rank failed or sent bad data ("a remote rank failed or sent bad data"); the
                            sentence quotes the other rank's failure where it has one. */
  loomInternalError,   /**< A bug in Loom ("internal error in Loom"). */
  loomAborted,         /**< The operation was failed by loomCommAbort() ("aborted"). */
  loomUnsupported      /**< Not supported by this build or version ("not supported"): a non-NULL `stream`, an
                            algorithm or transport that cannot serve these ranks. */
} loomResult_t;

/** @brief Element types. loomTypeSize() gives each one's size, loomTypeName() its name. */
typedef enum LOOM_ENUM_INT {
  loomInt8 = 0, /**< `int8_t`, 1 byte. */
  loomUint8,    /**< `uint8_t`, 1 byte. */
  loomInt32,    /**< `int32_t`, 4 bytes. */
  loomUint32,   /**< `uint32_t`, 4 bytes. */
  loomInt64,    /**< `int64_t`, 8 bytes. */
  loomUint64,   /**< `uint64_t`, 8 bytes. */
  loomFloat16,  /**< IEEE 754 half precision (binary16), 2 bytes. */
  loomBfloat16, /**< bfloat16 (the top 16 bits of a float), 2 bytes. */
  loomFloat32,  /**< `float`, 4 bytes. */
  loomFloat64   /**< `double`, 8 bytes. */
} loomDataType_t;
/** @brief How many ::loomDataType_t values there are: valid dtypes are 0 to LOOM_NUM_DTYPES - 1. */
#define LOOM_NUM_DTYPES 10

/**
 * @brief Reduction operations. Values from #LOOM_NUM_OPS on are a
 * communicator's own, made by loomRedOpCreatePreMulSum().
 */
typedef enum LOOM_ENUM_INT { loomSum = 0, loomProd, loomMax, loomMin, loomAvg } loomRedOp_t;
/** @var loomSum
 * Sum. */
/** @var loomProd
 * Product. */
/** @var loomMax
 * Maximum. */
/** @var loomMin
 * Minimum. */
/** @var loomAvg
 * Sum divided by the number of ranks (integer types divide as C does, truncating). */
/** @brief How many built-in ::loomRedOp_t values there are: 0 to LOOM_NUM_OPS - 1. */
#define LOOM_NUM_OPS 5

/**
 * @brief Settings of one communicator, fixed at init; pass NULL for the
 * defaults.
 *
 * Start from #LOOM_CONFIG_INITIALIZER and change the fields wanted. The
 * struct is read during the init or split call only; nothing of it is kept.
 */
typedef struct loomConfig {
  size_t size;       /**< sizeof(loomConfig_t): lets the struct grow compatibly. A size too small to hold
                          `timeoutMs` fails the call with ::loomInvalidArgument; `name` is read only when
                          `size` covers it. */
  int64_t timeoutMs; /**< -1: LOOM_TIMEOUT_MS, else 600000 (10 minutes). Otherwise a positive number of
                          milliseconds: how long an operation may wait without progress before it fails with
                          ::loomTimeout, and how long init waits for the other ranks at each step (a century
                          or more: no timeout). 0 and values below -1 fail the call with
                          ::loomInvalidArgument. */
  const char* name;  /**< Shown in log lines and error sentences; may be NULL. Copied at init. */
} loomConfig_t;

/** @brief The defaults: `{ sizeof(loomConfig_t), -1, NULL }`. */
#define LOOM_CONFIG_INITIALIZER \
  { sizeof(loomConfig_t), -1, NULL }

/** @} */

/**
 * @defgroup loom_errors Errors and version
 * @brief Result codes as text, failure sentences, the library's version.
 * @{
 */

/**
 * @brief The short, fixed description of a result code.
 *
 * @param[in] result A result code; any other value gives
 *                   "unknown loomResult_t value".
 * @return A static string owned by Loom, never NULL and never to be freed:
 *         "no error" for ::loomSuccess, "operation timed out" for
 *         ::loomTimeout, and so on (see ::loomResult_t).
 *
 * @par Blocking and threads
 * Does not block; any thread, any time.
 */
LOOM_API const char* loomGetErrorString(loomResult_t result);
/**
 * @brief The full sentence of the last failure on comm, or "" if none.
 *
 * Failures of calls on comm and of its operations (reported through a
 * request or not) are kept here; a later success does not clear it.
 *
 * @param[in] comm The communicator. If it is NULL, destroyed or was never
 *                 created, the sentence returned says so.
 * @return Never NULL. The string is owned by Loom, one per thread: it stays
 *         valid until this thread calls loomCommGetLastError() again (or
 *         ends). Do not free it.
 *
 * @par Blocking and threads
 * Does not block (beyond a short lock); any thread, any time.
 */
LOOM_API const char* loomCommGetLastError(loomComm_t comm);
/**
 * @brief The last failure of a call made by this thread that had no
 * communicator to report on (for example loomCommInitRank()).
 *
 * Every call that fails sets it, on the thread that made the call (calls on a
 * communicator too); it is where the sentences of loomWait(), loomTest() and
 * loomGroupEnd() failures are read. A later success does not clear it.
 *
 * @return The sentence, or "" if no call of this thread has failed. Never
 *         NULL; owned by Loom, one per thread, valid until this thread's
 *         next failing call (or its end). Do not free it.
 *
 * @par Blocking and threads
 * Does not block; any thread, any time (each thread reads its own).
 */
LOOM_API const char* loomGetLastError(void);
/**
 * @brief The version of the library loaded, as LOOM_VERSION_CODE
 * (major*10000 + minor*100 + patch).
 *
 * It may differ from the LOOM_VERSION_CODE of the header a program was
 * compiled with.
 *
 * @param[out] version Where the version goes; must not be NULL.
 * @retval loomSuccess         `*version` is written.
 * @retval loomInvalidArgument `version` is NULL.
 *
 * @par Blocking and threads
 * Does not block; any thread, any time.
 */
LOOM_API loomResult_t loomGetVersion(int* version);

/** @} */

/**
 * @defgroup loom_comm Communicators
 * @brief Creating, splitting, querying and freeing communicators, and their
 * own reduction ops.
 * @{
 */

/**
 * @brief Makes the id every rank passes to loomCommInitRank(), and starts
 * the rendezvous where the ranks meet.
 *
 * One process calls it (usually rank 0's) and sends the
 * #LOOM_UNIQUE_ID_BYTES bytes to the others any way it likes; every rank
 * then calls loomCommInitRank() with them. The id holds the rendezvous's
 * address and a fresh random secret. The rendezvous runs on a background
 * thread of the calling process, listening on the interface that
 * LOOM_SOCKET_IFNAME and LOOM_SOCKET_FAMILY choose, until every rank it
 * admitted has closed its connection, or until no rank has come within the
 * timeout (LOOM_TIMEOUT_MS, else 10 minutes).
 *
 * @param[out] id Written on success; plain bytes, nothing to free.
 * @retval loomSuccess         `*id` is written and the rendezvous listens.
 * @retval loomInvalidArgument `id` is NULL; a LOOM_ variable is malformed;
 *                             no interface that is up has an address of the
 *                             family asked for (the sentence lists those up).
 * @retval loomSystemError     listing the interfaces, opening or binding the
 *                             listening socket, or reading random bytes failed.
 * @retval loomInternalError   OpenSSL failed to initialise.
 *
 * @par Blocking
 * Does not wait for any rank: it returns once the rendezvous listens.
 * @par Thread safety
 * Any thread; each call makes its own id and rendezvous.
 */
LOOM_API loomResult_t loomGetUniqueId(loomUniqueId* id);
/**
 * @brief Creates this rank's communicator among `nranks` ranks that meet at
 * the rendezvous of `id`, as ncclCommInitRank.
 *
 * Collective: each of the nranks ranks (processes, or threads of one process)
 * calls it once with the same id and nranks and its own rank.
 *
 * @param[out] comm   Where the new communicator goes; must not be NULL. Set
 *                    to NULL first, and to the handle on success. The caller
 *                    owns it and frees it with loomCommDestroy() or
 *                    loomCommAbort().
 * @param[in]  nranks How many ranks the communicator has, at least 1.
 * @param[in]  id     The id from loomGetUniqueId(), copied whole.
 * @param[in]  rank   This rank, 0 to nranks - 1.
 * @param[in]  config Settings, read during the call only; NULL for the
 *                    defaults (see ::loomConfig_t).
 * @retval loomSuccess         `*comm` is the new communicator.
 * @retval loomInvalidArgument `comm` is NULL; nranks is not positive; rank is
 *                             out of range; `config` or a LOOM_ variable is
 *                             malformed; `id` was not made by
 *                             loomGetUniqueId() of this Loom version.
 * @retval loomTimeout         the other ranks did not all arrive, or one did
 *                             not answer, within the timeout (the sentence
 *                             says which ranks are missing).
 * @retval loomRemoteError     the rendezvous or a peer refused this rank, lost
 *                             the connection or sent something unreadable.
 * @retval loomSystemError     a system call (sockets, shared memory) failed.
 * @retval loomUnsupported     no transport that LOOM_TRANSPORTS allows
 *                             connects two of the ranks, or an algorithm that
 *                             LOOM_ALGO forces cannot run on them.
 * @retval loomInternalError   a bug in Loom.
 *
 * @par Blocking
 * Blocks until every rank has joined and connected to its peers; each wait
 * is bounded by the timeout (`config->timeoutMs`, else LOOM_TIMEOUT_MS, else
 * 10 minutes).
 * @par Thread safety
 * Any thread: ranks that are threads of one process call it at the same time,
 * each for its own communicator. The sentence of a failure is in
 * loomGetLastError().
 */
LOOM_API loomResult_t loomCommInitRank(loomComm_t* comm, int nranks, loomUniqueId id, int rank, const loomConfig_t* config);
/**
 * @brief Creates this rank's communicator from the launcher's environment,
 * as torchrun's env:// does.
 *
 * The rank and size come from the first launcher whose rank variable is set:
 * RANK and WORLD_SIZE (torchrun, loomrun), OMPI_COMM_WORLD_RANK and
 * OMPI_COMM_WORLD_SIZE (Open MPI), SLURM_PROCID and SLURM_NTASKS (Slurm),
 * PMI_RANK and PMI_SIZE (PMI). The ranks meet at MASTER_ADDR:MASTER_PORT,
 * where rank 0 runs the rendezvous. The secret comes from LOOM_SECRET
 * (loomrun sets one); without it, anyone who can reach
 * MASTER_ADDR:MASTER_PORT can join. Collective over every rank of the launch.
 *
 * @param[out] comm   Where the new communicator goes; must not be NULL. Set
 *                    to NULL first, and to the handle on success. The caller
 *                    owns it and frees it with loomCommDestroy() or
 *                    loomCommAbort().
 * @param[in]  config Settings, read during the call only; NULL for the
 *                    defaults (see ::loomConfig_t).
 * @retval loomSuccess         `*comm` is the new communicator.
 * @retval loomInvalidUsage    no launcher's rank variable is set, its size
 *                             variable, MASTER_ADDR or MASTER_PORT is missing,
 *                             the rank is not below the size, or MASTER_ADDR
 *                             is not an address of rank 0's host (unless
 *                             LOOM_SOCKET_IFNAME names where to listen).
 * @retval loomInvalidArgument `comm` is NULL; `config` or a variable is
 *                             malformed; MASTER_ADDR does not resolve.
 * @retval loomTimeout         the other ranks did not all arrive, or one did
 *                             not answer, within the timeout.
 * @retval loomRemoteError     the rendezvous or a peer refused this rank, lost
 *                             the connection or sent something unreadable.
 * @retval loomSystemError     a system call (sockets, shared memory) failed.
 * @retval loomUnsupported     no allowed transport connects two of the ranks,
 *                             or a forced algorithm cannot run on them.
 * @retval loomInternalError   a bug in Loom.
 *
 * @par Blocking
 * Blocks until every rank has joined and connected, each wait bounded by the
 * timeout, as loomCommInitRank().
 * @par Thread safety
 * Any thread. The sentence of a failure is in loomGetLastError().
 */
LOOM_API loomResult_t loomCommInitFromEnv(loomComm_t* comm, const loomConfig_t* config);
/** @brief The color that puts a rank in no communicator of loomCommSplit() (-1). */
#define LOOM_SPLIT_NOCOLOR (-1)
/**
 * @brief Splits comm by color, as ncclCommSplit.
 *
 * As ncclCommSplit: ranks with the same color form a new communicator,
 * ordered by key then by rank in comm. color < 0 (#LOOM_SPLIT_NOCOLOR; the
 * only negative color accepted) gives `*newcomm` = NULL. Collective over
 * comm.
 *
 * @param[in]  comm    The parent communicator; it stays usable.
 * @param[in]  color   This rank's color, >= 0, or #LOOM_SPLIT_NOCOLOR. A
 *                     color below -1 on any rank fails the call on every rank
 *                     with ::loomInvalidArgument.
 * @param[in]  key     Orders the ranks of one color in the new communicator
 *                     (ties by rank in comm).
 * @param[out] newcomm Where the new communicator goes; must not be NULL. Set
 *                     to NULL first; on success the new handle, owned by the
 *                     caller (free it with loomCommDestroy() or
 *                     loomCommAbort()), or NULL for #LOOM_SPLIT_NOCOLOR.
 * @param[in]  config  Settings, read during the call only; NULL inherits the
 *                     parent's timeout.
 * @retval loomSuccess         `*newcomm` is set.
 * @retval loomInvalidArgument `comm` or `newcomm` is NULL; `config` or a LOOM_
 *                             variable is malformed; a rank passed a color
 *                             below -1.
 * @retval loomInvalidUsage    comm was destroyed or aborted, or never created.
 * @retval loomTimeout         a rank of comm or of the new communicator did
 *                             not answer within the timeout.
 * @retval loomRemoteError     a rank sent something unreadable, or failed.
 * @retval loomSystemError     a system call failed while connecting.
 * @retval loomUnsupported     no allowed transport connects two of the new
 *                             communicator's ranks, or a forced algorithm
 *                             cannot run on them.
 *
 * @par Blocking
 * Blocks until every rank of comm has called it and the new communicator is
 * connected, as loomCommInitRank().
 * @par Thread safety
 * Call it while no other thread's call on comm is in progress (see
 * @ref loom_semantics, "Threads").
 */
LOOM_API loomResult_t loomCommSplit(loomComm_t comm, int color, int key, loomComm_t* newcomm, const loomConfig_t* config);
/**
 * @brief The number of ranks of comm.
 *
 * @param[in]  comm  The communicator.
 * @param[out] count Where the number goes; must not be NULL.
 * @retval loomSuccess         `*count` is written.
 * @retval loomInvalidArgument `comm` or `count` is NULL.
 * @retval loomInvalidUsage    comm was destroyed or aborted, or never created.
 *
 * @par Blocking and threads
 * Does not block; any thread, any time.
 */
LOOM_API loomResult_t loomCommCount(loomComm_t comm, int* count);
/**
 * @brief This rank's number in comm, 0 to count - 1.
 *
 * @param[in]  comm The communicator.
 * @param[out] rank Where the rank goes; must not be NULL.
 * @retval loomSuccess         `*rank` is written.
 * @retval loomInvalidArgument `comm` or `rank` is NULL.
 * @retval loomInvalidUsage    comm was destroyed or aborted, or never created.
 *
 * @par Blocking and threads
 * Does not block; any thread, any time.
 */
LOOM_API loomResult_t loomCommUserRank(loomComm_t comm, int* rank);
/**
 * @brief The communicator's asynchronous error, as ncclCommGetAsyncError.
 *
 * The communicator's asynchronous error, as ncclCommGetAsyncError: `*asyncError`
 * is ::loomSuccess while it is healthy, and once an operation failed (whether
 * or not anyone waits on it) that failure's code, whose sentence
 * loomCommGetLastError(comm) gives. Any thread, any time, without waiting on
 * anything: what a framework's watchdog polls to abort a communicator whose
 * peers failed while the training loop was busy elsewhere.
 *
 * @param[in]  comm       The communicator.
 * @param[out] asyncError Where the code goes; must not be NULL.
 * @retval loomSuccess         `*asyncError` is written (the call itself
 *                             succeeded, whatever the code written).
 * @retval loomInvalidArgument `comm` or `asyncError` is NULL.
 * @retval loomInvalidUsage    comm was destroyed or aborted, or never created.
 *
 * @par Blocking and threads
 * Does not block; any thread, any time.
 */
LOOM_API loomResult_t loomCommGetAsyncError(loomComm_t comm, loomResult_t* asyncError);
/**
 * @brief Makes a reduction op that multiplies every input by a scalar, then
 * sums, as ncclRedOpCreatePreMulSum.
 *
 * A sum whose every input is first multiplied by a scalar, as NCCL's
 * ncclRedOpCreatePreMulSum with a host scalar: scalar 1/nranks averages in
 * one pass. `scalar` points to one value of `dtype`, copied now (each rank
 * may pass its own). The op belongs to comm, works on reductions of `dtype`
 * (AllReduce, ReduceScatter, Reduce), and may be destroyed as soon as the
 * last call using it has returned: the scaling happens when a call is made.
 * Every rank must make its ops in the same order, so that they agree on
 * their numbers.
 *
 * @param[out] op     Where the new op goes (a value from #LOOM_NUM_OPS on);
 *                    must not be NULL. It is comm's: destroy it with
 *                    loomRedOpDestroy() or with comm.
 * @param[in]  scalar One value of `dtype`, copied during the call; must not
 *                    be NULL.
 * @param[in]  dtype  The element type of the scalar and of the reductions
 *                    that may use the op.
 * @param[in]  comm   The communicator the op belongs to.
 * @retval loomSuccess         `*op` is written.
 * @retval loomInvalidArgument `comm`, `op` or `scalar` is NULL, or dtype is
 *                             not a ::loomDataType_t.
 * @retval loomInvalidUsage    comm was destroyed or aborted, or never created.
 *
 * @par Blocking and threads
 * Does not block or communicate. Any thread (comm's ops are kept under a
 * lock), but the ranks must still make their ops in the same order.
 */
LOOM_API loomResult_t loomRedOpCreatePreMulSum(loomRedOp_t* op, const void* scalar, loomDataType_t dtype,
                                               loomComm_t comm);
/**
 * @brief Destroys an op made by loomRedOpCreatePreMulSum().
 *
 * Calls already made with the op are unaffected (they scaled their input
 * when they were made); later calls that name it fail with
 * ::loomInvalidArgument.
 *
 * @param[in] op   The op, from loomRedOpCreatePreMulSum() on comm.
 * @param[in] comm The communicator the op belongs to.
 * @retval loomSuccess         the op is destroyed.
 * @retval loomInvalidArgument `comm` is NULL, or op is not a live op of comm
 *                             from loomRedOpCreatePreMulSum().
 * @retval loomInvalidUsage    comm was destroyed or aborted, or never created.
 *
 * @par Blocking and threads
 * Does not block or communicate; any thread.
 */
LOOM_API loomResult_t loomRedOpDestroy(loomRedOp_t op, loomComm_t comm);
/**
 * @brief Waits for the communicator's pending operations, then frees it.
 *
 * Its registrations (loomCommRegister()) and reduction ops go with it.
 * Requests of its operations stay valid until freed with loomRequestFree().
 * Afterwards the handle is invalid: calls through it fail with
 * ::loomInvalidUsage.
 *
 * @param[in] comm The communicator; the call takes its ownership back.
 * @retval loomSuccess         comm is freed.
 * @retval loomInvalidArgument `comm` is NULL.
 * @retval loomInvalidUsage    comm was destroyed or aborted already, or never
 *                             created; or this thread's open group holds
 *                             operations on comm (call loomGroupEnd() first),
 *                             in which case nothing is freed.
 *
 * @par Blocking
 * Blocks until the pending operations have ended; each of their waits is
 * bounded by the communicator's timeout. Their failures are reported through
 * their requests, not here.
 * @par Thread safety
 * Not while another thread still uses comm, except for loomWait(), loomTest()
 * and loomRequestFree() on its requests. Should another thread's call on comm
 * still run, the communicator is freed when that call returns.
 */
LOOM_API loomResult_t loomCommDestroy(loomComm_t comm);
/**
 * @brief Fails every pending operation of comm with ::loomAborted, within a
 * second, and frees it.
 *
 * Pending requests stay valid until freed. The peers are told that this rank
 * aborted, so that they stop waiting for it rather than time out.
 * Afterwards the handle is invalid, as after loomCommDestroy().
 *
 * @param[in] comm The communicator; the call takes its ownership back.
 * @retval loomSuccess         comm is aborted and freed.
 * @retval loomInvalidArgument `comm` is NULL.
 * @retval loomInvalidUsage    comm was destroyed or aborted already, or never
 *                             created.
 *
 * @par Blocking
 * Blocks while the pending operations fail (within a second, as above),
 * unless another thread's call still holds the communicator.
 * @par Thread safety
 * Any thread, at any time, even while another thread is blocked in a call on
 * comm (which then returns ::loomAborted).
 */
LOOM_API loomResult_t loomCommAbort(loomComm_t comm);

/** @} */

/**
 * @defgroup loom_collectives Collectives and point-to-point
 * @brief The operations: reductions, data movement, Send and Recv, Barrier.
 *
 * What every one of these calls shares:
 * - Blocking: with `request` NULL the call returns when the operation is
 *   done (inside a group: at once, and the operation is done when the
 *   outermost loomGroupEnd() returns), driving its progress on the calling
 *   thread. With a `request` it returns at once; the operation runs on, and
 *   loomWait(), loomTest() or loomRequestSetCallback() give its result.
 * - Arguments are checked before anything is posted: a refused call changes
 *   nothing and leaves `*request` unwritten.
 * - Threads: a communicator takes one call at a time. A call made while
 *   another thread's call on the same communicator has not returned fails
 *   with ::loomInvalidUsage naming both, and changes nothing
 *   (@ref loom_semantics).
 * - Failure sentences: loomCommGetLastError(comm) and loomGetLastError().
 * @{
 */

/**
 * @brief Reduces count elements across all ranks; every rank receives the
 * result.
 *
 * In place when `sendbuf == recvbuf`.
 *
 * @param[in]  sendbuf This rank's count elements.
 * @param[out] recvbuf The count reduced elements.
 * @param[in]  count   Elements per rank.
 * @param[in]  dtype   Element type.
 * @param[in]  op      A ::loomRedOp_t, or an op of comm from
 *                     loomRedOpCreatePreMulSum() made for dtype.
 * @param[in]  comm    The communicator.
 * @param[in]  stream  Must be NULL (host buffers).
 * @param[out] request NULL to block; else where the handle of the posted
 *                     operation goes, owned by the caller until
 *                     loomRequestFree().
 * @retval loomSuccess         blocking: the operation completed; with a
 *                             request: it is posted and `*request` is set.
 * @retval loomInvalidArgument `comm` is NULL; dtype or op is not valid (or the
 *                             op was made for another dtype); a buffer is NULL
 *                             with bytes to go through it; the buffers overlap
 *                             other than in place; count overflows.
 * @retval loomUnsupported     `stream` is not NULL.
 * @retval loomInvalidUsage    comm was destroyed or aborted, or never created;
 *                             another thread's call on comm has not returned.
 *                             Blocking only: the ranks' calls do not match, or
 *                             comm failed earlier.
 * @retval loomTimeout         blocking only: a wait on a peer outlasted the
 *                             communicator's timeout.
 * @retval loomRemoteError     blocking only: a peer failed, or disagreed.
 * @retval loomAborted         blocking only: loomCommAbort() on comm.
 * @retval loomSystemError     blocking only: a system call failed.
 * @retval loomInternalError   blocking only: a bug in Loom.
 *
 * With a request, the "blocking only" codes come from loomWait() or loomTest().
 *
 * @par Blocking and threads
 * Blocks until done when `request` is NULL (outside a group), else returns at
 * once (@ref loom_collectives). One call at a time on comm: a call that
 * overlaps another thread's call on comm fails with ::loomInvalidUsage.
 */
LOOM_API loomResult_t loomAllReduce(const void* sendbuf, void* recvbuf, size_t count, loomDataType_t dtype, loomRedOp_t op,
                           loomComm_t comm, void* stream, loomRequest_t* request);
/**
 * @brief Every rank's sendcount elements land in every rank's recvbuf, rank
 * r's at element r * sendcount.
 *
 * recvbuf holds nranks * sendcount elements. In place when
 * `sendbuf == recvbuf + rank*sendcount`.
 *
 * @param[in]  sendbuf   This rank's sendcount elements.
 * @param[out] recvbuf   nranks * sendcount elements.
 * @param[in]  sendcount Elements each rank contributes.
 * @param[in]  dtype     Element type.
 * @param[in]  comm      The communicator.
 * @param[in]  stream    Must be NULL (host buffers).
 * @param[out] request   NULL to block; else where the handle of the posted
 *                       operation goes, owned by the caller until
 *                       loomRequestFree().
 * @retval loomSuccess         blocking: the operation completed; with a
 *                             request: it is posted and `*request` is set.
 * @retval loomInvalidArgument `comm` is NULL; dtype is not valid; a buffer is
 *                             NULL with bytes to go through it; the buffers
 *                             overlap other than in place; the size overflows.
 * @retval loomUnsupported     `stream` is not NULL.
 * @retval loomInvalidUsage    comm was destroyed or aborted, or never created;
 *                             another thread's call on comm has not returned.
 *                             Blocking only: the ranks' calls do not match, or
 *                             comm failed earlier.
 * @retval loomTimeout         blocking only: a wait on a peer outlasted the
 *                             communicator's timeout.
 * @retval loomRemoteError     blocking only: a peer failed, or disagreed.
 * @retval loomAborted         blocking only: loomCommAbort() on comm.
 * @retval loomSystemError     blocking only: a system call failed.
 * @retval loomInternalError   blocking only: a bug in Loom.
 *
 * With a request, the "blocking only" codes come from loomWait() or loomTest().
 *
 * @par Blocking and threads
 * Blocks until done when `request` is NULL (outside a group), else returns at
 * once (@ref loom_collectives). One call at a time on comm: a call that
 * overlaps another thread's call on comm fails with ::loomInvalidUsage.
 */
LOOM_API loomResult_t loomAllGather(const void* sendbuf, void* recvbuf, size_t sendcount, loomDataType_t dtype, loomComm_t comm,
                           void* stream, loomRequest_t* request);
/**
 * @brief Reduces nranks * recvcount elements across all ranks; rank r
 * receives block r (recvcount elements) of the result.
 *
 * In place when `sendbuf + rank*recvcount == recvbuf`.
 *
 * @param[in]  sendbuf   This rank's nranks * recvcount elements.
 * @param[out] recvbuf   This rank's recvcount reduced elements.
 * @param[in]  recvcount Elements each rank receives.
 * @param[in]  dtype     Element type.
 * @param[in]  op        A ::loomRedOp_t, or an op of comm from
 *                       loomRedOpCreatePreMulSum() made for dtype.
 * @param[in]  comm      The communicator.
 * @param[in]  stream    Must be NULL (host buffers).
 * @param[out] request   NULL to block; else where the handle of the posted
 *                       operation goes, owned by the caller until
 *                       loomRequestFree().
 * @retval loomSuccess         blocking: the operation completed; with a
 *                             request: it is posted and `*request` is set.
 * @retval loomInvalidArgument `comm` is NULL; dtype or op is not valid (or the
 *                             op was made for another dtype); a buffer is NULL
 *                             with bytes to go through it; the buffers overlap
 *                             other than in place; the size overflows.
 * @retval loomUnsupported     `stream` is not NULL.
 * @retval loomInvalidUsage    comm was destroyed or aborted, or never created;
 *                             another thread's call on comm has not returned.
 *                             Blocking only: the ranks' calls do not match, or
 *                             comm failed earlier.
 * @retval loomTimeout         blocking only: a wait on a peer outlasted the
 *                             communicator's timeout.
 * @retval loomRemoteError     blocking only: a peer failed, or disagreed.
 * @retval loomAborted         blocking only: loomCommAbort() on comm.
 * @retval loomSystemError     blocking only: a system call failed.
 * @retval loomInternalError   blocking only: a bug in Loom.
 *
 * With a request, the "blocking only" codes come from loomWait() or loomTest().
 *
 * @par Blocking and threads
 * Blocks until done when `request` is NULL (outside a group), else returns at
 * once (@ref loom_collectives). One call at a time on comm: a call that
 * overlaps another thread's call on comm fails with ::loomInvalidUsage.
 */
LOOM_API loomResult_t loomReduceScatter(const void* sendbuf, void* recvbuf, size_t recvcount, loomDataType_t dtype,
                               loomRedOp_t op, loomComm_t comm, void* stream, loomRequest_t* request);
/**
 * @brief The root's count elements land in every rank's recvbuf.
 *
 * sendbuf is read at the root only; it may be NULL on the other ranks. In
 * place at the root when `sendbuf == recvbuf`.
 *
 * @param[in]  sendbuf At the root: the count elements to send. Ignored
 *                     elsewhere.
 * @param[out] recvbuf The count elements, on every rank (the root included).
 * @param[in]  count   Elements.
 * @param[in]  dtype   Element type.
 * @param[in]  root    The rank that sends, 0 to nranks - 1.
 * @param[in]  comm    The communicator.
 * @param[in]  stream  Must be NULL (host buffers).
 * @param[out] request NULL to block; else where the handle of the posted
 *                     operation goes, owned by the caller until
 *                     loomRequestFree().
 * @retval loomSuccess         blocking: the operation completed; with a
 *                             request: it is posted and `*request` is set.
 * @retval loomInvalidArgument `comm` is NULL; dtype is not valid; root is not a
 *                             rank of comm; a buffer is NULL with bytes to go
 *                             through it; the buffers overlap other than in
 *                             place; count overflows.
 * @retval loomUnsupported     `stream` is not NULL.
 * @retval loomInvalidUsage    comm was destroyed or aborted, or never created;
 *                             another thread's call on comm has not returned.
 *                             Blocking only: the ranks' calls do not match, or
 *                             comm failed earlier.
 * @retval loomTimeout         blocking only: a wait on a peer outlasted the
 *                             communicator's timeout.
 * @retval loomRemoteError     blocking only: a peer failed, or disagreed.
 * @retval loomAborted         blocking only: loomCommAbort() on comm.
 * @retval loomSystemError     blocking only: a system call failed.
 * @retval loomInternalError   blocking only: a bug in Loom.
 *
 * With a request, the "blocking only" codes come from loomWait() or loomTest().
 *
 * @par Blocking and threads
 * Blocks until done when `request` is NULL (outside a group), else returns at
 * once (@ref loom_collectives). One call at a time on comm: a call that
 * overlaps another thread's call on comm fails with ::loomInvalidUsage.
 */
LOOM_API loomResult_t loomBroadcast(const void* sendbuf, void* recvbuf, size_t count, loomDataType_t dtype, int root,
                           loomComm_t comm, void* stream, loomRequest_t* request);
/**
 * @brief Reduces count elements across all ranks into the root's recvbuf.
 *
 * recvbuf is written at the root only; it may be NULL on the other ranks. In
 * place at the root when `sendbuf == recvbuf`.
 *
 * @param[in]  sendbuf This rank's count elements.
 * @param[out] recvbuf At the root: the count reduced elements. Ignored
 *                     elsewhere.
 * @param[in]  count   Elements per rank.
 * @param[in]  dtype   Element type.
 * @param[in]  op      A ::loomRedOp_t, or an op of comm from
 *                     loomRedOpCreatePreMulSum() made for dtype.
 * @param[in]  root    The rank that receives, 0 to nranks - 1.
 * @param[in]  comm    The communicator.
 * @param[in]  stream  Must be NULL (host buffers).
 * @param[out] request NULL to block; else where the handle of the posted
 *                     operation goes, owned by the caller until
 *                     loomRequestFree().
 * @retval loomSuccess         blocking: the operation completed; with a
 *                             request: it is posted and `*request` is set.
 * @retval loomInvalidArgument `comm` is NULL; dtype or op is not valid (or the
 *                             op was made for another dtype); root is not a
 *                             rank of comm; a buffer is NULL with bytes to go
 *                             through it; the buffers overlap other than in
 *                             place; count overflows.
 * @retval loomUnsupported     `stream` is not NULL.
 * @retval loomInvalidUsage    comm was destroyed or aborted, or never created;
 *                             another thread's call on comm has not returned.
 *                             Blocking only: the ranks' calls do not match, or
 *                             comm failed earlier.
 * @retval loomTimeout         blocking only: a wait on a peer outlasted the
 *                             communicator's timeout.
 * @retval loomRemoteError     blocking only: a peer failed, or disagreed.
 * @retval loomAborted         blocking only: loomCommAbort() on comm.
 * @retval loomSystemError     blocking only: a system call failed.
 * @retval loomInternalError   blocking only: a bug in Loom.
 *
 * With a request, the "blocking only" codes come from loomWait() or loomTest().
 *
 * @par Blocking and threads
 * Blocks until done when `request` is NULL (outside a group), else returns at
 * once (@ref loom_collectives). One call at a time on comm: a call that
 * overlaps another thread's call on comm fails with ::loomInvalidUsage.
 */
LOOM_API loomResult_t loomReduce(const void* sendbuf, void* recvbuf, size_t count, loomDataType_t dtype, loomRedOp_t op,
                        int root, loomComm_t comm, void* stream, loomRequest_t* request);
/**
 * @brief Every rank sends count elements to every rank: block q of sendbuf
 * goes to rank q, and block r of recvbuf comes from rank r.
 *
 * Both buffers hold nranks * count elements. In place when
 * `sendbuf == recvbuf`.
 *
 * @param[in]  sendbuf nranks blocks of count elements, one for each rank.
 * @param[out] recvbuf nranks blocks of count elements, one from each rank.
 * @param[in]  count   Elements between each pair of ranks.
 * @param[in]  dtype   Element type.
 * @param[in]  comm    The communicator.
 * @param[in]  stream  Must be NULL (host buffers).
 * @param[out] request NULL to block; else where the handle of the posted
 *                     operation goes, owned by the caller until
 *                     loomRequestFree().
 * @retval loomSuccess         blocking: the operation completed; with a
 *                             request: it is posted and `*request` is set.
 * @retval loomInvalidArgument `comm` is NULL; dtype is not valid; a buffer is
 *                             NULL with bytes to go through it; the buffers
 *                             overlap other than in place; the size overflows.
 * @retval loomUnsupported     `stream` is not NULL.
 * @retval loomInvalidUsage    comm was destroyed or aborted, or never created;
 *                             another thread's call on comm has not returned.
 *                             Blocking only: the ranks' calls do not match, or
 *                             comm failed earlier.
 * @retval loomTimeout         blocking only: a wait on a peer outlasted the
 *                             communicator's timeout.
 * @retval loomRemoteError     blocking only: a peer failed, or disagreed.
 * @retval loomAborted         blocking only: loomCommAbort() on comm.
 * @retval loomSystemError     blocking only: a system call failed.
 * @retval loomInternalError   blocking only: a bug in Loom.
 *
 * With a request, the "blocking only" codes come from loomWait() or loomTest().
 *
 * @par Blocking and threads
 * Blocks until done when `request` is NULL (outside a group), else returns at
 * once (@ref loom_collectives). One call at a time on comm: a call that
 * overlaps another thread's call on comm fails with ::loomInvalidUsage.
 */
LOOM_API loomResult_t loomAllToAll(const void* sendbuf, void* recvbuf, size_t count, loomDataType_t dtype, loomComm_t comm,
                          void* stream, loomRequest_t* request);
/**
 * @brief AllToAll with a count and a displacement per rank, as
 * MPI_Alltoallv.
 *
 * AllToAllv, as MPI_Alltoallv: this rank sends sendcounts[q] elements at
 * sendbuf + sdispls[q] to rank q, and receives recvcounts[q] elements from
 * rank q at recvbuf + rdispls[q] (counts and displacements in elements,
 * nranks entries each, read before the call returns). What rank r sends
 * rank q must be what q expects from r: where they disagree, q fails on
 * r's first message with ::loomInvalidUsage naming both counts (ranks left
 * waiting on q then fail with ::loomRemoteError quoting it). There is no in-place
 * form: the buffers' used ranges may not overlap.
 *
 * @param[in]  sendbuf    The blocks to send.
 * @param[in]  sendcounts nranks counts: elements to send to each rank.
 * @param[in]  sdispls    nranks displacements into sendbuf, in elements.
 * @param[out] recvbuf    Where the received blocks go.
 * @param[in]  recvcounts nranks counts: elements to receive from each rank.
 * @param[in]  rdispls    nranks displacements into recvbuf, in elements.
 * @param[in]  dtype      Element type.
 * @param[in]  comm       The communicator.
 * @param[in]  stream     Must be NULL (host buffers).
 * @param[out] request    NULL to block; else where the handle of the posted
 *                        operation goes, owned by the caller until
 *                        loomRequestFree().
 * @retval loomSuccess         blocking: the operation completed; with a
 *                             request: it is posted and `*request` is set.
 * @retval loomInvalidArgument `comm` or one of the four arrays is NULL; dtype
 *                             is not valid; a block ends past the addressable
 *                             range; a buffer is NULL with bytes to go through
 *                             it; what this rank sends itself differs from
 *                             what it receives from itself; the buffers'
 *                             used ranges overlap.
 * @retval loomUnsupported     `stream` is not NULL.
 * @retval loomInvalidUsage    comm was destroyed or aborted, or never created;
 *                             another thread's call on comm has not returned.
 *                             Blocking only: the ranks' counts or calls do not
 *                             match, or comm failed earlier.
 * @retval loomTimeout         blocking only: a wait on a peer outlasted the
 *                             communicator's timeout.
 * @retval loomRemoteError     blocking only: a peer failed, or disagreed.
 * @retval loomAborted         blocking only: loomCommAbort() on comm.
 * @retval loomSystemError     blocking only: a system call failed.
 * @retval loomInternalError   blocking only: a bug in Loom.
 *
 * With a request, the "blocking only" codes come from loomWait() or loomTest().
 *
 * @par Blocking and threads
 * Blocks until done when `request` is NULL (outside a group), else returns at
 * once (@ref loom_collectives). One call at a time on comm: a call that
 * overlaps another thread's call on comm fails with ::loomInvalidUsage.
 */
LOOM_API loomResult_t loomAllToAllv(const void* sendbuf, const size_t* sendcounts, const size_t* sdispls, void* recvbuf,
                                    const size_t* recvcounts, const size_t* rdispls, loomDataType_t dtype,
                                    loomComm_t comm, void* stream, loomRequest_t* request);
/**
 * @brief Every rank's sendcount elements land in the root's recvbuf, as
 * MPI_Gather.
 *
 * Gather: every rank's sendcount elements land in the root's recvbuf, rank r's
 * at element r * sendcount (recvbuf holds nranks * sendcount; it matters at
 * the root only, as in MPI_Gather). In place at the root:
 * `sendbuf == recvbuf + root * count`. (loomScatter() is its inverse.)
 *
 * @param[in]  sendbuf   This rank's sendcount elements.
 * @param[out] recvbuf   At the root: nranks * sendcount elements. Ignored
 *                       elsewhere (it may be NULL).
 * @param[in]  sendcount Elements each rank contributes.
 * @param[in]  dtype     Element type.
 * @param[in]  root      The rank that receives, 0 to nranks - 1.
 * @param[in]  comm      The communicator.
 * @param[in]  stream    Must be NULL (host buffers).
 * @param[out] request   NULL to block; else where the handle of the posted
 *                       operation goes, owned by the caller until
 *                       loomRequestFree().
 * @retval loomSuccess         blocking: the operation completed; with a
 *                             request: it is posted and `*request` is set.
 * @retval loomInvalidArgument `comm` is NULL; dtype is not valid; root is not a
 *                             rank of comm; a buffer is NULL with bytes to go
 *                             through it; the buffers overlap other than in
 *                             place; the size overflows.
 * @retval loomUnsupported     `stream` is not NULL.
 * @retval loomInvalidUsage    comm was destroyed or aborted, or never created;
 *                             another thread's call on comm has not returned.
 *                             Blocking only: the ranks' calls do not match, or
 *                             comm failed earlier.
 * @retval loomTimeout         blocking only: a wait on a peer outlasted the
 *                             communicator's timeout.
 * @retval loomRemoteError     blocking only: a peer failed, or disagreed.
 * @retval loomAborted         blocking only: loomCommAbort() on comm.
 * @retval loomSystemError     blocking only: a system call failed.
 * @retval loomInternalError   blocking only: a bug in Loom.
 *
 * With a request, the "blocking only" codes come from loomWait() or loomTest().
 *
 * @par Blocking and threads
 * Blocks until done when `request` is NULL (outside a group), else returns at
 * once (@ref loom_collectives). One call at a time on comm: a call that
 * overlaps another thread's call on comm fails with ::loomInvalidUsage.
 */
LOOM_API loomResult_t loomGather(const void* sendbuf, void* recvbuf, size_t sendcount, loomDataType_t dtype, int root,
                                 loomComm_t comm, void* stream, loomRequest_t* request);
/**
 * @brief Block r of the root's sendbuf lands in rank r's recvbuf, as
 * MPI_Scatter.
 *
 * Scatter: block r of the root's sendbuf (recvcount elements at
 * r * recvcount) lands in rank r's recvbuf; sendbuf matters at the root only.
 * In place at the root: `recvbuf == sendbuf + root * count`. (loomGather() is
 * its inverse.)
 *
 * @param[in]  sendbuf   At the root: nranks * recvcount elements. Ignored
 *                       elsewhere (it may be NULL).
 * @param[out] recvbuf   This rank's recvcount elements.
 * @param[in]  recvcount Elements each rank receives.
 * @param[in]  dtype     Element type.
 * @param[in]  root      The rank that sends, 0 to nranks - 1.
 * @param[in]  comm      The communicator.
 * @param[in]  stream    Must be NULL (host buffers).
 * @param[out] request   NULL to block; else where the handle of the posted
 *                       operation goes, owned by the caller until
 *                       loomRequestFree().
 * @retval loomSuccess         blocking: the operation completed; with a
 *                             request: it is posted and `*request` is set.
 * @retval loomInvalidArgument `comm` is NULL; dtype is not valid; root is not a
 *                             rank of comm; a buffer is NULL with bytes to go
 *                             through it; the buffers overlap other than in
 *                             place; the size overflows.
 * @retval loomUnsupported     `stream` is not NULL.
 * @retval loomInvalidUsage    comm was destroyed or aborted, or never created;
 *                             another thread's call on comm has not returned.
 *                             Blocking only: the ranks' calls do not match, or
 *                             comm failed earlier.
 * @retval loomTimeout         blocking only: a wait on a peer outlasted the
 *                             communicator's timeout.
 * @retval loomRemoteError     blocking only: a peer failed, or disagreed.
 * @retval loomAborted         blocking only: loomCommAbort() on comm.
 * @retval loomSystemError     blocking only: a system call failed.
 * @retval loomInternalError   blocking only: a bug in Loom.
 *
 * With a request, the "blocking only" codes come from loomWait() or loomTest().
 *
 * @par Blocking and threads
 * Blocks until done when `request` is NULL (outside a group), else returns at
 * once (@ref loom_collectives). One call at a time on comm: a call that
 * overlaps another thread's call on comm fails with ::loomInvalidUsage.
 */
LOOM_API loomResult_t loomScatter(const void* sendbuf, void* recvbuf, size_t recvcount, loomDataType_t dtype, int root,
                                  loomComm_t comm, void* stream, loomRequest_t* request);
/**
 * @brief Sends count elements to rank peer, as MPI_Isend.
 *
 * Matches the peer's next unmatched loomRecv() from this rank, which must
 * have the same count and dtype; an empty Send (count 0) is one message too.
 * Sends and Recvs progress whatever order they were posted in, and never hold
 * up comm's collectives (@ref loom_semantics).
 *
 * @param[in]  buf     The count elements to send (NULL if count is 0).
 * @param[in]  count   Elements.
 * @param[in]  dtype   Element type.
 * @param[in]  peer    The receiving rank, 0 to nranks - 1, not this rank.
 * @param[in]  comm    The communicator.
 * @param[in]  stream  Must be NULL (host buffers).
 * @param[out] request NULL to block; else where the handle of the posted
 *                     operation goes, owned by the caller until
 *                     loomRequestFree().
 * @retval loomSuccess         blocking: the message is sent; with a request:
 *                             it is posted and `*request` is set.
 * @retval loomInvalidArgument `comm` is NULL; dtype is not valid; peer is not a
 *                             rank of comm, or is this rank; buf is NULL with
 *                             bytes to send; count overflows.
 * @retval loomUnsupported     `stream` is not NULL.
 * @retval loomInvalidUsage    comm was destroyed or aborted, or never created;
 *                             another thread's call on comm has not returned.
 *                             Blocking only: comm failed earlier.
 * @retval loomTimeout         blocking only: a wait on the peer outlasted the
 *                             communicator's timeout.
 * @retval loomRemoteError     blocking only: the peer failed.
 * @retval loomAborted         blocking only: loomCommAbort() on comm.
 * @retval loomSystemError     blocking only: a system call failed.
 * @retval loomInternalError   blocking only: a bug in Loom.
 *
 * With a request, the "blocking only" codes come from loomWait() or loomTest().
 *
 * @par Blocking and threads
 * Blocks until done when `request` is NULL (outside a group), else returns at
 * once (@ref loom_collectives). One call at a time on comm: a call that
 * overlaps another thread's call on comm fails with ::loomInvalidUsage.
 */
LOOM_API loomResult_t loomSend(const void* buf, size_t count, loomDataType_t dtype, int peer, loomComm_t comm, void* stream,
                      loomRequest_t* request);
/**
 * @brief Receives count elements from rank peer, as MPI_Irecv.
 *
 * Matches peer's next unmatched loomSend() to this rank. A Recv's count and
 * datatype must equal the matching Send's: otherwise the Recv fails with
 * ::loomInvalidUsage naming both.
 *
 * @param[out] buf     Where the count elements go (NULL if count is 0).
 * @param[in]  count   Elements.
 * @param[in]  dtype   Element type.
 * @param[in]  peer    The sending rank, 0 to nranks - 1, not this rank.
 * @param[in]  comm    The communicator.
 * @param[in]  stream  Must be NULL (host buffers).
 * @param[out] request NULL to block; else where the handle of the posted
 *                     operation goes, owned by the caller until
 *                     loomRequestFree().
 * @retval loomSuccess         blocking: the message is received; with a
 *                             request: it is posted and `*request` is set.
 * @retval loomInvalidArgument `comm` is NULL; dtype is not valid; peer is not a
 *                             rank of comm, or is this rank; buf is NULL with
 *                             bytes to receive; count overflows.
 * @retval loomUnsupported     `stream` is not NULL.
 * @retval loomInvalidUsage    comm was destroyed or aborted, or never created;
 *                             another thread's call on comm has not returned.
 *                             Blocking only: the matching Send's count or
 *                             dtype differs, or comm failed earlier.
 * @retval loomTimeout         blocking only: a wait on the peer outlasted the
 *                             communicator's timeout.
 * @retval loomRemoteError     blocking only: the peer failed.
 * @retval loomAborted         blocking only: loomCommAbort() on comm.
 * @retval loomSystemError     blocking only: a system call failed.
 * @retval loomInternalError   blocking only: a bug in Loom.
 *
 * With a request, the "blocking only" codes come from loomWait() or loomTest().
 *
 * @par Blocking and threads
 * Blocks until done when `request` is NULL (outside a group), else returns at
 * once (@ref loom_collectives). One call at a time on comm: a call that
 * overlaps another thread's call on comm fails with ::loomInvalidUsage.
 */
LOOM_API loomResult_t loomRecv(void* buf, size_t count, loomDataType_t dtype, int peer, loomComm_t comm, void* stream,
                      loomRequest_t* request);
/**
 * @brief Sends count elements to rank peer with a tag, as MPI_Isend.
 *
 * loomSend() is this with tag 0. Messages between a pair match by tag: the
 * Sends and Recvs of one tag match in posting order, while a Recv of one
 * tag never waits behind a message of another. A message that arrives
 * before a Recv asks for its tag waits in the receiver's memory (as an
 * MPI implementation's unexpected messages do) until one does, or until
 * the communicator ends.
 *
 * @param[in]  buf     The count elements to send (NULL if count is 0).
 * @param[in]  count   Elements.
 * @param[in]  dtype   Element type.
 * @param[in]  peer    The receiving rank, 0 to nranks - 1, not this rank.
 * @param[in]  tag     0 or more; the receiver's loomRecvTagged() names it.
 * @param[in]  comm    The communicator.
 * @param[in]  stream  Must be NULL (host buffers).
 * @param[out] request NULL to block; else where the handle of the posted
 *                     operation goes, owned by the caller until
 *                     loomRequestFree().
 * @return As loomSend(); also ::loomInvalidArgument when tag is negative.
 */
LOOM_API loomResult_t loomSendTagged(const void* buf, size_t count, loomDataType_t dtype, int peer, int tag,
                                     loomComm_t comm, void* stream, loomRequest_t* request);
/**
 * @brief Receives count elements with a tag from rank peer, as MPI_Irecv.
 *
 * loomRecv() is this with tag 0. Matches peer's next unmatched Send of the
 * same tag (loomSendTagged(), or loomSend() for tag 0); its count and
 * datatype must equal that Send's, otherwise the Recv fails with
 * ::loomInvalidUsage naming the message, its tag and both counts.
 *
 * @param[out] buf     Where the count elements go (NULL if count is 0).
 * @param[in]  count   Elements.
 * @param[in]  dtype   Element type.
 * @param[in]  peer    The sending rank, 0 to nranks - 1, not this rank.
 * @param[in]  tag     0 or more: the tag the Send gave its message.
 * @param[in]  comm    The communicator.
 * @param[in]  stream  Must be NULL (host buffers).
 * @param[out] request NULL to block; else where the handle of the posted
 *                     operation goes, owned by the caller until
 *                     loomRequestFree().
 * @return As loomRecv(); also ::loomInvalidArgument when tag is negative.
 */
LOOM_API loomResult_t loomRecvTagged(void* buf, size_t count, loomDataType_t dtype, int peer, int tag, loomComm_t comm,
                                     void* stream, loomRequest_t* request);
/**
 * @brief Receives the first message of a tag from any rank, as MPI_Irecv
 * with MPI_ANY_SOURCE.
 *
 * Takes the next message of `tag` that any other rank sends this rank
 * (loomSendTagged(), or loomSend() for tag 0), and says which rank sent
 * it. As in MPI, a message goes to the earliest posted Recv that matches
 * it: a Recv from any source posted before a Recv that names the sender
 * takes the sender's message first, and the other way round. Its count
 * and datatype must equal that Send's, otherwise it fails with
 * ::loomInvalidUsage naming the message, its sender and both counts.
 *
 * @param[out] buf     Where the count elements go (NULL if count is 0).
 * @param[in]  count   Elements.
 * @param[in]  dtype   Element type.
 * @param[in]  tag     0 or more: the tag the Send gave its message.
 * @param[out] source  NULL, or where the sender's rank goes, written before
 *                     the Recv completes (before a blocking call returns,
 *                     or loomWait() reports it done); it must stay valid
 *                     until then.
 * @param[in]  comm    The communicator, of two ranks or more.
 * @param[in]  stream  Must be NULL (host buffers).
 * @param[out] request NULL to block; else where the handle of the posted
 *                     operation goes, owned by the caller until
 *                     loomRequestFree().
 * @return As loomRecv(); ::loomInvalidArgument when tag is negative,
 *         ::loomInvalidUsage on a communicator of one rank. A wait that
 *         outlasts the communicator's timeout fails with ::loomTimeout
 *         saying that no rank sent a matching message.
 */
LOOM_API loomResult_t loomRecvAnySource(void* buf, size_t count, loomDataType_t dtype, int tag, int* source,
                                        loomComm_t comm, void* stream, loomRequest_t* request);
/**
 * @brief Completes once every rank of comm has called it.
 *
 * A collective like the others: it takes its place among comm's collectives
 * in call order.
 *
 * @param[in]  comm    The communicator.
 * @param[out] request NULL to block; else where the handle of the posted
 *                     operation goes, owned by the caller until
 *                     loomRequestFree().
 * @retval loomSuccess         blocking: every rank has arrived; with a
 *                             request: it is posted and `*request` is set.
 * @retval loomInvalidArgument `comm` is NULL.
 * @retval loomInvalidUsage    comm was destroyed or aborted, or never created;
 *                             another thread's call on comm has not returned.
 *                             Blocking only: the ranks' calls do not match, or
 *                             comm failed earlier.
 * @retval loomTimeout         blocking only: a wait on a peer outlasted the
 *                             communicator's timeout.
 * @retval loomRemoteError     blocking only: a peer failed, or disagreed.
 * @retval loomAborted         blocking only: loomCommAbort() on comm.
 * @retval loomSystemError     blocking only: a system call failed.
 * @retval loomInternalError   blocking only: a bug in Loom.
 *
 * With a request, the "blocking only" codes come from loomWait() or loomTest().
 *
 * @par Blocking and threads
 * Blocks until done when `request` is NULL (outside a group), else returns at
 * once (@ref loom_collectives). One call at a time on comm: a call that
 * overlaps another thread's call on comm fails with ::loomInvalidUsage.
 */
LOOM_API loomResult_t loomBarrier(loomComm_t comm, loomRequest_t* request);

/** @} */

/**
 * @defgroup loom_semantics Matching, threads and groups
 * @brief How Sends and Recvs match, what mismatched calls do, calls from
 * several threads, and groups (loomGroupStart(), loomGroupEnd()).
 *
 * Point-to-point semantics, as MPI's Isend/Irecv: posted Sends and Recvs
 * progress whatever order they were posted in (every rank may post its Recv
 * before its Send), and the Sends and Recvs of one tag between one pair of
 * ranks match in posting order (loomSend() and loomRecv() use tag 0; a Recv
 * of one tag never waits behind a message of another: loomSendTagged();
 * loomRecvAnySource() takes part in the same posting order).
 * A Recv's count and datatype must equal the matching
 * Send's: otherwise the Recv fails with ::loomInvalidUsage naming both. Sends
 * and Recvs in flight never hold up the communicator's collectives, nor the
 * other way round; collectives run in the order they were called.
 *
 * Mismatched calls: every message carries its operation's kind, number,
 * count, datatype, op and root, and its receiver checks them before reading
 * a byte, so ranks that called different collectives (or one with other
 * arguments) fail on their first exchange with ::loomInvalidUsage naming both
 * calls; ranks that were only waiting on them get ::loomRemoteError quoting
 * that sentence. A rank whose part of the call needed nothing from the
 * disagreeing ranks (a Broadcast root, a Send) finishes it and gets the
 * error from its next call. A communicator that failed refuses further
 * calls until destroyed or aborted.
 *
 * Threads: a communicator takes one call at a time. A call (a blocking one
 * until it returns) made while another thread's call on the same
 * communicator has not returned fails with ::loomInvalidUsage naming both,
 * and changes nothing. loomWait(), loomTest(), loomRequestFree() and
 * loomCommAbort() may be called from any thread at any time. Communicators
 * are independent: one per thread (loomCommSplit()) is the way to issue
 * from several threads. Calls from several threads that never overlap run
 * in the order they were made, which must be the same on every rank.
 *
 * Groups, as ncclGroupStart/ncclGroupEnd: the calls a thread makes between
 * them are checked at once (bad arguments fail the call itself) and
 * launched together by the outermost loomGroupEnd(). A call inside a group
 * that has a request returns its handle at once; a blocking call (request
 * NULL) returns ::loomSuccess at once and is complete when loomGroupEnd()
 * returns. Groups nest. loomGroupEnd() returns the first failure among the
 * group's blocking calls, its sentence (from loomGetLastError()) naming the
 * operation; a failed call with a request reports through its request.
 * @{
 */

/**
 * @brief Opens a group on this thread (groups nest).
 *
 * The calls this thread makes until the matching outermost loomGroupEnd() are
 * checked at once and launched together by it (see @ref loom_semantics).
 *
 * @retval loomSuccess Always.
 *
 * @par Blocking and threads
 * Does not block. Groups are per thread: it affects only the calling thread's
 * calls.
 */
LOOM_API loomResult_t loomGroupStart(void);
/**
 * @brief Closes this thread's innermost group; the outermost one launches
 * the group's calls and waits for its blocking ones.
 *
 * Each communicator gets the group's operations in one batch, so a Recv and
 * a Send to the same peer called in either order both progress.
 *
 * @return ::loomSuccess when an inner group closes, or when every blocking
 *         call of the outermost group has completed; otherwise the first
 *         failure among the group's blocking calls (the codes of
 *         loomAllReduce() and the others), its sentence in
 *         loomGetLastError() naming the operation. Calls with a request report
 *         through their request, not here.
 * @retval loomInvalidUsage this thread has no open group (from
 *                          loomGroupStart()), or one of its blocking calls
 *                          failed so.
 *
 * @par Blocking
 * The outermost loomGroupEnd() blocks until the group's blocking calls are
 * done; an inner one returns at once.
 * @par Thread safety
 * Groups are per thread: it ends the calling thread's group only.
 */
LOOM_API loomResult_t loomGroupEnd(void);

/** @} */

/**
 * @defgroup loom_registered Registered buffers
 * @brief Single-copy collectives on one host.
 *
 * Registered buffers: single-copy collectives on one host.
 *
 * loomMemAlloc() returns page-aligned host memory that other processes can map
 * (a memfd); loomMemFree() releases it (NULL is a no-op) and fails with
 * ::loomInvalidUsage while a communicator still has it registered.
 *
 * loomCommRegister() is collective over comm: every rank calls it, in the same
 * order relative to its other collectives, each with its own buffer (sizes
 * may differ). buff..buff+size must lie inside one loomMemAlloc() allocation.
 * Every rank then maps every other's buffer, or, if any rank cannot (ranks in
 * different pid namespaces or under different users), all fail alike with
 * ::loomSystemError and nothing is registered. Once registered, an AllReduce,
 * AllGather or ReduceScatter whose send and receive buffers lie in
 * registered buffers on every rank may copy each byte once, straight between
 * the ranks' buffers, instead of staging it through shared-memory FIFOs:
 * the cost model weighs that against the other schedules at each size (from
 * LOOM_DIRECT_MIN_BYTES when set). Calls with any other buffers take the
 * other schedules. loomCommDeregister() is collective too: every
 * rank passes the handle of the same registration. Destroying the
 * communicator drops its registrations.
 *
 * Where some ranks reach each other over a transport that cannot register
 * memory (TCP), the registration succeeds but maps nothing: calls on it run
 * through the FIFOs on every rank alike.
 * @{
 */

/**
 * @brief Allocates host memory that loomCommRegister() can share with the
 * other ranks of this host.
 *
 * Page-aligned; the size is rounded up to whole pages.
 *
 * @param[out] ptr  Where the memory's address goes; must not be NULL. Set to
 *                  NULL first. The caller owns the memory and frees it with
 *                  loomMemFree().
 * @param[in]  size Bytes, more than 0.
 * @retval loomSuccess         `*ptr` is the memory.
 * @retval loomInvalidArgument `ptr` is NULL, or size is 0 or too large.
 * @retval loomSystemError     creating, sizing or mapping the memfd failed.
 * @retval loomUnsupported     no transport of this build allocates
 *                             registrable memory.
 *
 * @par Blocking and threads
 * Does not block beyond the system calls; any thread. Needs no communicator.
 */
LOOM_API loomResult_t loomMemAlloc(void** ptr, size_t size);
/**
 * @brief Frees memory from loomMemAlloc().
 *
 * @param[in] ptr The address loomMemAlloc() gave, or NULL (then it does
 *                nothing).
 * @retval loomSuccess         the memory is freed, or ptr is NULL.
 * @retval loomInvalidArgument ptr is not the start of memory from
 *                             loomMemAlloc(), or was freed already.
 * @retval loomInvalidUsage    a communicator still has the memory registered
 *                             (loomCommDeregister() it, or destroy the
 *                             communicator, first); nothing is freed.
 *
 * @par Blocking and threads
 * Does not block; any thread.
 */
LOOM_API loomResult_t loomMemFree(void* ptr);
/**
 * @brief Registers this rank's buffer with comm, for single-copy
 * collectives; collective over comm.
 *
 * While registered, the memory cannot be freed with loomMemFree().
 *
 * @param[in]  comm   The communicator.
 * @param[in]  buff   The buffer; buff..buff+size must lie inside one
 *                    loomMemAlloc() allocation. Must not be NULL.
 * @param[in]  size   Bytes, more than 0; may differ between ranks.
 * @param[out] handle Where the registration's handle goes; must not be NULL.
 *                    Set to NULL first. An opaque value owned by comm (not an
 *                    address): pass it to loomCommDeregister(); it is
 *                    dropped with comm.
 * @retval loomSuccess         every rank registered its buffer.
 * @retval loomInvalidArgument `comm` or `handle` is NULL; buff is NULL or size
 *                             is 0; the range is not inside one loomMemAlloc()
 *                             allocation (this rank fails before it waits for
 *                             the others).
 * @retval loomSystemError     some rank cannot map another's buffer: every
 *                             rank fails alike and nothing is registered.
 * @retval loomInvalidUsage    comm was destroyed or aborted, or never created;
 *                             another thread's call on comm has not returned;
 *                             comm failed earlier.
 * @retval loomTimeout         a wait on a peer outlasted the timeout.
 * @retval loomRemoteError     a peer failed, or sent an unreadable offer.
 * @retval loomAborted         loomCommAbort() on comm.
 *
 * @par Blocking
 * Blocks until every rank has registered, ordered after the operations
 * issued before it; each wait is bounded by the communicator's timeout.
 * @par Thread safety
 * One call at a time on comm, as the collectives (@ref loom_semantics).
 */
LOOM_API loomResult_t loomCommRegister(loomComm_t comm, void* buff, size_t size, void** handle);
/**
 * @brief Drops a registration of comm; collective over comm.
 *
 * Every rank passes the handle of the same registration.
 *
 * @param[in] comm   The communicator.
 * @param[in] handle The handle loomCommRegister() gave; must not be NULL.
 * @retval loomSuccess         every rank dropped the registration.
 * @retval loomInvalidArgument `comm` or `handle` is NULL, or a rank passed a
 *                             handle that is not a live registration of comm:
 *                             nothing is deregistered.
 * @retval loomInvalidUsage    the ranks passed different registrations
 *                             (nothing is deregistered); comm was destroyed
 *                             or aborted, or never created; another thread's
 *                             call on comm has not returned; comm failed
 *                             earlier.
 * @retval loomTimeout         a wait on a peer outlasted the timeout.
 * @retval loomRemoteError     a peer failed.
 * @retval loomAborted         loomCommAbort() on comm.
 *
 * @par Blocking
 * Blocks until every rank has deregistered, ordered after the operations
 * issued before it; each wait is bounded by the communicator's timeout.
 * @par Thread safety
 * One call at a time on comm, as the collectives (@ref loom_semantics).
 */
LOOM_API loomResult_t loomCommDeregister(loomComm_t comm, void* handle);

/** @} */

/**
 * @defgroup loom_requests Requests
 * @brief Waiting on, testing and freeing posted operations, and completion
 * callbacks.
 * @{
 */

/**
 * @brief Waits for a posted operation, up to timeoutMs.
 *
 * ::loomSuccess once done; otherwise the operation's own error. timeoutMs -1
 * waits until the operation ends: it cannot hang, since each of its waits on
 * a peer is bounded by the communicator's timeout, and a timed-out
 * operation's sentence names the rank it waited for. timeoutMs >= 0 (0:
 * poll; large values saturate) returns ::loomTimeout when the operation is not
 * done by then, while the operation keeps running and the request stays
 * valid.
 *
 * An operation that itself timed out also gives ::loomTimeout; the two differ
 * in their sentence (loomGetLastError(): "...is not done after N ms; it keeps
 * running" for the former), and loomTest() then reports done. It may be
 * called again on the same request, before or after it is done.
 *
 * @param[in] request   The request; not NULL. It stays the caller's (free it
 *                      with loomRequestFree()).
 * @param[in] timeoutMs -1 to wait until the operation ends, else how many
 *                      milliseconds to wait at most (0: just look).
 * @retval loomSuccess         the operation completed successfully.
 * @retval loomTimeout         the operation is not done within timeoutMs; or
 *                             it failed with ::loomTimeout itself.
 * @retval loomInvalidArgument `request` is NULL, or timeoutMs is below -1.
 * @return Otherwise the operation's own failure code (::loomInvalidUsage,
 *         ::loomRemoteError, ::loomAborted, ::loomSystemError,
 *         ::loomInternalError...), its sentence in loomGetLastError().
 *
 * @par Blocking
 * Blocks until the operation ends or timeoutMs passes, driving the
 * communicator's progress on the calling thread meanwhile.
 * @par Thread safety
 * Any thread, at any time; not after the request was freed.
 */
LOOM_API loomResult_t loomWait(loomRequest_t request, int64_t timeoutMs);
/**
 * @brief Whether a posted operation is done, without waiting.
 *
 * @param[in]  request The request; not NULL. It stays the caller's.
 * @param[out] done    Set to 1 if the operation has ended, else 0; must not
 *                     be NULL.
 * @retval loomSuccess         `*done` is 0 (the operation is still running),
 *                             or 1 and the operation completed successfully.
 * @retval loomInvalidArgument `request` or `done` is NULL.
 * @return Otherwise (`*done` is 1) the operation's own failure code, its
 *         sentence in loomGetLastError().
 *
 * @par Blocking
 * Does not block; makes one round of progress when no other thread drives
 * the communicator.
 * @par Thread safety
 * Any thread, at any time; not after the request was freed.
 */
LOOM_API loomResult_t loomTest(loomRequest_t request, int* done);
/**
 * @brief Frees a request handle.
 *
 * May be called on a finished or pending request; a pending op still runs.
 * A failure of it still shows in loomCommGetAsyncError() and
 * loomCommGetLastError(), and reaches its callback if one is set.
 *
 * @param[in] request The request, which the call takes back; not usable
 *                    afterwards.
 * @retval loomSuccess         the handle is freed.
 * @retval loomInvalidArgument `request` is NULL.
 *
 * @par Blocking and threads
 * Does not block. Any thread, at any time, but not while another thread
 * still uses the same request.
 */
LOOM_API loomResult_t loomRequestFree(loomRequest_t request);
/**
 * @brief What loomRequestSetCallback() calls when an operation ends.
 *
 * @param[in] request  The request the callback was set on; use it only for
 *                     loomWait(request, 0), to read the failure sentence.
 * @param[in] result   The operation's result.
 * @param[in] userData What was passed to loomRequestSetCallback().
 */
typedef void (*loomCallback_t)(loomRequest_t request, loomResult_t result, void* userData);
/**
 * @brief Has Loom call callback once, when the operation ends.
 *
 * Calls callback(request, result, userData) once, when the operation ends,
 * with its result: on the thread that ends it (the communicator's progress
 * thread, or a thread inside loomWait(), loomTest() or a blocking call on that
 * communicator), or on the calling thread before this returns if it has
 * ended already. This is how a framework completes its futures without a
 * thread per operation. The callback must return quickly and must not call
 * Loom on that communicator (it runs inside its progress); it must not free
 * the request, and `request` may be used in it only for loomWait(request, 0)
 * to read the failure sentence. One callback per request: a second call
 * fails with ::loomInvalidUsage and leaves the first.
 *
 * @param[in] request  The request; not NULL. It stays the caller's.
 * @param[in] callback The function to call; not NULL.
 * @param[in] userData Passed to callback as it is; Loom never reads it.
 * @retval loomSuccess         the callback is set (and may have run already).
 * @retval loomInvalidArgument `request` or `callback` is NULL.
 * @retval loomInvalidUsage    the request has a callback already; it keeps it.
 *
 * @par Blocking
 * Does not block, except to run the callback here when the operation has
 * ended already.
 * @par Thread safety
 * Any thread; a callback set while the operation ends runs exactly once.
 */
LOOM_API loomResult_t loomRequestSetCallback(loomRequest_t request, loomCallback_t callback, void* userData);

/** @} */

/**
 * @defgroup loom_typeinfo Element types and ops by name
 * @brief Sizes and names of ::loomDataType_t and ::loomRedOp_t values.
 *
 * None of these blocks; any thread, any time.
 * @{
 */

/**
 * @brief The size in bytes of one element of dtype.
 *
 * @param[in] dtype An element type.
 * @return 1, 2, 4 or 8; 0 for an unknown dtype.
 */
LOOM_API size_t loomTypeSize(loomDataType_t dtype); /* 0 for an unknown dtype */
/**
 * @brief The name of dtype: "int8", "uint8", "int32", "uint32", "int64",
 * "uint64", "float16", "bfloat16", "float32" or "float64".
 *
 * @param[in] dtype An element type.
 * @return A static string owned by Loom, never NULL: the name, or "unknown".
 */
LOOM_API const char* loomTypeName(loomDataType_t dtype);
/**
 * @brief The name of op: "sum", "prod", "max", "min" or "avg".
 *
 * @param[in] op A reduction op.
 * @return A static string owned by Loom, never NULL: the name; "premulsum"
 *         for a value past Loom's own (a communicator's op from
 *         loomRedOpCreatePreMulSum()); "unknown" for a negative one.
 */
LOOM_API const char* loomOpName(loomRedOp_t op);

/** @} */

#ifdef __cplusplus
}
#endif

#endif /* LOOM_LOOM_H */
