from google.protobuf import any_pb2 as _any_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
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

class LLMCalculatorOptions(_message.Message):
    __slots__ = ("models_path", "max_num_batched_tokens", "cache_size", "max_num_seqs", "dynamic_split_fuse", "device", "plugin_config", "best_of_limit", "max_tokens_limit", "enable_prefix_caching", "draft_models_path", "draft_device", "draft_max_num_batched_tokens", "draft_cache_size", "draft_block_size", "draft_max_num_seqs", "draft_dynamic_split_fuse", "draft_eagle3_mode", "pipeline_type", "cache_eviction_config", "tool_parser", "reasoning_parser", "enable_tool_guided_generation", "sparse_attention_config", "cache_interval_multiplier", "chat_template_mode")
    class PipelineType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        LM: _ClassVar[LLMCalculatorOptions.PipelineType]
        VLM: _ClassVar[LLMCalculatorOptions.PipelineType]
        LM_CB: _ClassVar[LLMCalculatorOptions.PipelineType]
        VLM_CB: _ClassVar[LLMCalculatorOptions.PipelineType]
        OMNI: _ClassVar[LLMCalculatorOptions.PipelineType]
        AUTO: _ClassVar[LLMCalculatorOptions.PipelineType]
    LM: LLMCalculatorOptions.PipelineType
    VLM: LLMCalculatorOptions.PipelineType
    LM_CB: LLMCalculatorOptions.PipelineType
    VLM_CB: LLMCalculatorOptions.PipelineType
    OMNI: LLMCalculatorOptions.PipelineType
    AUTO: LLMCalculatorOptions.PipelineType
    class ChatTemplateMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        MINJA: _ClassVar[LLMCalculatorOptions.ChatTemplateMode]
        JINJA: _ClassVar[LLMCalculatorOptions.ChatTemplateMode]
    MINJA: LLMCalculatorOptions.ChatTemplateMode
    JINJA: LLMCalculatorOptions.ChatTemplateMode
    class KVCrushConfig(_message.Message):
        __slots__ = ("budget", "anchor_point_mode", "rng_seed")
        class AnchorPointMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
            __slots__ = ()
            RANDOM: _ClassVar[LLMCalculatorOptions.KVCrushConfig.AnchorPointMode]
            ZEROS: _ClassVar[LLMCalculatorOptions.KVCrushConfig.AnchorPointMode]
            ONES: _ClassVar[LLMCalculatorOptions.KVCrushConfig.AnchorPointMode]
            MEAN: _ClassVar[LLMCalculatorOptions.KVCrushConfig.AnchorPointMode]
            ALTERNATING: _ClassVar[LLMCalculatorOptions.KVCrushConfig.AnchorPointMode]
        RANDOM: LLMCalculatorOptions.KVCrushConfig.AnchorPointMode
        ZEROS: LLMCalculatorOptions.KVCrushConfig.AnchorPointMode
        ONES: LLMCalculatorOptions.KVCrushConfig.AnchorPointMode
        MEAN: LLMCalculatorOptions.KVCrushConfig.AnchorPointMode
        ALTERNATING: LLMCalculatorOptions.KVCrushConfig.AnchorPointMode
        BUDGET_FIELD_NUMBER: _ClassVar[int]
        ANCHOR_POINT_MODE_FIELD_NUMBER: _ClassVar[int]
        RNG_SEED_FIELD_NUMBER: _ClassVar[int]
        budget: int
        anchor_point_mode: LLMCalculatorOptions.KVCrushConfig.AnchorPointMode
        rng_seed: int
        def __init__(self, budget: _Optional[int] = ..., anchor_point_mode: _Optional[_Union[LLMCalculatorOptions.KVCrushConfig.AnchorPointMode, str]] = ..., rng_seed: _Optional[int] = ...) -> None: ...
    class CacheEvictionConfig(_message.Message):
        __slots__ = ("aggregation_mode", "start_size", "recent_size", "max_cache_size", "apply_rotation", "snapkv_window_size", "kv_crush_config")
        class AggregationMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
            __slots__ = ()
            SUM: _ClassVar[LLMCalculatorOptions.CacheEvictionConfig.AggregationMode]
            NORM_SUM: _ClassVar[LLMCalculatorOptions.CacheEvictionConfig.AggregationMode]
        SUM: LLMCalculatorOptions.CacheEvictionConfig.AggregationMode
        NORM_SUM: LLMCalculatorOptions.CacheEvictionConfig.AggregationMode
        AGGREGATION_MODE_FIELD_NUMBER: _ClassVar[int]
        START_SIZE_FIELD_NUMBER: _ClassVar[int]
        RECENT_SIZE_FIELD_NUMBER: _ClassVar[int]
        MAX_CACHE_SIZE_FIELD_NUMBER: _ClassVar[int]
        APPLY_ROTATION_FIELD_NUMBER: _ClassVar[int]
        SNAPKV_WINDOW_SIZE_FIELD_NUMBER: _ClassVar[int]
        KV_CRUSH_CONFIG_FIELD_NUMBER: _ClassVar[int]
        aggregation_mode: LLMCalculatorOptions.CacheEvictionConfig.AggregationMode
        start_size: int
        recent_size: int
        max_cache_size: int
        apply_rotation: bool
        snapkv_window_size: int
        kv_crush_config: LLMCalculatorOptions.KVCrushConfig
        def __init__(self, aggregation_mode: _Optional[_Union[LLMCalculatorOptions.CacheEvictionConfig.AggregationMode, str]] = ..., start_size: _Optional[int] = ..., recent_size: _Optional[int] = ..., max_cache_size: _Optional[int] = ..., apply_rotation: bool = ..., snapkv_window_size: _Optional[int] = ..., kv_crush_config: _Optional[_Union[LLMCalculatorOptions.KVCrushConfig, _Mapping]] = ...) -> None: ...
    class SparseAttentionConfig(_message.Message):
        __slots__ = ("mode", "num_last_dense_tokens_in_prefill", "num_retained_start_tokens_in_cache", "num_retained_recent_tokens_in_cache", "xattention_threshold", "xattention_block_size", "xattention_stride")
        class SparseAttentionMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
            __slots__ = ()
            TRISHAPE: _ClassVar[LLMCalculatorOptions.SparseAttentionConfig.SparseAttentionMode]
            XATTENTION: _ClassVar[LLMCalculatorOptions.SparseAttentionConfig.SparseAttentionMode]
        TRISHAPE: LLMCalculatorOptions.SparseAttentionConfig.SparseAttentionMode
        XATTENTION: LLMCalculatorOptions.SparseAttentionConfig.SparseAttentionMode
        MODE_FIELD_NUMBER: _ClassVar[int]
        NUM_LAST_DENSE_TOKENS_IN_PREFILL_FIELD_NUMBER: _ClassVar[int]
        NUM_RETAINED_START_TOKENS_IN_CACHE_FIELD_NUMBER: _ClassVar[int]
        NUM_RETAINED_RECENT_TOKENS_IN_CACHE_FIELD_NUMBER: _ClassVar[int]
        XATTENTION_THRESHOLD_FIELD_NUMBER: _ClassVar[int]
        XATTENTION_BLOCK_SIZE_FIELD_NUMBER: _ClassVar[int]
        XATTENTION_STRIDE_FIELD_NUMBER: _ClassVar[int]
        mode: LLMCalculatorOptions.SparseAttentionConfig.SparseAttentionMode
        num_last_dense_tokens_in_prefill: int
        num_retained_start_tokens_in_cache: int
        num_retained_recent_tokens_in_cache: int
        xattention_threshold: float
        xattention_block_size: int
        xattention_stride: int
        def __init__(self, mode: _Optional[_Union[LLMCalculatorOptions.SparseAttentionConfig.SparseAttentionMode, str]] = ..., num_last_dense_tokens_in_prefill: _Optional[int] = ..., num_retained_start_tokens_in_cache: _Optional[int] = ..., num_retained_recent_tokens_in_cache: _Optional[int] = ..., xattention_threshold: _Optional[float] = ..., xattention_block_size: _Optional[int] = ..., xattention_stride: _Optional[int] = ...) -> None: ...
    EXT_FIELD_NUMBER: _ClassVar[int]
    ext: _descriptor.FieldDescriptor
    MODELS_PATH_FIELD_NUMBER: _ClassVar[int]
    MAX_NUM_BATCHED_TOKENS_FIELD_NUMBER: _ClassVar[int]
    CACHE_SIZE_FIELD_NUMBER: _ClassVar[int]
    MAX_NUM_SEQS_FIELD_NUMBER: _ClassVar[int]
    DYNAMIC_SPLIT_FUSE_FIELD_NUMBER: _ClassVar[int]
    DEVICE_FIELD_NUMBER: _ClassVar[int]
    PLUGIN_CONFIG_FIELD_NUMBER: _ClassVar[int]
    BEST_OF_LIMIT_FIELD_NUMBER: _ClassVar[int]
    MAX_TOKENS_LIMIT_FIELD_NUMBER: _ClassVar[int]
    ENABLE_PREFIX_CACHING_FIELD_NUMBER: _ClassVar[int]
    DRAFT_MODELS_PATH_FIELD_NUMBER: _ClassVar[int]
    DRAFT_DEVICE_FIELD_NUMBER: _ClassVar[int]
    DRAFT_MAX_NUM_BATCHED_TOKENS_FIELD_NUMBER: _ClassVar[int]
    DRAFT_CACHE_SIZE_FIELD_NUMBER: _ClassVar[int]
    DRAFT_BLOCK_SIZE_FIELD_NUMBER: _ClassVar[int]
    DRAFT_MAX_NUM_SEQS_FIELD_NUMBER: _ClassVar[int]
    DRAFT_DYNAMIC_SPLIT_FUSE_FIELD_NUMBER: _ClassVar[int]
    DRAFT_EAGLE3_MODE_FIELD_NUMBER: _ClassVar[int]
    PIPELINE_TYPE_FIELD_NUMBER: _ClassVar[int]
    CACHE_EVICTION_CONFIG_FIELD_NUMBER: _ClassVar[int]
    TOOL_PARSER_FIELD_NUMBER: _ClassVar[int]
    REASONING_PARSER_FIELD_NUMBER: _ClassVar[int]
    ENABLE_TOOL_GUIDED_GENERATION_FIELD_NUMBER: _ClassVar[int]
    SPARSE_ATTENTION_CONFIG_FIELD_NUMBER: _ClassVar[int]
    CACHE_INTERVAL_MULTIPLIER_FIELD_NUMBER: _ClassVar[int]
    CHAT_TEMPLATE_MODE_FIELD_NUMBER: _ClassVar[int]
    models_path: str
    max_num_batched_tokens: int
    cache_size: int
    max_num_seqs: int
    dynamic_split_fuse: bool
    device: str
    plugin_config: str
    best_of_limit: int
    max_tokens_limit: int
    enable_prefix_caching: bool
    draft_models_path: str
    draft_device: str
    draft_max_num_batched_tokens: int
    draft_cache_size: int
    draft_block_size: int
    draft_max_num_seqs: int
    draft_dynamic_split_fuse: bool
    draft_eagle3_mode: bool
    pipeline_type: LLMCalculatorOptions.PipelineType
    cache_eviction_config: LLMCalculatorOptions.CacheEvictionConfig
    tool_parser: str
    reasoning_parser: str
    enable_tool_guided_generation: bool
    sparse_attention_config: LLMCalculatorOptions.SparseAttentionConfig
    cache_interval_multiplier: int
    chat_template_mode: LLMCalculatorOptions.ChatTemplateMode
    def __init__(self, models_path: _Optional[str] = ..., max_num_batched_tokens: _Optional[int] = ..., cache_size: _Optional[int] = ..., max_num_seqs: _Optional[int] = ..., dynamic_split_fuse: bool = ..., device: _Optional[str] = ..., plugin_config: _Optional[str] = ..., best_of_limit: _Optional[int] = ..., max_tokens_limit: _Optional[int] = ..., enable_prefix_caching: bool = ..., draft_models_path: _Optional[str] = ..., draft_device: _Optional[str] = ..., draft_max_num_batched_tokens: _Optional[int] = ..., draft_cache_size: _Optional[int] = ..., draft_block_size: _Optional[int] = ..., draft_max_num_seqs: _Optional[int] = ..., draft_dynamic_split_fuse: bool = ..., draft_eagle3_mode: bool = ..., pipeline_type: _Optional[_Union[LLMCalculatorOptions.PipelineType, str]] = ..., cache_eviction_config: _Optional[_Union[LLMCalculatorOptions.CacheEvictionConfig, _Mapping]] = ..., tool_parser: _Optional[str] = ..., reasoning_parser: _Optional[str] = ..., enable_tool_guided_generation: bool = ..., sparse_attention_config: _Optional[_Union[LLMCalculatorOptions.SparseAttentionConfig, _Mapping]] = ..., cache_interval_multiplier: _Optional[int] = ..., chat_template_mode: _Optional[_Union[LLMCalculatorOptions.ChatTemplateMode, str]] = ...) -> None: ...

