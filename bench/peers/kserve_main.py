"""KServe 0.21 ModelServer serving the models of a specs file (run by kserve_peer.py).

    python kserve_main.py --peer-specs SPECS.json --grpc_port P --http_port P2 \
        --enable_latency_logging false

Runs in the KServe venv. KServe reads its own flags from the command line when imported; this
script reads only ``--peer-specs``. Two changes to KServe's defaults, for a fair benchmark: its
servers bind to 127.0.0.1 (KServe hard-codes ``[::]`` and ``0.0.0.0``), and the log line its gRPC
interceptor writes for every call is filtered out (otherwise the benchmark measures the logger).
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

import kserve
import kserve.protocol.grpc.server as kserve_grpc
import kserve.protocol.rest.server as kserve_rest
import numpy as np
import peer_compute
from grpc import aio
from kserve.protocol.infer_type import InferOutput, InferRequest, InferResponse

HOST = "127.0.0.1"


class PeerModel(kserve.Model):
    """One model: the first input's array through ``peer_compute``, as one binary output."""

    def __init__(self, spec: dict) -> None:
        super().__init__(spec["name"])
        self.spec = spec
        self.compute = peer_compute.make(**spec["compute"])
        self.ready = True

    # A plain (not async) predict: KServe calls it on its event loop, as most KServe models do.
    def predict(
        self,
        payload: InferRequest,
        headers: dict | None = None,
        response_headers: dict | None = None,
    ) -> InferResponse:
        x = payload.inputs[0].as_numpy()
        y = np.ascontiguousarray(self.compute(x))
        output = InferOutput(name=self.spec["output"], shape=list(y.shape), datatype="FP32")
        output.set_data_from_numpy(y, binary_data=True)
        # Over REST, the answer takes the form the request asks for (binary_data_output); a REST
        # request may carry no id, and KServe's response model needs a string.
        return InferResponse(
            payload.id or "",
            self.name,
            [output],
            use_binary_outputs=payload.use_binary_outputs,
        )


class _DropCallLog(logging.Filter):
    """Drops the ``grpc method: ...`` record KServe's LoggingInterceptor writes for every call."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("grpc method:")


class _LoopbackAio:
    """Stands in for ``grpc.aio`` in KServe's gRPC module: same servers, bound to 127.0.0.1."""

    def __getattr__(self, name: str):
        return getattr(aio, name)

    @staticmethod
    def server(*args, **kwargs) -> aio.Server:
        server = aio.server(*args, **kwargs)
        bind = server.add_insecure_port
        server.add_insecure_port = lambda address: bind(address.replace("[::]", HOST))
        return server


def _bind_loopback() -> None:
    kserve_grpc.aio = _LoopbackAio()
    rest_init = kserve_rest.RESTServer.__init__

    def init(self, *args, **kwargs) -> None:
        rest_init(self, *args, **kwargs)
        self.config.host = HOST  # uvicorn reads it when it binds, after this

    kserve_rest.RESTServer.__init__ = init


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--peer-specs", type=Path, required=True)
    args, _ = parser.parse_known_args()  # the rest are KServe's
    specs = json.loads(args.peer_specs.read_text())
    _bind_loopback()
    server = kserve.ModelServer()
    logging.getLogger("kserve").addFilter(_DropCallLog())
    server.start([PeerModel(spec) for spec in specs])


if __name__ == "__main__":
    main()
