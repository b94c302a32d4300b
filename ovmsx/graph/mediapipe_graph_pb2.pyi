from google.protobuf import any_pb2 as _any_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import python_message as _python_message
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class MediaPipeOptions(_message.Message):
    __slots__ = ()
    Extensions: _python_message._ExtensionDict
    def __init__(self) -> None: ...

class CalculatorOptions(_message.Message):
    __slots__ = ("merge_fields",)
    Extensions: _python_message._ExtensionDict
    MERGE_FIELDS_FIELD_NUMBER: _ClassVar[int]
    merge_fields: bool
    def __init__(self, merge_fields: bool = ...) -> None: ...

class InputStreamHandlerConfig(_message.Message):
    __slots__ = ("input_stream_handler", "options")
    INPUT_STREAM_HANDLER_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    input_stream_handler: str
    options: MediaPipeOptions
    def __init__(self, input_stream_handler: _Optional[str] = ..., options: _Optional[_Union[MediaPipeOptions, _Mapping]] = ...) -> None: ...

class OutputStreamHandlerConfig(_message.Message):
    __slots__ = ("output_stream_handler", "input_side_packet", "options")
    OUTPUT_STREAM_HANDLER_FIELD_NUMBER: _ClassVar[int]
    INPUT_SIDE_PACKET_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    output_stream_handler: str
    input_side_packet: _containers.RepeatedScalarFieldContainer[str]
    options: MediaPipeOptions
    def __init__(self, output_stream_handler: _Optional[str] = ..., input_side_packet: _Optional[_Iterable[str]] = ..., options: _Optional[_Union[MediaPipeOptions, _Mapping]] = ...) -> None: ...

class InputStreamInfo(_message.Message):
    __slots__ = ("tag_index", "back_edge")
    TAG_INDEX_FIELD_NUMBER: _ClassVar[int]
    BACK_EDGE_FIELD_NUMBER: _ClassVar[int]
    tag_index: str
    back_edge: bool
    def __init__(self, tag_index: _Optional[str] = ..., back_edge: bool = ...) -> None: ...

class ExecutorConfig(_message.Message):
    __slots__ = ("name", "type", "options")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    name: str
    type: str
    options: MediaPipeOptions
    def __init__(self, name: _Optional[str] = ..., type: _Optional[str] = ..., options: _Optional[_Union[MediaPipeOptions, _Mapping]] = ...) -> None: ...

