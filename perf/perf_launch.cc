#include "perf_launch.h"

#include <cstdio>
#include <cstdlib>

#include "perf_options.h"

#ifdef LOOM_PERF_WITH_MPI
#include <mpi.h>
#endif

namespace loom::perf {
namespace {

bool envSet(const char* name) {
  return std::getenv(name) != nullptr;
}

[[noreturn]] void failInit(const char* what, loomResult_t rc) {
  std::fprintf(stderr, "perf: %s failed: %s: %s\n", what, loomGetErrorString(rc), loomGetLastError());
  std::exit(kExitLibraryError);  // as nccl-tests on a failed NCCL call
}

}  // namespace

Launch launchCommunicator(const loomConfig_t* config) {
  Launch launch;
#ifdef LOOM_PERF_WITH_MPI
  // Under mpirun without MASTER_ADDR, MPI carries the unique id.
  if (envSet("OMPI_COMM_WORLD_SIZE") && !envSet("MASTER_ADDR")) {
    MPI_Init(nullptr, nullptr);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    loomUniqueId id;
    if (rank == 0) {
      loomResult_t rc = loomGetUniqueId(&id);
      if (rc != loomSuccess) failInit("loomGetUniqueId", rc);
    }
    MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
    loomResult_t rc = loomCommInitRank(&launch.comm, size, id, rank, config);
    if (rc != loomSuccess) failInit("loomCommInitRank", rc);
    launch.how = "mpirun (unique id over MPI)";
    return launch;
  }
#endif
  if (envSet("RANK") || envSet("OMPI_COMM_WORLD_RANK") || envSet("SLURM_PROCID") || envSet("PMI_RANK")) {
    loomResult_t rc = loomCommInitFromEnv(&launch.comm, config);
    if (rc != loomSuccess) failInit("loomCommInitFromEnv", rc);
    launch.how = "launcher environment";
    return launch;
  }
  loomUniqueId id;
  loomResult_t rc = loomGetUniqueId(&id);
  if (rc != loomSuccess) failInit("loomGetUniqueId", rc);
  rc = loomCommInitRank(&launch.comm, 1, id, 0, config);
  if (rc != loomSuccess) failInit("loomCommInitRank", rc);
  launch.how = "single process (use loomrun -n N or mpirun -np N for more ranks)";
  return launch;
}

void finishLaunch(const Launch& launch) {
  loomCommDestroy(launch.comm);
#ifdef LOOM_PERF_WITH_MPI
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) MPI_Finalize();
#endif
}

}  // namespace loom::perf
