// Rules an hwloc XML file must meet before hwloc itself sees it: inputs on
// which hwloc 2.9.0's importer (Debian 12's libhwloc15) crashes instead of
// refusing, each named by its upstream fix. Loom refuses them first, as
// file:line, so a bad LOOM_TOPO_FILE fails init with a sentence. Also the
// values Loom reads from hwloc's text (<info> numbers), which hwloc keeps
// unchecked.
#pragma once

#include "topology/xml_doc.h"

namespace loom::topo {

// Throws loom::Error(loomInvalidArgument) "file.xml:12: ..." for the first
// <object> that would crash hwloc's XML import or that Loom cannot read; returns for any other file
// (what hwloc refuses cleanly is left to hwloc).
void precheckHwlocXml(const XmlDoc& doc);

}  // namespace loom::topo