class CalculatorGraphConfig(_message.Message):
    __slots__ = ("node", "num_threads", "input_stream", "max_queue_size", "input_stream_handler", "output_stream_handler", "executor", "output_stream", "input_side_packet", "output_side_packet", "package", "type", "report_deadlock", "options", "graph_options")
    class Node(_message.Message):
        __slots__ = ("name", "calculator", "input_stream", "output_stream", "input_side_packet", "output_side_packet", "options", "node_options", "source_layer", "buffer_size_hint", "input_stream_handler", "output_stream_handler", "input_stream_info", "executor", "max_in_flight", "option_value", "external_input")
        NAME_FIELD_NUMBER: _ClassVar[int]
        CALCULATOR_FIELD_NUMBER: _ClassVar[int]
        INPUT_STREAM_FIELD_NUMBER: _ClassVar[int]
        OUTPUT_STREAM_FIELD_NUMBER: _ClassVar[int]
        INPUT_SIDE_PACKET_FIELD_NUMBER: _ClassVar[int]
        OUTPUT_SIDE_PACKET_FIELD_NUMBER: _ClassVar[int]
        OPTIONS_FIELD_NUMBER: _ClassVar[int]
        NODE_OPTIONS_FIELD_NUMBER: _ClassVar[int]
        SOURCE_LAYER_FIELD_NUMBER: _ClassVar[int]
        BUFFER_SIZE_HINT_FIELD_NUMBER: _ClassVar[int]
        INPUT_STREAM_HANDLER_FIELD_NUMBER: _ClassVar[int]
        OUTPUT_STREAM_HANDLER_FIELD_NUMBER: _ClassVar[int]
        INPUT_STREAM_INFO_FIELD_NUMBER: _ClassVar[int]
        EXECUTOR_FIELD_NUMBER: _ClassVar[int]
        MAX_IN_FLIGHT_FIELD_NUMBER: _ClassVar[int]
        OPTION_VALUE_FIELD_NUMBER: _ClassVar[int]
        EXTERNAL_INPUT_FIELD_NUMBER: _ClassVar[int]
        name: str
        calculator: str
        input_stream: _containers.RepeatedScalarFieldContainer[str]
        output_stream: _containers.RepeatedScalarFieldContainer[str]
        input_side_packet: _containers.RepeatedScalarFieldContainer[str]
        output_side_packet: _containers.RepeatedScalarFieldContainer[str]
        options: CalculatorOptions
        node_options: _containers.RepeatedCompositeFieldContainer[_any_pb2.Any]
        source_layer: int
        buffer_size_hint: int
        input_stream_handler: InputStreamHandlerConfig
        output_stream_handler: OutputStreamHandlerConfig
        input_stream_info: _containers.RepeatedCompositeFieldContainer[InputStreamInfo]
        executor: str
        max_in_flight: int
        option_value: _containers.RepeatedScalarFieldContainer[str]
        external_input: _containers.RepeatedScalarFieldContainer[str]
        def __init__(self, name: _Optional[str] = ..., calculator: _Optional[str] = ..., input_stream: _Optional[_Iterable[str]] = ..., output_stream: _Optional[_Iterable[str]] = ..., input_side_packet: _Optional[_Iterable[str]] = ..., output_side_packet: _Optional[_Iterable[str]] = ..., options: _Optional[_Union[CalculatorOptions, _Mapping]] = ..., node_options: _Optional[_Iterable[_Union[_any_pb2.Any, _Mapping]]] = ..., source_layer: _Optional[int] = ..., buffer_size_hint: _Optional[int] = ..., input_stream_handler: _Optional[_Union[InputStreamHandlerConfig, _Mapping]] = ..., output_stream_handler: _Optional[_Union[OutputStreamHandlerConfig, _Mapping]] = ..., input_stream_info: _Optional[_Iterable[_Union[InputStreamInfo, _Mapping]]] = ..., executor: _Optional[str] = ..., max_in_flight: _Optional[int] = ..., option_value: _Optional[_Iterable[str]] = ..., external_input: _Optional[_Iterable[str]] = ...) -> None: ...
    NODE_FIELD_NUMBER: _ClassVar[int]
    NUM_THREADS_FIELD_NUMBER: _ClassVar[int]
    INPUT_STREAM_FIELD_NUMBER: _ClassVar[int]
    MAX_QUEUE_SIZE_FIELD_NUMBER: _ClassVar[int]
    INPUT_STREAM_HANDLER_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_STREAM_HANDLER_FIELD_NUMBER: _ClassVar[int]
    EXECUTOR_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_STREAM_FIELD_NUMBER: _ClassVar[int]
    INPUT_SIDE_PACKET_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_SIDE_PACKET_FIELD_NUMBER: _ClassVar[int]
    PACKAGE_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    REPORT_DEADLOCK_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    GRAPH_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    node: _containers.RepeatedCompositeFieldContainer[CalculatorGraphConfig.Node]
    num_threads: int
    input_stream: _containers.RepeatedScalarFieldContainer[str]
    max_queue_size: int
    input_stream_handler: InputStreamHandlerConfig
    output_stream_handler: OutputStreamHandlerConfig
    executor: _containers.RepeatedCompositeFieldContainer[ExecutorConfig]
    output_stream: _containers.RepeatedScalarFieldContainer[str]
    input_side_packet: _containers.RepeatedScalarFieldContainer[str]
    output_side_packet: _containers.RepeatedScalarFieldContainer[str]
    package: str
    type: str
    report_deadlock: bool
    options: MediaPipeOptions
    graph_options: _containers.RepeatedCompositeFieldContainer[_any_pb2.Any]
    def __init__(self, node: _Optional[_Iterable[_Union[CalculatorGraphConfig.Node, _Mapping]]] = ..., num_threads: _Optional[int] = ..., input_stream: _Optional[_Iterable[str]] = ..., max_queue_size: _Optional[int] = ..., input_stream_handler: _Optional[_Union[InputStreamHandlerConfig, _Mapping]] = ..., output_stream_handler: _Optional[_Union[OutputStreamHandlerConfig, _Mapping]] = ..., executor: _Optional[_Iterable[_Union[ExecutorConfig, _Mapping]]] = ..., output_stream: _Optional[_Iterable[str]] = ..., input_side_packet: _Optional[_Iterable[str]] = ..., output_side_packet: _Optional[_Iterable[str]] = ..., package: _Optional[str] = ..., type: _Optional[str] = ..., report_deadlock: bool = ..., options: _Optional[_Union[MediaPipeOptions, _Mapping]] = ..., graph_options: _Optional[_Iterable[_Union[_any_pb2.Any, _Mapping]]] = ...) -> None: ...

