// loom-topo --calibrate: measures the cost model's constants for shared
// memory on this machine and writes them as a tuning file
// (collectives/tuning_file.h) that LOOM_TUNING_FILE loads.
#pragma once

#include <loom/loom.h>

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "collectives/cost_model.h"
#include "topology/topology.h"

namespace loom::topo {

// Runs `ranks` processes of this host (forked), each AllReduce and
// AllGather schedule the model weighs at a small size and four large ones,
// fits the constants, prints what it measured and fitted to `report`, and
// writes the file to `outPath`. Throws Error with a sentence on failure.
void calibrate(std::ostream& report, const Topology& t, int ranks, const std::string& outPath);

// Where `cpus` (the CPUs loom-topo may run on) lie on two sockets of `t`
// or more, measures the interconnect between the first two into `costs`'
// socketLink (latency beyond shared memory's, bandwidth each way) and says
// so to `report`; on one socket it leaves them as they are.
void calibrateSockets(std::ostream& report, const Topology& t, const std::vector<int>& cpus, CostConstants& costs);

// loom-topo --calibrate-network, run as every rank of a job across hosts
// (loomrun, mpirun, Slurm: the launcher's RANK/WORLD_SIZE and LOCAL_RANK):
// the first rank of each host (LOCAL_RANK 0) times the ring AllReduce
// among them, the network's latency from 8 B and its bandwidth from four
// large sizes; the first of them prints it to `report` and writes it into
// `outPath`. Either calibration replaces its own constants in an existing
// file and keeps the others. Throws Error with a sentence on failure.
void calibrateNetwork(std::ostream& report, const std::string& outPath);

// Shared by the calibrations.
// How many times a calibration measures before it calls the machine (or
// the network) too busy: a burst can leave the ring's fit without a slope.
constexpr int kCalibrationAttempts = 3;
std::string shortNumber(double v);  // 4 significant digits
// Microseconds per call of AllReduce (collective 0) or AllGather (1) of
// `bytes` on `comm`'s `ranks`: the fastest of 3 repetitions of about 50 ms.
double timeCalls(loomComm_t comm, int collective, size_t bytes, int ranks, void* send, void* recv);
// time = fixed + bytes x slope: the slope that fits best in relative error.
double fitSlope(const std::vector<double>& bytes, const std::vector<double>& us, double fixedUs);
// The constants already in `path` (a tuning file), or the built-in ones
// where there is no such file; a file that is not a tuning file is an error.
CostConstants costsToUpdate(const std::string& path);
// Writes `costs` after `header` to `outPath` and says so, with the text, to `report`.
void writeTuning(std::ostream& report, const CostConstants& costs, const std::string& header,
                 const std::string& outPath);

}  // namespace loom::topo
