"""One entry of ``model_config_list``: a model (or a graph served as a model) and how to load it."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    Field,
    PlainValidator,
    PrivateAttr,
    model_validator,
)
from pydantic_core import PydanticCustomError

from ovmsx.config.preprocessing import Preprocessing
from ovmsx.config.shape_spec import (
    AUTO,
    Dim,
    LayoutSpec,
    ShapeSetting,
    parse_dim,
    parse_layout,
    parse_shape,
)
from ovmsx.config.strict_model import STRICT
from ovmsx.config.version_policy import VersionPolicy

log = logging.getLogger("ovmsx.config")

REMOTE_PREFIXES = ("gs://", "s3://", "az://", "azfs://", "azure://")
"""``base_path`` prefixes of cloud storage: ``s3://`` and ``gs://`` models are served from
local copies (ovmsx/storage); Azure's prefixes are refused when the model loads."""

# Keys in the OVMS schema up to 2026.2; OVMS 2026.3 removed stateful models and these with them.
REMOVED_STATEFUL_KEYS = (
    "stateful",
    "idle_sequence_cleanup",
    "low_latency_transformation",
    "max_sequence_number",
)

# Plugin keys OVMS still accepts and renames before they reach OpenVINO, which no longer knows them.
_RENAMED_PLUGIN_KEYS = {
    "CPU_THROUGHPUT_STREAMS": "NUM_STREAMS",
    "GPU_THROUGHPUT_STREAMS": "NUM_STREAMS",
    "CPU_THREADS_NUM": "INFERENCE_NUM_THREADS",
}
_THROUGHPUT_AUTO = {"CPU_THROUGHPUT_AUTO", "GPU_THROUGHPUT_AUTO"}

PluginValue = str | bool | int | float


def _invalid(reason: str, key: str | None = None) -> PydanticCustomError:
    # "key" (when given) names the entry inside the field, so the error points at it.
    ctx = {"reason": reason} if key is None else {"reason": reason, "key": key}
    return PydanticCustomError("invalid_value", "{reason}", ctx)


def _batch_size(value: object) -> Dim | Literal["auto"] | None:
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            raise _invalid("must be at least 0 (0 keeps the model's batch size)")
        return Dim.fixed(value) if value else None
    if isinstance(value, str):
        text = value.strip()
        if text in (AUTO, "0"):
            return AUTO if text == AUTO else None
        try:
            return parse_dim(text)
        except ValueError as bad:
            raise _invalid(f"batch size {bad}") from None
    raise _invalid('must be a number, a range like "1:8", or "auto"')


def _one_shape(value: object, key: str | None) -> ShapeSetting:
    try:
        if isinstance(value, str):
            return parse_shape(value)
        # The legacy per-input form: a JSON array of sizes.
        if (
            isinstance(value, list)
            and value
            and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
        ):
            return tuple(parse_dim(str(v)) for v in value)
    except ValueError as bad:
        raise _invalid(str(bad), key) from None
    raise _invalid('must be a shape string like "(1,3,224,224)" or "auto"', key)


def _shape(value: object) -> ShapeSetting | dict[str, ShapeSetting] | None:
    if value is None:
        return None
    if isinstance(value, dict):
        return {name: _one_shape(shape, name) for name, shape in value.items()}
    if isinstance(value, str):
        return _one_shape(value, None)
    raise _invalid("must be a shape string or an object {input name: shape string}")


def _one_layout(value: object, key: str | None) -> LayoutSpec:
    if not isinstance(value, str):
        raise _invalid('must be a layout string like "NHWC:NCHW"', key)
    try:
        return parse_layout(value)
    except ValueError as bad:
        raise _invalid(str(bad), key) from None


def _layout(value: object) -> LayoutSpec | dict[str, LayoutSpec] | None:
    if value is None:
        return None
    if isinstance(value, dict):
        return {name: _one_layout(layout, name) for name, layout in value.items()}
    return _one_layout(value, None)


def _plugin_config(value: object) -> dict[str, PluginValue]:
    if not isinstance(value, dict):
        raise _invalid("must be an object {property name: value}")
    for key, item in value.items():
        if not isinstance(item, PluginValue):
            raise _invalid("must be a string, a number or a boolean", key)
    return dict(value)


def _custom_loader_options(value: object) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise _invalid("must be an object with a loader_name")
    if not isinstance(value.get("loader_name"), str):
        raise _invalid("a string is required", "loader_name")
    return dict(value)


def _plugin_string(value: PluginValue) -> str:
    if isinstance(value, bool):
        # OpenVINO reads "true"/"false" (and YES/NO) for boolean properties.
        return "true" if value else "false"
    return str(value)


