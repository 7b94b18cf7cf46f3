// A parsed XML file (libxml2) whose errors name the file and the line, so
// every topology file error reads "file.xml:12: what is wrong".
#pragma once

#include <libxml/tree.h>

#include <sstream>
#include <string>

namespace loom::topo {

class XmlDoc {
 public:
  // Throws loom::Error(loomInvalidArgument) when the file cannot be read or
  // is not well-formed XML.
  explicit XmlDoc(const std::string& path);
  ~XmlDoc();
  XmlDoc(const XmlDoc&) = delete;
  XmlDoc& operator=(const XmlDoc&) = delete;

  xmlNode* root() const { return xmlDocGetRootElement(doc_); }
  const std::string& path() const { return path_; }

  // "file.xml:12: " followed by the parts, streamed, as a loom::Error.
  // (Streaming, not `"<" + std::string`, which trips GCC 12's false -Wrestrict.)
  template <typename... Parts>
  [[noreturn]] void failAt(const xmlNode* node, const Parts&... parts) const {
    std::ostringstream os;
    (os << ... << parts);
    failAtText(node, os.str());
  }
  [[noreturn]] void failAtText(const xmlNode* node, const std::string& what) const;

 private:
  std::string path_;
  xmlDoc* doc_ = nullptr;
};

// Element and attribute helpers that take std::string.
std::string elementName(const xmlNode* node);
bool hasAttr(const xmlNode* node, const char* name);
std::string attrValue(const xmlNode* node, const char* name);  // "" if absent
int lineOf(const xmlNode* node);

}  // namespace loom::topo
