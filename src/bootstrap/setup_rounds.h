// The all-gather rounds a rendezvous serves once its ranks are admitted:
// each rank sends its part of a round and gets every rank's part back. A
// round that cannot complete ends with a sentence naming the ranks at fault,
// sent to every rank that waits: ranks that left (destroyed the
// communicator, or died), or ranks that had not arrived when a waiting
// rank's own timeout ran out. After such a round every later part gets the
// same sentence: the communicator cannot form any more.
#pragma once

#include <string>

#include "bootstrap/admission.h"

namespace loom::bootstrap {

// Serves rounds until every admitted rank has closed its connection. When
// admitted.missing is set, every part is answered with that sentence.
// `where` names the rendezvous in sentences and logs.
void serveSetupRounds(AdmittedRanks admitted, const std::string& where);

}  // namespace loom::bootstrap
