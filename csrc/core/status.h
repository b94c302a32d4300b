// The one table of failures: every error ovmsx reports has a StatusCode, the message OVMS uses
// for it (COMPAT.md §7.3), and the gRPC and HTTP codes a client receives.
//
// Core code throws StatusError; the Python binding turns it into ovmsx.status.StatusError once,
// at the edge. Unlike OVMS, a code's gRPC mapping never replaces the message with "Unknown error".
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ovmsx {

// Numeric values of grpc::StatusCode (grpc/include/grpcpp/support/status_code_enum.h).
enum class GrpcCode : std::uint8_t {
  OK = 0,
  CANCELLED = 1,
  UNKNOWN = 2,
  INVALID_ARGUMENT = 3,
  DEADLINE_EXCEEDED = 4,
  NOT_FOUND = 5,
  ALREADY_EXISTS = 6,
  PERMISSION_DENIED = 7,
  RESOURCE_EXHAUSTED = 8,
  FAILED_PRECONDITION = 9,
  ABORTED = 10,
  OUT_OF_RANGE = 11,
  UNIMPLEMENTED = 12,
  INTERNAL = 13,
  UNAVAILABLE = 14,
  DATA_LOSS = 15,
  UNAUTHENTICATED = 16,
};

// X-macro: name, OVMS base message, gRPC code, HTTP status. The order fixes the enum values.
// Codes that OVMS leaves out of its gRPC/HTTP maps get its fallback, UNKNOWN and 500.
#define OVMSX_STATUS_TABLE(X)                                                                      \
  X(OK, "OK", OK, 200)                                                                             \
  X(MODEL_NAME_MISSING, "Model with requested name is not found", NOT_FOUND, 404)                  \
  X(MODEL_VERSION_MISSING, "Model with requested version is not found", NOT_FOUND, 404)            \
  X(MODEL_MISSING, "Model with requested name and/or version is not found", NOT_FOUND, 404)        \
  X(PIPELINE_DEFINITION_NAME_MISSING, "Pipeline with requested name is not found", NOT_FOUND, 404) \
  X(MEDIAPIPE_DEFINITION_NAME_MISSING,                                                             \
    "Mediapipe graph definition with requested name is not found", NOT_FOUND, 404)                 \
  X(MODEL_VERSION_NOT_LOADED_YET, "Model with requested version is not loaded yet", UNAVAILABLE,   \
    404)                                                                                           \
  X(MODEL_VERSION_NOT_LOADED_ANYMORE, "Model with requested version is retired", NOT_FOUND, 404)   \
  X(MEDIAPIPE_DEFINITION_NOT_LOADED_YET, "Mediapipe is not loaded yet", UNAVAILABLE, 500)          \
  X(MODEL_VERSION_INVALID_FORMAT, "invalid model version format in request", INVALID_ARGUMENT,     \
    500)                                                                                           \
  X(INVALID_NO_OF_INPUTS, "Invalid number of inputs", INVALID_ARGUMENT, 400)                       \
  X(INVALID_MISSING_INPUT, "Missing input with specific name", INVALID_ARGUMENT, 400)              \
  X(INVALID_UNEXPECTED_INPUT, "Unexpected input", INVALID_ARGUMENT, 400)                           \
  X(INVALID_MISSING_OUTPUT, "Missing output with specific name", INVALID_ARGUMENT, 400)            \
  X(INVALID_NO_OF_SHAPE_DIMENSIONS, "Invalid number of shape dimensions", INVALID_ARGUMENT, 400)   \
  X(INVALID_SHAPE, "Invalid input shape", INVALID_ARGUMENT, 400)                                   \
  X(INVALID_BATCH_SIZE, "Invalid input batch size", INVALID_ARGUMENT, 400)                         \
  X(INVALID_PRECISION, "Invalid input precision", INVALID_ARGUMENT, 400)                           \
  X(INVALID_VALUE_COUNT, "Invalid number of values in tensor proto container", INVALID_ARGUMENT,   \
    400)                                                                                           \
  X(INVALID_CONTENT_SIZE, "Invalid content size of tensor proto", INVALID_ARGUMENT, 400)           \
  X(INVALID_MESSAGE_STRUCTURE,                                                                     \
    "Passing buffers both in ModelInferRequest::InferInputTensor::contents and in "                \
    "ModelInferRequest::raw_input_contents is not allowed",                                        \
    INVALID_ARGUMENT, 400)                                                                         \
  X(INVALID_INPUT_FORMAT, "Inputs inside buffer does not match expected format.",                  \
    INVALID_ARGUMENT, 400)                                                                         \
  X(MEDIAPIPE_EXECUTION_ERROR, "Mediapipe execution failed. MP status", INVALID_ARGUMENT, 400)     \
  X(MEDIAPIPE_PRECONDITION_FAILED, "Mediapipe graph precondition failed", UNKNOWN, 412)            \
  X(MEDIAPIPE_GRAPH_INITIALIZATION_ERROR, "Failed to initialize mediapipe graph",                  \
    FAILED_PRECONDITION, 500)                                                                      \
  X(MEDIAPIPE_GRAPH_ADD_PACKET_INPUT_STREAM,                                                       \
    "Failed to add packet to mediapipe graph input stream", FAILED_PRECONDITION, 412)              \
  X(MEDIAPIPE_INVALID_TIMESTAMP, "Malformed packet timestamp", UNKNOWN, 500)                       \
  X(MEDIAPIPE_GRAPH_CONFIG_FILE_INVALID, "Failed to read protobuf graph configuration file",       \
    UNKNOWN, 500)                                                                                  \
  X(PIPELINE_DEMULTIPLEXER_NO_RESULTS,                                                             \
    "Pipeline execution aborted due to no content from custom node", ABORTED, 204)                 \
  X(PIPELINE_DEFINITION_INVALID_NODE_LIBRARY, "Pipeline refers to incorrect library", UNKNOWN,     \
    500)                                                                                           \
  X(PIPELINE_DEFINITION_NOT_LOADED_YET, "Pipeline is not loaded yet", UNAVAILABLE, 500)            \
  X(PIPELINE_DEFINITION_NOT_LOADED_ANYMORE, "Pipeline is retired", NOT_FOUND, 404)                 \
  X(PIPELINE_NODE_WRONG_KIND_CONFIGURATION, "Unsupported node type", UNKNOWN, 500)                 \
  X(PIPELINE_NODE_NAME_DUPLICATE, "Pipeline definition has multiple nodes with the same name",     \
    UNKNOWN, 500)                                                                                  \
  X(PIPELINE_CYCLE_FOUND, "Pipeline definition contains a cycle", UNKNOWN, 500)                    \
  X(PIPELINE_CONTAINS_UNCONNECTED_NODES, "Pipeline definition has unconnected nodes", UNKNOWN,     \
    500)                                                                                           \
  X(PIPELINE_NODE_REFERING_TO_MISSING_NODE, "Pipeline definition has reference to missing node",   \
    UNKNOWN, 500)                                                                                  \
  X(PIPELINE_NODE_REFERING_TO_MISSING_MODEL, "Pipeline definition has reference to missing model", \
    UNKNOWN, 500)                                                                                  \
  X(PIPELINE_NODE_REFERING_TO_MISSING_DATA_SOURCE,                                                 \
    "Pipeline definition has reference to missing data source", UNKNOWN, 500)                      \
  X(PIPELINE_NODE_REFERING_TO_MISSING_MODEL_OUTPUT,                                                \
    "Pipeline definition has reference to missing model output", UNKNOWN, 500)                     \
  X(PIPELINE_CONNECTION_TO_MISSING_MODEL_INPUT,                                                    \
    "Pipeline definition has connection to non existing model input", UNKNOWN, 500)                \
  X(PIPELINE_NOT_ALL_INPUTS_CONNECTED,                                                             \
    "Pipeline definition does not have connections for all inputs of underlying models", UNKNOWN,  \
    500)                                                                                           \
  X(PIPELINE_MODEL_INPUT_CONNECTED_TO_MULTIPLE_DATA_SOURCES,                                       \
    "Pipeline definition has multiple connections to the same input of underlying model", UNKNOWN, \
    500)                                                                                           \
  X(PIPELINE_NAME_OCCUPIED, "Pipeline has the same name as model", UNKNOWN, 500)                   \
  X(PIPELINE_WRONG_NUMBER_OF_DIMENSIONS_TO_DEMULTIPLY,                                             \
    "Wrong number of dimensions in a tensor to be sharded", UNKNOWN, 500)                          \
  X(PIPELINE_WRONG_DIMENSION_SIZE_TO_DEMULTIPLY,                                                   \
    "Wrong dimension size. Should match demultiply count", UNKNOWN, 500)                           \
  X(PIPELINE_NODE_GATHER_FROM_NOT_EXISTING_NODE, "Gather node refers to not existing node",        \
    UNKNOWN, 500)                                                                                  \
  X(PIPELINE_NODE_GATHER_FROM_NOT_DEMULTIPLEXER,                                                   \
    "Gather node refers to node that isn't demultiplexer", UNKNOWN, 500)                           \
  X(PIPELINE_TOO_LARGE_DIMENSION_SIZE_TO_DEMULTIPLY,                                               \
    "Too large dynamic demultiplication requested.", UNKNOWN, 500)                                 \
  X(PIPELINE_WRONG_DEMULTIPLEXER_GATHER_NODES_ORDER,                                               \
    "Demultiplexer and gather nodes are not in LIFO order", UNKNOWN, 500)                          \
  X(PIPELINE_INCONSISTENT_SHARD_DIMENSIONS, "Gathered tensor shards dimensions are different",     \
    UNKNOWN, 500)                                                                                  \
  X(PIPELINE_INPUTS_AMBIGUOUS_METADATA,                                                            \
    "Multiple nodes connected to the same pipeline input require different tensor metadata",       \
    UNKNOWN, 500)                                                                                  \
  X(NODE_LIBRARY_MISSING, "Custom node library not found", UNKNOWN, 500)                           \
  X(NODE_LIBRARY_LOAD_FAILED_OPEN, "Custom node library failed to open", UNKNOWN, 500)             \
  X(NODE_LIBRARY_LOAD_FAILED_SYM, "Custom node library failed to load symbol", UNKNOWN, 500)       \
  X(NODE_LIBRARY_INITIALIZE_FAILED, "Failure during custom node library initialization", UNKNOWN,  \
    500)                                                                                           \
  X(NODE_LIBRARY_METADATA_FAILED, "Custom node failed on metadata call", UNKNOWN, 500)             \
  X(NODE_LIBRARY_EXECUTION_FAILED, "Custom node failed during execution", UNKNOWN, 500)            \
  X(NODE_LIBRARY_OUTPUTS_CORRUPTED, "Custom node library has returned corrupted outputs handle",   \
    UNKNOWN, 500)                                                                                  \
  X(NODE_LIBRARY_OUTPUTS_CORRUPTED_COUNT,                                                          \
    "Custom node library has produced corrupted number of outputs", UNKNOWN, 500)                  \
  X(NODE_LIBRARY_INVALID_PRECISION, "Custom node has produced tensor with unspecified precision",  \
    UNKNOWN, 500)                                                                                  \
  X(NODE_LIBRARY_INVALID_CONTENT_SIZE, "Custom node output has invalid content size", UNKNOWN,     \
    500)                                                                                           \
  X(NODE_LIBRARY_MISSING_OUTPUT, "Custom node output is missing", UNKNOWN, 500)                    \
  X(NODE_LIBRARY_OUTPUT_MISSING_NAME, "Custom node output is missing name", UNKNOWN, 500)          \
  X(PYTHON_NODE_FILE_DOES_NOT_EXIST, "The Python Node file path does not exist", UNKNOWN, 500)     \
  X(PYTHON_NODE_MISSING_OPTIONS, "The Python Node is missing options definition", UNKNOWN, 500)    \
  X(PYTHON_NODE_MISSING_NAME, "The Python Node is missing name definition", UNKNOWN, 500)          \
  X(PYTHON_NODE_NAME_ALREADY_EXISTS, "The Python Node name is already present in nodes list",      \
    UNKNOWN, 500)                                                                                  \
  X(PYTHON_NODE_FILE_STATE_INITIALIZATION_FAILED, "The Python Node state initialization failed",   \
    UNKNOWN, 500)                                                                                  \
  X(MEDIAPIPE_DEFINITION_NOT_LOADED_ANYMORE, "Mediapipe is retired", NOT_FOUND, 404)               \
  X(MEDIAPIPE_GRAPH_START_ERROR, "Failed to start mediapipe graph", UNKNOWN, 500)                  \
  X(MEDIAPIPE_GRAPH_NAME_OCCUPIED, "Graph name is already used by a model", UNKNOWN, 500)          \
  X(MEDIAPIPE_INCORRECT_SERVABLE_NAME,                                                             \
    "Inference with different servable name on the same stream is not supported",                  \
    INVALID_ARGUMENT, 400)                                                                         \
  X(MEDIAPIPE_INCORRECT_SERVABLE_VERSION,                                                          \
    "Inference with different servable version on the same stream is not supported",               \
    INVALID_ARGUMENT, 400)                                                                         \
  X(MEDIAPIPE_UNINITIALIZED_STREAM_CLOSURE, "Stream closed before the first request was read",     \
    UNKNOWN, 500)                                                                                  \
  X(MEDIAPIPE_KFS_PASSTHROUGH_MISSING_OUTPUT_RESPONSE_TAG,                                         \
    "A graph taking the whole KServe request (REQUEST tag) must answer with a RESPONSE tag "       \
    "output",                                                                                      \
    UNKNOWN, 500)                                                                                  \
  X(MEDIAPIPE_KFS_PASSTHROUGH_MISSING_INPUT_REQUEST_TAG,                                           \
    "A graph answering with the whole KServe response (RESPONSE tag) must take a REQUEST tag "     \
    "input",                                                                                       \
    UNKNOWN, 500)                                                                                  \
  X(MEDIAPIPE_KFS_PASS_WRONG_INPUT_STREAM_COUNT,                                                   \
    "KServe passthrough through mediapipe graph requires having only one input (request)",         \
    UNKNOWN, 500)                                                                                  \
  X(MEDIAPIPE_KFS_PASS_WRONG_OUTPUT_STREAM_COUNT,                                                  \
    "KServe passthrough through mediapipe graph requires having only one output (response)",       \
    UNKNOWN, 500)                                                                                  \
  X(PATH_INVALID, "The provided base path is invalid or doesn't exists", INTERNAL, 500)            \
  X(FILE_INVALID, "File not found or cannot open", INTERNAL, 500)                                  \
  X(NO_MODEL_VERSION_AVAILABLE, "Not a single model version directory has valid numeric name",     \
    INTERNAL, 500)                                                                                 \
  X(NETWORK_NOT_LOADED, "Error while loading a network", INTERNAL, 500)                            \
  X(MODEL_NOT_LOADED, "Error while loading a model", INTERNAL, 500)                                \
  X(SHAPE_WRONG_FORMAT, "The provided shape is in wrong format", INTERNAL, 500)                    \
  X(LAYOUT_WRONG_FORMAT, "The provided layout is in wrong format", INTERNAL, 500)                  \
  X(FLOAT_WRONG_FORMAT, "The provided value is not a float or a list of floats", INTERNAL, 500)    \
  X(COLOR_FORMAT_WRONG_FORMAT, "The provided color format is in wrong format", INTERNAL, 500)      \
  X(PRECISION_WRONG_FORMAT, "The provided precision is in wrong format", INTERNAL, 500)            \
  X(PLUGIN_CONFIG_WRONG_FORMAT, "Plugin config is in wrong format", INTERNAL, 500)                 \
  X(RESHAPE_ERROR, "Model could not be reshaped with requested shape", FAILED_PRECONDITION, 412)   \
  X(ANONYMOUS_FIXED_SHAPE_NOT_ALLOWED,                                                             \
    "Anonymous fixed shape is invalid for models with multiple inputs", UNKNOWN, 500)              \
  X(CANNOT_LOAD_NETWORK_INTO_TARGET_DEVICE, "Cannot load network into target device", UNKNOWN,     \
    500)                                                                                           \
  X(CONFIG_SHAPE_IS_NOT_IN_NETWORK, "Shape from config not found in network", UNKNOWN, 500)        \
  X(CONFIG_LAYOUT_IS_NOT_IN_NETWORK, "Layout from config not found in network", UNKNOWN, 500)      \
  X(INVALID_NIREQ, "Nireq parameter too high", UNKNOWN, 500)                                       \
  X(OV_INTERNAL_INFERENCE_ERROR, "Internal inference error", INTERNAL, 500)                        \
  X(JSON_INVALID, "The file is not valid json", FAILED_PRECONDITION, 412)                          \
  X(NOT_IMPLEMENTED, "Functionality not implemented", UNKNOWN, 500)                                \
  X(INTERNAL_ERROR, "Internal server error", INTERNAL, 500)                                        \
  X(UNKNOWN_ERROR, "Unknown error", UNKNOWN, 500)

enum class StatusCode : std::uint16_t {
#define OVMSX_STATUS_ENUM(name, message, grpc, http) name,
  OVMSX_STATUS_TABLE(OVMSX_STATUS_ENUM)
#undef OVMSX_STATUS_ENUM
};

struct StatusInfo {
  StatusCode code;
  std::string_view name;     // the enum name, e.g. "INVALID_SHAPE"
  std::string_view message;  // OVMS base message
  GrpcCode grpc;
  int http;
};

// Every row of the table, in enum order.
const StatusInfo* status_table_begin();
const StatusInfo* status_table_end();
const StatusInfo& status_info(StatusCode code);

// OVMS renders "<message> - <details>" (Status::appendDetails); details may be empty.
std::string render_status(StatusCode code, std::string_view details);

class StatusError : public std::runtime_error {
 public:
  StatusError(StatusCode code, std::string details);

  StatusCode code() const noexcept { return code_; }
  const std::string& details() const noexcept { return details_; }

 private:
  StatusCode code_;
  std::string details_;
};

}  // namespace ovmsx
