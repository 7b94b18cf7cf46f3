// The cost model's constants (cost_model.h) as a text file: what
// `loom-topo --calibrate` writes and LOOM_TUNING_FILE loads. One constant
// per line, "SCOPE KEY VALUE"; '#' starts a comment:
//
//   shm latency_us 3.5          a link class: shm (within a socket), socket
//                               (between a host's sockets) or network,
//   shm bytes_per_us 2270       with latency_us, bytes_per_us, message_us
//   cpu switch_us 1.1           the CPUs ranks share (cost_model.h)
//   memory bytes_per_us 40000   what a host's memory copies for all its ranks
//   tree step_us 2.5            an algorithm (algorithm_table.h's names),
//   tree efficiency 0.33        with step_us and efficiency
//
// What the file leaves out keeps its built-in value.
#pragma once

#include <string>

#include "collectives/cost_model.h"

namespace loom {

// Throws Error(loomInvalidArgument) naming the file, the line and what is
// wrong (an unknown scope or key, a value out of range, a line cut short).
CostConstants readTuningFile(const std::string& path);
// The same, from text; `where` names it in sentences.
CostConstants parseTuning(const std::string& text, const std::string& where);

// Every constant, one per line, in the file's form (after `header`, which
// is written as comment lines).
std::string tuningText(const CostConstants& costs, const std::string& header);

// A short fingerprint of the constants, for ranks to compare at init:
// "builtin" for the built-in ones.
std::string tuningFingerprint(const CostConstants& costs);

}  // namespace loom