class EmbeddingsCalculatorOVOptions(_message.Message):
    __slots__ = ("models_path", "normalize_embeddings", "target_device", "plugin_config", "pooling", "truncate", "max_length")
    class Pooling(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        CLS: _ClassVar[EmbeddingsCalculatorOVOptions.Pooling]
        LAST: _ClassVar[EmbeddingsCalculatorOVOptions.Pooling]
        LAST_TOKEN: _ClassVar[EmbeddingsCalculatorOVOptions.Pooling]
        MEAN: _ClassVar[EmbeddingsCalculatorOVOptions.Pooling]
    CLS: EmbeddingsCalculatorOVOptions.Pooling
    LAST: EmbeddingsCalculatorOVOptions.Pooling
    LAST_TOKEN: EmbeddingsCalculatorOVOptions.Pooling
    MEAN: EmbeddingsCalculatorOVOptions.Pooling
    EXT_FIELD_NUMBER: _ClassVar[int]
    ext: _descriptor.FieldDescriptor
    MODELS_PATH_FIELD_NUMBER: _ClassVar[int]
    NORMALIZE_EMBEDDINGS_FIELD_NUMBER: _ClassVar[int]
    TARGET_DEVICE_FIELD_NUMBER: _ClassVar[int]
    PLUGIN_CONFIG_FIELD_NUMBER: _ClassVar[int]
    POOLING_FIELD_NUMBER: _ClassVar[int]
    TRUNCATE_FIELD_NUMBER: _ClassVar[int]
    MAX_LENGTH_FIELD_NUMBER: _ClassVar[int]
    models_path: str
    normalize_embeddings: bool
    target_device: str
    plugin_config: str
    pooling: EmbeddingsCalculatorOVOptions.Pooling
    truncate: bool
    max_length: int
    def __init__(self, models_path: _Optional[str] = ..., normalize_embeddings: bool = ..., target_device: _Optional[str] = ..., plugin_config: _Optional[str] = ..., pooling: _Optional[_Union[EmbeddingsCalculatorOVOptions.Pooling, str]] = ..., truncate: bool = ..., max_length: _Optional[int] = ...) -> None: ...

class RerankCalculatorOVOptions(_message.Message):
    __slots__ = ("models_path", "max_allowed_chunks", "max_length", "target_device", "plugin_config", "max_position_embeddings")
    EXT_FIELD_NUMBER: _ClassVar[int]
    ext: _descriptor.FieldDescriptor
    MODELS_PATH_FIELD_NUMBER: _ClassVar[int]
    MAX_ALLOWED_CHUNKS_FIELD_NUMBER: _ClassVar[int]
    MAX_LENGTH_FIELD_NUMBER: _ClassVar[int]
    TARGET_DEVICE_FIELD_NUMBER: _ClassVar[int]
    PLUGIN_CONFIG_FIELD_NUMBER: _ClassVar[int]
    MAX_POSITION_EMBEDDINGS_FIELD_NUMBER: _ClassVar[int]
    models_path: str
    max_allowed_chunks: int
    max_length: int
    target_device: str
    plugin_config: str
    max_position_embeddings: int
    def __init__(self, models_path: _Optional[str] = ..., max_allowed_chunks: _Optional[int] = ..., max_length: _Optional[int] = ..., target_device: _Optional[str] = ..., plugin_config: _Optional[str] = ..., max_position_embeddings: _Optional[int] = ...) -> None: ...

class FlowLimiterCalculatorOptions(_message.Message):
    __slots__ = ("max_in_flight", "max_in_queue", "in_flight_timeout")
    EXT_FIELD_NUMBER: _ClassVar[int]
    ext: _descriptor.FieldDescriptor
    MAX_IN_FLIGHT_FIELD_NUMBER: _ClassVar[int]
    MAX_IN_QUEUE_FIELD_NUMBER: _ClassVar[int]
    IN_FLIGHT_TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    max_in_flight: int
    max_in_queue: int
    in_flight_timeout: int
    def __init__(self, max_in_flight: _Optional[int] = ..., max_in_queue: _Optional[int] = ..., in_flight_timeout: _Optional[int] = ...) -> None: ...

class PacketClonerCalculatorOptions(_message.Message):
    __slots__ = ("output_only_when_all_inputs_received", "output_packets_only_when_all_inputs_received")
    EXT_FIELD_NUMBER: _ClassVar[int]
    ext: _descriptor.FieldDescriptor
    OUTPUT_ONLY_WHEN_ALL_INPUTS_RECEIVED_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_PACKETS_ONLY_WHEN_ALL_INPUTS_RECEIVED_FIELD_NUMBER: _ClassVar[int]
    output_only_when_all_inputs_received: bool
    output_packets_only_when_all_inputs_received: bool
    def __init__(self, output_only_when_all_inputs_received: bool = ..., output_packets_only_when_all_inputs_received: bool = ...) -> None: ...

class GateCalculatorOptions(_message.Message):
    __slots__ = ("empty_packets_as_allow", "allow")
    EXT_FIELD_NUMBER: _ClassVar[int]
    ext: _descriptor.FieldDescriptor
    EMPTY_PACKETS_AS_ALLOW_FIELD_NUMBER: _ClassVar[int]
    ALLOW_FIELD_NUMBER: _ClassVar[int]
    empty_packets_as_allow: bool
    allow: bool
    def __init__(self, empty_packets_as_allow: bool = ..., allow: bool = ...) -> None: ...

class ConcatenateVectorCalculatorOptions(_message.Message):
    __slots__ = ("only_emit_if_all_present",)
    EXT_FIELD_NUMBER: _ClassVar[int]
    ext: _descriptor.FieldDescriptor
    ONLY_EMIT_IF_ALL_PRESENT_FIELD_NUMBER: _ClassVar[int]
    only_emit_if_all_present: bool
    def __init__(self, only_emit_if_all_present: bool = ...) -> None: ...

class Range(_message.Message):
    __slots__ = ("begin", "end")
    BEGIN_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    begin: int
    end: int
    def __init__(self, begin: _Optional[int] = ..., end: _Optional[int] = ...) -> None: ...

class SplitVectorCalculatorOptions(_message.Message):
    __slots__ = ("ranges", "element_only", "combine_outputs")
    EXT_FIELD_NUMBER: _ClassVar[int]
    ext: _descriptor.FieldDescriptor
    RANGES_FIELD_NUMBER: _ClassVar[int]
    ELEMENT_ONLY_FIELD_NUMBER: _ClassVar[int]
    COMBINE_OUTPUTS_FIELD_NUMBER: _ClassVar[int]
    ranges: _containers.RepeatedCompositeFieldContainer[Range]
    element_only: bool
    combine_outputs: bool
    def __init__(self, ranges: _Optional[_Iterable[_Union[Range, _Mapping]]] = ..., element_only: bool = ..., combine_outputs: bool = ...) -> None: ...