class ModelConfig(BaseModel):
    """The ``config`` object of one ``model_config_list`` entry.

    Validate with ``ModelConfig.model_validate(data, context={"config_dir": folder})`` so that
    a relative ``base_path`` resolves against the config file's folder (default: the current
    directory at validation time).
    """

    model_config = STRICT

    name: Annotated[str, Field(min_length=1)]
    """The name clients use to address the model."""

    base_path: str | None = None
    """The model's folder (version subfolders ``1/``, ``2/``…) or a single model file; relative
    to the config file's folder. ``gs://``, ``s3://`` and ``az://`` URLs are kept as given (see
    ``is_remote``; ovmsx/storage reads the first two). Absent: the folder named like the model,
    next to the config file."""

    batch_size: Annotated[Dim | Literal["auto"] | None, PlainValidator(_batch_size)] = None
    """Batch dimension to reshape to: ``Dim.fixed(n)``, a range ``Dim(lo, hi)``, ``Dim(-1, -1)``
    for any, or ``"auto"``. ``None`` (also for ``0``) keeps the model's batch size."""

    shape: Annotated[ShapeSetting | dict[str, ShapeSetting] | None, PlainValidator(_shape)] = None
    """One shape for every input, or ``{input name: shape}``; see ``shape_for``."""

    layout: Annotated[LayoutSpec | dict[str, LayoutSpec] | None, PlainValidator(_layout)] = None
    """One layout for every input, or ``{input name: layout}``; see ``layout_for``."""

    model_version_policy: VersionPolicy = Field(default_factory=VersionPolicy.default)
    """Which versions to serve; the latest one by default."""

    nireq: Annotated[int, Field(ge=0)] = 0
    """Number of parallel infer requests; 0 lets OpenVINO choose."""

    target_device: Annotated[str, Field(min_length=1)] = "CPU"
    """OpenVINO device name: ``CPU``, ``GPU``, ``AUTO:GPU,CPU``…"""

    allow_cache: bool = True
    """Whether the compiled model may be stored in the server's ``--cache_dir``."""

    plugin_config: Annotated[dict[str, PluginValue], PlainValidator(_plugin_config)] = Field(
        default_factory=dict
    )
    """OpenVINO properties as written; ``plugin_config_strings()`` gives what the device takes."""

    custom_loader_options: Annotated[
        dict[str, Any] | None, PlainValidator(_custom_loader_options)
    ] = None
    """Options for a custom model loader; requires ``loader_name``. Kept, not yet used."""

    graph_path: str | None = None
    """For a graph served as a model: its ``.pbtxt``, relative to ``base_path``."""

    subconfig: str | None = None
    """For a graph served as a model: a config file with the models the graph uses."""

    _config_dir: Path = PrivateAttr(default_factory=Path.cwd)
    # Set only from the command line (single-model mode): config.json has no such keys.
    _preprocessing: Preprocessing | None = PrivateAttr(default=None)

    def model_post_init(self, context: Any) -> None:
        if isinstance(context, dict):
            if context.get("config_dir") is not None:
                self._config_dir = Path(context["config_dir"])
            self._preprocessing = context.get("preprocessing")

    @property
    def preprocessing(self) -> Preprocessing | None:
        """What ``--mean``, ``--scale``, ``--color_format`` and ``--precision`` ask of the
        model's input (single-model mode only); ``None`` when none was given."""
        return self._preprocessing

    @model_validator(mode="before")
    @classmethod
    def _reject_removed_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for key in REMOVED_STATEFUL_KEYS:
                if key in data:
                    raise PydanticCustomError(
                        "removed_key",
                        "{reason}",
                        {
                            "key": key,
                            "reason": "removed in OVMS 2026.3 together with stateful models, "
                            "which ovmsx does not serve",
                        },
                    )
        return data

    @property
    def config_dir(self) -> Path:
        """The folder relative paths are resolved against."""
        return self._config_dir

    @property
    def is_remote(self) -> bool:
        """True when ``base_path`` is a cloud storage URL."""
        return self.base_path is not None and self.base_path.startswith(REMOTE_PREFIXES)

    @property
    def local_path(self) -> Path | None:
        """The absolute local path of the model, or ``None`` for a cloud URL."""
        if self.is_remote:
            return None
        path = Path(self.base_path) if self.base_path else Path(self.name)
        return Path(os.path.normpath(self._config_dir / path))

    def shape_for(self, input_name: str) -> ShapeSetting | None:
        """The configured shape of one input (a single ``shape`` applies to all), or ``None``."""
        if isinstance(self.shape, dict):
            return self.shape.get(input_name)
        return self.shape

    def layout_for(self, input_name: str) -> LayoutSpec | None:
        """The configured layout of one input (a single ``layout`` applies to all), or ``None``."""
        if isinstance(self.layout, dict):
            return self.layout.get(input_name)
        return self.layout

    def plugin_config_strings(self) -> dict[str, str]:
        """``plugin_config`` as the string map OpenVINO's ``compile_model`` takes.

        Numbers become their decimal text, booleans ``"true"``/``"false"``. Keys OVMS renames
        are renamed the same way, with a warning: ``CPU_THROUGHPUT_STREAMS`` and
        ``GPU_THROUGHPUT_STREAMS`` become ``NUM_STREAMS`` (or ``PERFORMANCE_HINT: THROUGHPUT``
        for their ``*_THROUGHPUT_AUTO`` value), ``CPU_THREADS_NUM`` ``INFERENCE_NUM_THREADS``.
        """
        result: dict[str, str] = {}
        for key, value in self.plugin_config.items():
            name, text = key, _plugin_string(value)
            if key in _RENAMED_PLUGIN_KEYS:
                if text in _THROUGHPUT_AUTO:
                    name, text = "PERFORMANCE_HINT", "THROUGHPUT"
                else:
                    name = _RENAMED_PLUGIN_KEYS[key]
                log.warning(
                    "model %s: plugin_config key %s is deprecated; using %s=%s",
                    self.name,
                    key,
                    name,
                    text,
                )
            result[name] = text
        return result
