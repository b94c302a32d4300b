// Return codes and error reporting shared by the built-in custom nodes.
//
// The custom-node ABI only distinguishes 0 (success) from anything else: OVMS and ovmsx turn
// every non-zero return into one NODE_LIBRARY_*_FAILED status (COMPAT.md §1.3). The distinct
// values below, and the line each failure writes to stderr, are for the person reading the
// server log, who otherwise only learns that "Custom node failed during execution".
#pragma once

#include <exception>
#include <iostream>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ovmsx::custom_nodes {

enum NodeStatus : int {
  kOk = 0,
  kBadParams = 1,           // a node param is missing, malformed or out of range
  kNotInitialized = 2,      // called with a NULL internal manager: initialize never succeeded
  kBadInputs = 3,           // an input is missing or has the wrong name, precision, shape or size
  kOutOfMemory = 4,         // an output buffer could not be allocated
  kBadRelease = 5,          // release() got a pool address that is not an outstanding buffer
  kBuffersOutstanding = 6,  // deinitialize() found pool buffers that were never released
  kInternalError = 7,       // any other exception (an OpenVINO error, ...)
};

// Thrown inside a node; guarded() turns it into its status and one log line.
class NodeError : public std::runtime_error {
 public:
  NodeError(NodeStatus status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  NodeStatus status() const noexcept { return status_; }

 private:
  NodeStatus status_;
};

// One line on stderr, prefixed with the node's name so a pipeline log says which node failed.
inline void log_error(std::string_view node, std::string_view message) {
  std::cerr << "[" << node << " custom node] " << message << std::endl;
}

// Runs the body of one ABI entry point. No C++ exception may cross the C ABI into the server
// (it would terminate the process), so each one becomes a status and a log line.
template <typename Body>
int guarded(std::string_view node, Body&& body) noexcept {
  try {
    return body();
  } catch (const NodeError& e) {
    log_error(node, e.what());
    return e.status();
  } catch (const std::bad_alloc&) {
    log_error(node, "out of memory");
    return kOutOfMemory;
  } catch (const std::exception& e) {
    log_error(node, e.what());
    return kInternalError;
  } catch (...) {
    log_error(node, "unknown exception");
    return kInternalError;
  }
}

}  // namespace ovmsx::custom_nodes