class SyncSetInputStreamHandlerOptions(_message.Message):
    __slots__ = ("sync_set",)
    class SyncSet(_message.Message):
        __slots__ = ("tag_index",)
        TAG_INDEX_FIELD_NUMBER: _ClassVar[int]
        tag_index: _containers.RepeatedScalarFieldContainer[str]
        def __init__(self, tag_index: _Optional[_Iterable[str]] = ...) -> None: ...
    EXT_FIELD_NUMBER: _ClassVar[int]
    ext: _descriptor.FieldDescriptor
    SYNC_SET_FIELD_NUMBER: _ClassVar[int]
    sync_set: _containers.RepeatedCompositeFieldContainer[SyncSetInputStreamHandlerOptions.SyncSet]
    def __init__(self, sync_set: _Optional[_Iterable[_Union[SyncSetInputStreamHandlerOptions.SyncSet, _Mapping]]] = ...) -> None: ...

class PythonExecutorCalculatorOptions(_message.Message):
    __slots__ = ("handler_path",)
    EXT_FIELD_NUMBER: _ClassVar[int]
    ext: _descriptor.FieldDescriptor
    HANDLER_PATH_FIELD_NUMBER: _ClassVar[int]
    handler_path: str
    def __init__(self, handler_path: _Optional[str] = ...) -> None: ...

class PyTensorOvTensorConverterCalculatorOptions(_message.Message):
    __slots__ = ("tag_to_output_tensor_names",)
    class TagToOutputTensorNamesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    EXT_FIELD_NUMBER: _ClassVar[int]
    ext: _descriptor.FieldDescriptor
    TAG_TO_OUTPUT_TENSOR_NAMES_FIELD_NUMBER: _ClassVar[int]
    tag_to_output_tensor_names: _containers.ScalarMap[str, str]
    def __init__(self, tag_to_output_tensor_names: _Optional[_Mapping[str, str]] = ...) -> None: ...

class OpenVINOModelServerSessionCalculatorOptions(_message.Message):
    __slots__ = ("servable_name", "servable_version", "service_url", "server_config")
    EXT_FIELD_NUMBER: _ClassVar[int]
    ext: _descriptor.FieldDescriptor
    SERVABLE_NAME_FIELD_NUMBER: _ClassVar[int]
    SERVABLE_VERSION_FIELD_NUMBER: _ClassVar[int]
    SERVICE_URL_FIELD_NUMBER: _ClassVar[int]
    SERVER_CONFIG_FIELD_NUMBER: _ClassVar[int]
    servable_name: str
    servable_version: str
    service_url: str
    server_config: str
    def __init__(self, servable_name: _Optional[str] = ..., servable_version: _Optional[str] = ..., service_url: _Optional[str] = ..., server_config: _Optional[str] = ...) -> None: ...

class OpenVINOInferenceCalculatorOptions(_message.Message):
    __slots__ = ("tag_to_input_tensor_names", "tag_to_output_tensor_names", "input_order_list", "output_order_list")
    class TagToInputTensorNamesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class TagToOutputTensorNamesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    EXT_FIELD_NUMBER: _ClassVar[int]
    ext: _descriptor.FieldDescriptor
    TAG_TO_INPUT_TENSOR_NAMES_FIELD_NUMBER: _ClassVar[int]
    TAG_TO_OUTPUT_TENSOR_NAMES_FIELD_NUMBER: _ClassVar[int]
    INPUT_ORDER_LIST_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_ORDER_LIST_FIELD_NUMBER: _ClassVar[int]
    tag_to_input_tensor_names: _containers.ScalarMap[str, str]
    tag_to_output_tensor_names: _containers.ScalarMap[str, str]
    input_order_list: _containers.RepeatedScalarFieldContainer[str]
    output_order_list: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, tag_to_input_tensor_names: _Optional[_Mapping[str, str]] = ..., tag_to_output_tensor_names: _Optional[_Mapping[str, str]] = ..., input_order_list: _Optional[_Iterable[str]] = ..., output_order_list: _Optional[_Iterable[str]] = ...) -> None: ...

class PythonCalculatorOptions(_message.Message):
    __slots__ = ("params",)
    class ParamsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    PARAMS_FIELD_NUMBER: _ClassVar[int]
    params: _containers.ScalarMap[str, str]
    def __init__(self, params: _Optional[_Mapping[str, str]] = ...) -> None: ...
