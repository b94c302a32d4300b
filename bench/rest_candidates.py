"""One REST server candidate, serving ovmsx's REST API (ovmsx.frontend.rest_app) for bench_rest.py.

Every candidate loads the same config into an ovmsx registry and answers through the same
``RestApp.handle``; they differ only in the HTTP library that carries the bytes (and, for
``--json stdlib``, in the JSON library the REST codec uses). Run by bench_rest.py:

    python bench/rest_candidates.py --candidate uvicorn-asgi --port P --config C [--json stdlib]

It prints ``ready`` once it listens and serves until SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import socket
from pathlib import Path

import numpy as np

from ovmsx import _core
from ovmsx.config import load_config
from ovmsx.frontend.kserve_service import KServeService
from ovmsx.frontend.rest_app import RestApp
from ovmsx.frontend.rest_context import RestContext
from ovmsx.frontend.rest_response import RestResponse
from ovmsx.servables.inference_dispatch import InferenceDispatcher
from ovmsx.servables.registry import ServableRegistry
from ovmsx.server import MMAP_THRESHOLD, TRIM_THRESHOLD, set_cpu_defaults

HEADER = "inference-header-content-length"
ONE_GIB = 1 << 30


# -- uvicorn (httptools parser) ------------------------------------------------------------


def _asgi(app: RestApp):
    """A raw ASGI application: no framework between uvicorn and RestApp."""

    async def asgi(scope, receive, send) -> None:
        header = None
        for key, value in scope["headers"]:
            if key == b"inference-header-content-length":
                header = value.decode("latin-1")
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        path = scope["raw_path"].decode("latin-1")
        response = await app.handle(scope["method"], path, header, body)
        await _asgi_send(send, response)

    return asgi


async def _asgi_send(send, response: RestResponse) -> None:
    headers = [
        (b"content-type", response.content_type.encode()),
        (b"content-length", str(response.length).encode()),
    ]
    if response.header_length is not None:
        headers.append((HEADER.encode(), str(response.header_length).encode()))
    await send({"type": "http.response.start", "status": response.status, "headers": headers})
    tail = response.tail
    await send({"type": "http.response.body", "body": response.body, "more_body": bool(tail)})
    for index, chunk in enumerate(tail):
        more = index + 1 < len(tail)
        await send({"type": "http.response.body", "body": chunk, "more_body": more})


def _starlette(app: RestApp):
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    async def endpoint(request: Request) -> Response:
        body = await request.body()
        path = request.scope["raw_path"].decode("latin-1")
        response = await app.handle(request.method, path, request.headers.get(HEADER), body)
        content = b"".join([response.body, *response.tail])
        headers = {}
        if response.header_length is not None:
            headers[HEADER] = str(response.header_length)
        return Response(content, response.status, headers, response.content_type)

    methods = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"]
    return Starlette(routes=[Route("/{path:path}", endpoint, methods=methods)])


async def _serve_uvicorn(asgi_app, sock: socket.socket):
    import uvicorn

    config = uvicorn.Config(
        asgi_app,
        http="httptools",
        lifespan="off",
        log_config=None,
        access_log=False,
        ws="none",
        timeout_keep_alive=60,
    )
    config.load()
    server = uvicorn.Server(config)
    server.lifespan = config.lifespan_class(config)
    await server.startup(sockets=[sock])
    ticker = asyncio.create_task(server.main_loop())  # keeps the Date header fresh

    async def stop() -> None:
        server.should_exit = True
        await ticker
        await server.shutdown()

    return stop


# -- aiohttp ------------------------------------------------------------------------------


def _aiohttp_response(response: RestResponse):
    from aiohttp import web

    headers = {}
    if response.header_length is not None:
        headers[HEADER] = str(response.header_length)
    body = response.body if not response.tail else b"".join([response.body, *response.tail])
    return web.Response(
        body=body, status=response.status, headers=headers, content_type=response.content_type
    )


async def _serve_aiohttp_lowlevel(app: RestApp, sock: socket.socket):
    from aiohttp import web_server

    async def handler(request):
        body = await request.content.read()
        response = await app.handle(
            request.method, request.raw_path, request.headers.get(HEADER), body
        )
        return _aiohttp_response(response)

    server = web_server.Server(handler)
    listener = await asyncio.get_running_loop().create_server(server, sock=sock)

    async def stop() -> None:
        listener.close()
        await server.shutdown(5)

    return stop


async def _serve_aiohttp_web(app: RestApp, sock: socket.socket):
    from aiohttp import web

    async def handler(request: web.Request) -> web.Response:
        body = await request.read()
        response = await app.handle(
            request.method, request.raw_path, request.headers.get(HEADER), body
        )
        return _aiohttp_response(response)

    application = web.Application(client_max_size=ONE_GIB)
    application.router.add_route("*", "/{tail:.*}", handler)
    runner = web.AppRunner(application, access_log=None)
    await runner.setup()
    site = web.SockSite(runner, sock)
    await site.start()
    return runner.cleanup


# -- the stdlib json variant --------------------------------------------------------------


def _use_stdlib_json() -> None:
    """Swap orjson for the standard library in the REST codec (numpy arrays via tolist)."""
    import ovmsx.frontend.rest_outputs as outputs
    import ovmsx.frontend.rest_request as request
    import ovmsx.frontend.rest_response as response

    def dumps(document, option=None, default=None) -> bytes:
        def plain(value):
            if isinstance(value, np.ndarray):
                return value.tolist()
            raise TypeError(type(value))

        return json.dumps(document, default=plain, separators=(",", ":")).encode()

    class StdlibJson:
        JSONDecodeError = json.JSONDecodeError
        OPT_SERIALIZE_NUMPY = 0

        @staticmethod
        def loads(text):
            return json.loads(bytes(text))

    StdlibJson.dumps = staticmethod(dumps)
    for module in (outputs, request, response):
        module.orjson = StdlibJson


CANDIDATES = {
    "uvicorn-asgi": lambda app, sock: _serve_uvicorn(_asgi(app), sock),
    "uvicorn-starlette": lambda app, sock: _serve_uvicorn(_starlette(app), sock),
    "aiohttp-lowlevel": _serve_aiohttp_lowlevel,
    "aiohttp-web": _serve_aiohttp_web,
}


async def main(args: argparse.Namespace) -> None:
    if args.json == "stdlib":
        _use_stdlib_json()
    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stopping.set)
    # The process settings of the ovmsx command: CPU defaults and the allocator's tuning.
    set_cpu_defaults(1)
    _core.tune_allocator(MMAP_THRESHOLD, TRIM_THRESHOLD)
    config = load_config(args.config)
    dispatcher = InferenceDispatcher(loop)
    registry = ServableRegistry(dispatcher)
    await registry.load(config.models, config.graphs, config.pipelines, config.libraries)
    app = RestApp(RestContext(registry, KServeService(registry)))
    # IPPROTO_TCP: asyncio only turns Nagle off on sockets that name their protocol.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(1024)
    sock.setblocking(False)
    stop = await CANDIDATES[args.candidate](app, sock)
    print("ready", flush=True)
    await stopping.wait()
    await stop()
    await registry.unload()
    dispatcher.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--candidate", choices=sorted(CANDIDATES), required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--config", type=Path, required=True)
    parser.add_argument("--json", choices=("orjson", "stdlib"), default="orjson")
    asyncio.run(main(parser.parse_args()))
