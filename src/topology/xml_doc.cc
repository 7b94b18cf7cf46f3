#include "topology/xml_doc.h"

#include <libxml/parser.h>
#include <libxml/xmlerror.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "core/error.h"

namespace loom::topo {

namespace {

std::string trimmed(const char* message) {
  std::string s = message ? message : "unknown error";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

XmlDoc::XmlDoc(const std::string& path) : path_(path) {
  // libxml2 reports a missing file as a parse error; say what really happened.
  std::ifstream probe(path);
  if (!probe) fail(loomInvalidArgument, path + ": cannot open topology file: " + std::strerror(errno));
  xmlParserCtxt* ctxt = xmlNewParserCtxt();
  if (ctxt == nullptr) fail(loomSystemError, path + ": out of memory creating an XML parser");
  // NOERROR/NOWARNING: errors travel in the exception, not on stderr.
  int options = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_BIG_LINES;
  doc_ = xmlCtxtReadFile(ctxt, path.c_str(), nullptr, options);
  if (doc_ == nullptr) {
    const xmlError* err = xmlCtxtGetLastError(ctxt);
    std::string where = path + ":" + std::to_string(err ? err->line : 0);
    std::string message = trimmed(err ? err->message : nullptr);
    xmlFreeParserCtxt(ctxt);
    fail(loomInvalidArgument, where + ": not well-formed XML: " + message);
  }
  xmlFreeParserCtxt(ctxt);
  if (root() == nullptr) {
    xmlFreeDoc(doc_);
    fail(loomInvalidArgument, path + ":1: the file has no root element");
  }
}

XmlDoc::~XmlDoc() {
  if (doc_) xmlFreeDoc(doc_);
}

void XmlDoc::failAtText(const xmlNode* node, const std::string& what) const {
  fail(loomInvalidArgument, path_ + ":" + std::to_string(lineOf(node)) + ": " + what);
}

std::string elementName(const xmlNode* node) { return reinterpret_cast<const char*>(node->name); }

bool hasAttr(const xmlNode* node, const char* name) {
  return xmlHasProp(node, reinterpret_cast<const xmlChar*>(name)) != nullptr;
}

std::string attrValue(const xmlNode* node, const char* name) {
  xmlChar* v = xmlGetProp(node, reinterpret_cast<const xmlChar*>(name));
  if (v == nullptr) return "";
  std::string s = reinterpret_cast<const char*>(v);
  xmlFree(v);
  return s;
}

int lineOf(const xmlNode* node) { return static_cast<int>(xmlGetLineNo(node)); }

}  // namespace loom::topo
