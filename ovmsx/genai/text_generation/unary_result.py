"""The result of a unary generation: the engine's ``done`` data, or the request's error in
OVMS's words (shared by chat/completions and the Responses API)."""

from __future__ import annotations

from ovmsx.genai.engine.engine_client import EngineFailed, Generation
from ovmsx.genai.openai.v3_errors import engine_failure, execution_error


async def unary_result(generation: Generation, node: str) -> dict:
    """Waits for the generation's end; raises ``V3Error``. The generation is closed on return,
    and when the waiting is cancelled (the client left)."""
    try:
        async for kind, data in generation:
            if kind == "done":
                if "error" in data:
                    raise execution_error(node, data["error"], "INTERNAL")
                return data
            if kind == "error":
                raise execution_error(node, data)
    except EngineFailed as error:
        raise engine_failure(node, str(error)) from None
    finally:
        generation.close()
    raise execution_error(node, "the generation ended without a result", "INTERNAL")
