#include "topology/xml_doc.h"

#include <libxml/globals.h>
#include <libxml/parser.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlversion.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "base/error.h"

namespace loom::topo {

namespace {

std::string trimmed(const char* message) {
  std::string s = message ? message : "unknown error";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// libxml2 reports a parse error to the context's structured handler when it
// has one, and some errors (an encoding error in the first line) to
// process-wide handlers (xmlSetGenericErrorFunc), which another library may
// have set, or left dangling: hwloc's libxml2 plugin points them into itself
// and is then unloaded (hwloc_import.cc keeps it loaded; this does not rely
// on that). The error also lands in the context's last error, which is what
// the exception says, so these handlers drop it.
#if LIBXML_VERSION >= 21200
void ignoreXmlError(void*, const xmlError*) {}
#else
void ignoreXmlError(void*, xmlError*) {}
#endif

#if LIBXML_VERSION < 21300
void ignoreGenericError(void*, const char*, ...) {}

// For one parse, this thread's process-wide handlers (libxml2 keeps them
// per thread) are Loom's; the caller's come back afterwards.
class QuietGlobalXmlErrors {
 public:
  QuietGlobalXmlErrors()
      : generic_(xmlGenericError),
        genericContext_(xmlGenericErrorContext),
        structured_(xmlStructuredError),
        structuredContext_(xmlStructuredErrorContext) {
    xmlSetGenericErrorFunc(nullptr, ignoreGenericError);
    xmlSetStructuredErrorFunc(nullptr, ignoreXmlError);
  }
  ~QuietGlobalXmlErrors() {
    xmlSetGenericErrorFunc(genericContext_, generic_);
    xmlSetStructuredErrorFunc(structuredContext_, structured_);
  }
  QuietGlobalXmlErrors(const QuietGlobalXmlErrors&) = delete;
  QuietGlobalXmlErrors& operator=(const QuietGlobalXmlErrors&) = delete;

 private:
  xmlGenericErrorFunc generic_;
  void* genericContext_;
  xmlStructuredErrorFunc structured_;
  void* structuredContext_;
};
#endif

}  // namespace

XmlDoc::XmlDoc(const std::string& path) : path_(path) {
  // libxml2 reports a missing file as a parse error; say what really happened.
  std::ifstream probe(path);
  if (!probe) fail(loomInvalidArgument, path + ": cannot open topology file: " + std::strerror(errno));
  xmlParserCtxt* ctxt = xmlNewParserCtxt();
  if (ctxt == nullptr) fail(loomSystemError, path + ": out of memory creating an XML parser");
  // NOERROR/NOWARNING: errors travel in the exception, not on stderr.
  int options = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_BIG_LINES;
#if LIBXML_VERSION >= 21300
  xmlCtxtSetErrorHandler(ctxt, ignoreXmlError, nullptr);  // every error of the parse goes here
  doc_ = xmlCtxtReadFile(ctxt, path.c_str(), nullptr, options);
#else
  ctxt->sax->serror = ignoreXmlError;  // xmlNewParserCtxt made a SAX2 handler (XML_SAX2_MAGIC)
  {
    QuietGlobalXmlErrors quiet;
    doc_ = xmlCtxtReadFile(ctxt, path.c_str(), nullptr, options);
  }
#endif
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
