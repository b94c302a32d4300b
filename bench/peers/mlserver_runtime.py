"""MLServer 1.7.1 custom runtime serving one PeerModel (mlserver_peer.py names it in each
model-settings.json as ``mlserver_runtime.PeerRuntime``; the spec is under parameters.extra).

Written the way MLServer's docs show a custom runtime: decode with NumpyCodec, compute, encode
with NumpyCodec. Runs in the MLServer venv, in the server's own process (parallel_workers 0).
"""

from __future__ import annotations

import peer_compute
from mlserver import MLModel
from mlserver.codecs import NumpyCodec
from mlserver.types import InferenceRequest, InferenceResponse


class PeerRuntime(MLModel):
    async def load(self) -> bool:
        self.spec = self.settings.parameters.extra
        self.compute = peer_compute.make(**self.spec["compute"])
        return True

    async def predict(self, payload: InferenceRequest) -> InferenceResponse:
        x = NumpyCodec.decode_input(payload.inputs[0])
        y = self.compute(x)
        output = NumpyCodec.encode_output(self.spec["output"], y)
        return InferenceResponse(model_name=self.name, id=payload.id, outputs=[output])
