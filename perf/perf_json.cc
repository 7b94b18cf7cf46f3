#include "perf_json.h"

#include <fcntl.h>
#include <strings.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <ctime>

extern char** environ;

namespace loom::perf {
namespace {

std::string now() {
  char text[64];
  std::time_t t = std::time(nullptr);
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S", std::localtime(&t));
  return text;
}

bool endsInJson(const std::string& path) {
  size_t dot = path.rfind('.'), slash = path.rfind('/');
  if (dot == std::string::npos || (slash != std::string::npos && slash > dot) || dot + 1 == path.size()) return false;
  return strcasecmp(path.c_str() + dot + 1, "json") == 0;
}

}  // namespace

std::string jsonString(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '/': out += "\\/"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      default:
        if (c < 0x20 || c == 0x7F) {
          char hex[8];
          std::snprintf(hex, sizeof(hex), "\\u%04x", c);
          out += hex;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string jsonNumber(double value) {
  if (std::isnan(value)) return "\"nan\"";
  char text[64];
  std::snprintf(text, sizeof(text), "%lf", value);
  return text;
}

JsonReport::JsonReport(const std::string& path, int argc, char** argv, int libraryVersion) {
  if (path.empty() || !endsInJson(path)) return;
  std::string tryPath = path;
  for (int attempt = 0;; ++attempt) {
    int fd = open(tryPath.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd >= 0) {
      out_ = fdopen(fd, "w");
      break;
    }
    if (errno != EEXIST) {
      std::printf("# skipping json output; %s not accessible\n", tryPath.c_str());
      return;
    }
    tryPath = path + "." + std::to_string(attempt);
  }
  std::printf("# Writing JSON output to %s\n", tryPath.c_str());
  body_ = "{\"version\":3,\"start_time\":" + jsonString(now()) + ",\"args\":[";
  for (int i = 0; i < argc; ++i) body_ += (i ? "," : "") + jsonString(argv[i]);
  body_ += "],\"env\":[";
  for (char** e = environ; *e != nullptr; ++e) body_ += (e == environ ? "" : ",") + jsonString(*e);
  body_ += "],\"nccl_version\":" + std::to_string(libraryVersion);
}

JsonReport::~JsonReport() {
  if (out_ != nullptr) std::fclose(out_);
}

void JsonReport::config(const std::vector<std::pair<std::string, std::string>>& fields,
                        const std::vector<JsonDevice>& devices) {
  if (!active()) return;
  body_ += ",\"config\":{";
  for (size_t i = 0; i < fields.size(); ++i)
    body_ += (i ? "," : "") + jsonString(fields[i].first) + ":" + fields[i].second;
  body_ += ",\"devices\":[";
  for (size_t i = 0; i < devices.size(); ++i) {
    const JsonDevice& d = devices[i];
    body_ += std::string(i ? "," : "") + "{\"rank\":" + std::to_string(d.rank) + ",\"group\":0,\"pid\":" +
             std::to_string(d.pid) + ",\"hostname\":" + jsonString(d.hostname) +
             ",\"device\":" + std::to_string(d.device) + ",\"device_hex\":" + jsonString(d.deviceHex) +
             ",\"device_info\":" + jsonString(d.deviceInfo) + "}";
  }
  body_ += "]}";
}

void JsonReport::result(size_t bytes, size_t count, const char* type, const char* op, int root,
                        const JsonHalf halves[2], bool cpuTime, int iterations) {
  if (!active()) return;
  char rootText[16];
  std::snprintf(rootText, sizeof(rootText), "%6i", root);
  std::string r = "{\"size\":" + std::to_string(bytes) + ",\"count\":" + std::to_string(count) +
                  ",\"type\":" + jsonString(type) + ",\"redop\":" + jsonString(op) + ",\"root\":" + jsonString(rootText);
  for (int i = 0; i < 2; ++i) {
    const JsonHalf& h = halves[i];
    r += std::string(i == 0 ? ",\"out_of_place\":{" : ",\"in_place\":{") + (cpuTime ? "\"cpu_time\":" : "\"time\":") +
         jsonNumber(h.time) + ",\"alg_bw\":" + jsonNumber(h.algBw) + ",\"bus_bw\":" + jsonNumber(h.busBw) +
         ",\"nwrong\":" + (h.checked ? jsonNumber(h.wrong) : "null") + "}";
  }
  r += ",\"actual_iterations\":" + std::to_string(iterations) + ",\"experiment_name\":\"\"}";
  results_.push_back(r);
}

void JsonReport::finish(int outOfBounds, double avgBusBw, double minBusBw, const std::string& lastError) {
  if (!active()) return;
  std::string text = body_ + ",\"results\":[";
  for (size_t i = 0; i < results_.size(); ++i) text += (i ? "," : "") + results_[i];
  text += "],\"out_of_bounds\":{\"count\":" + std::to_string(outOfBounds) +
          ",\"okay\":" + jsonString(outOfBounds == 0 ? "true" : "false") + "}";
  text += ",\"average_bus_bandwidth\":{\"bandwidth\":" + jsonNumber(avgBusBw) + ",\"okay\":" +
          (minBusBw < 0 ? jsonString("unchecked") : jsonString(avgBusBw >= minBusBw * 0.9 ? "true" : "false")) + "}";
  text += ",\"errors\":[" + jsonString(lastError) + "],\"end_time\":" + jsonString(now()) + "}";
  std::fputs(text.c_str(), out_);
  std::fclose(out_);
  out_ = nullptr;
}

}  // namespace loom::perf
