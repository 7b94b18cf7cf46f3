// What Loom does with a topology once a file has been read: dump it as NCCL
// XML, print the loom-topo reports, compute paths, place ranks and order
// rings. A file the reader accepted must survive all of it.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "fuzz_support.h"
#include "loom_topo/report.h"
#include "topology/nccl_xml.h"
#include "topology/paths.h"
#include "topology/placement.h"
#include "topology/topology.h"
#include "topology/xml_doc.h"

namespace loom::fuzz {

// The NCCL XML dump must read back and re-dump to the same text
// (docs/TOPOLOGY.md: "reading it back and writing again gives the same
// text"): a dump Loom cannot load is a bug for the user who edits one line
// of LOOM_TOPO_DUMP_FILE and loads it. Failing that aborts, so libFuzzer
// keeps the input.
inline void checkRoundTrip(const std::string& dump, InputFile& scratch) {
  const std::string& path = scratch.write(reinterpret_cast<const uint8_t*>(dump.data()), dump.size());
  std::string dumpAgain;
  try {
    topo::XmlDoc doc(path);
    dumpAgain = topo::ncclXml(*topo::readNcclXml(doc, nullptr));
  } catch (const Error& e) {
    std::fprintf(stderr, "Loom cannot read back its own NCCL XML dump: %s\n--- dump\n%s\n", e.what(), dump.c_str());
    std::abort();
  }
  if (dumpAgain != dump) {
    std::fprintf(stderr, "NCCL XML round trip changed the text:\n--- first dump\n%s\n--- dump of the dump\n%s\n",
                 dump.c_str(), dumpAgain.c_str());
    std::abort();
  }
}

inline void exerciseTopology(const topo::Topology& t, InputFile& scratch) {
  std::string dump = topo::ncclXml(t);
  checkRoundTrip(dump, scratch);

  std::ostringstream os;
  topo::printTree(os, t);
  topo::printMatrix(os, t);
  (void)topo::topologyJson(t);
  (void)topo::topologyDot(t);
  std::vector<int> nodes = topo::matrixNodes(t);
  const topo::PathFinder paths(t);
  for (int a : nodes) {
    (void)paths.nearestNic(a);
    for (int b : nodes) (void)paths.path(a, b);
  }
  if (!nodes.empty()) {  // the one-pair forms index the graph themselves
    (void)topo::nearestNic(t, nodes.front());
    (void)topo::path(t, nodes.front(), nodes.back());
  }
  for (const char* mapBy : {"core", "socket", "numa"}) {
    for (int n : {1, 3, 8}) {
      std::vector<topo::RankPlacement> ranks = topo::simulatePlacements(t, n, mapBy);
      std::vector<int> ring = topo::ringOrder(ranks);
      (void)topo::countCrossings(ranks, ring);
    }
  }
}

}  // namespace loom::fuzz
