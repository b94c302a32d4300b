"""OVMS's base status messages (src/status.cpp) that KServe request checks answer with; the tests
compare ovmsx's details against them word for word."""

NAME_MISSING = "Model with requested name is not found"
VERSION_MISSING = "Model with requested version is not found"
VERSION_INVALID = "invalid model version format in request"
NO_OF_INPUTS = "Invalid number of inputs"
MISSING_INPUT = "Missing input with specific name"
UNEXPECTED = "Unexpected input"
NO_OF_DIMS = "Invalid number of shape dimensions"
SHAPE = "Invalid input shape"
BATCH = "Invalid input batch size"
PRECISION = "Invalid input precision"
VALUE_COUNT = "Invalid number of values in tensor proto container"
CONTENT_SIZE = "Invalid content size of tensor proto"
INPUT_FORMAT = "Inputs inside buffer does not match expected format."
STRUCTURE = (
    "Passing buffers both in ModelInferRequest::InferInputTensor::contents and in "
    "ModelInferRequest::raw_input_contents is not allowed"
)
