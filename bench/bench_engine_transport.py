"""How the server hears from an LLM engine process: the transports measured for
ovmsx/genai/engine/engine_client.py, side by side.

An engine sends one frame per step (every stream's new text); the server's event loop must take
it in with as little CPU as possible, since that CPU is what the serving loop loses. Each
contender runs a child process that sends FRAMES frames of a step's typical size (events for 32
streams) as fast as it can, and one that answers pings (round trip: the latency a token adds):

- ``asyncio``: a socket pair, the server end an asyncio protocol, length-prefixed pickle frames
  (what ovmsx uses);
- ``pipe-thread``: multiprocessing.Pipe read by a thread that hands each frame to the loop with
  call_soon_threadsafe (one thread hop per frame);
- ``zmq``: pyzmq's asyncio socket over ipc:// (when pyzmq is installed).

    python bench/bench_engine_transport.py [--frames 20000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import pickle
import resource
import socket
import statistics
import threading
import time

from perf_doc import add_write_arguments, machine, publish

from ovmsx.genai.engine.wire import FrameReader, pack

# Children are forked: they inherit their end of the channel and need nothing else.
_FORK = multiprocessing.get_context("fork")
STREAMS = 32
# One step's events: (kind, request id, (index, text, final, reason)) per stream.
STEP = [("text", i, (0, " word", False, None)) for i in range(STREAMS)]


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


# -- children ------------------------------------------------------------------------------------


def _socket_child(sock: socket.socket, frames: int, ping: bool) -> None:
    if ping:
        reader = FrameReader()
        for _ in range(frames):
            got: list = []
            while not got:
                got = reader.feed(sock.recv(65536))
            sock.sendall(pack(got[0]))
    else:
        data = pack(STEP)
        for _ in range(frames):
            sock.sendall(data)
    sock.close()


def _pipe_child(connection, frames: int, ping: bool) -> None:
    for _ in range(frames):
        if ping:
            connection.send(connection.recv())
        else:
            connection.send(STEP)
    connection.close()


def _zmq_child(address: str, frames: int, ping: bool) -> None:
    import zmq

    context = zmq.Context()
    sock = context.socket(zmq.PAIR)
    sock.connect(address)
    for _ in range(frames):
        if ping:
            sock.send(sock.recv())
        else:
            sock.send(pickle.dumps(STEP, protocol=pickle.HIGHEST_PROTOCOL))
    sock.close(linger=1000)
    context.term()


# -- contenders (the server's side) --------------------------------------------------------------


async def asyncio_socket(frames: int, ping: bool) -> tuple[float, float]:
    loop = asyncio.get_running_loop()
    ours, theirs = socket.socketpair()
    child = _FORK.Process(target=_socket_child, args=(theirs, frames, ping))
    child.start()
    theirs.close()
    done = loop.create_future()
    count = 0
    reader = FrameReader()

    class Protocol(asyncio.Protocol):
        def connection_made(self, transport):
            self.transport = transport

        def data_received(self, data):
            nonlocal count
            for message in reader.feed(data):
                count += 1
                if ping and count < frames:
                    self.transport.write(pack(message))
                if count == frames and not done.done():
                    done.set_result(None)

    ours.setblocking(False)
    transport, _ = await loop.connect_accepted_socket(Protocol, ours)
    cpu, wall = _cpu(), time.perf_counter()
    if ping:
        transport.write(pack(STEP))
    await done
    result = (time.perf_counter() - wall, _cpu() - cpu)
    transport.close()
    child.join()
    return result


async def pipe_thread(frames: int, ping: bool) -> tuple[float, float]:
    loop = asyncio.get_running_loop()
    ours, theirs = multiprocessing.Pipe()
    child = _FORK.Process(target=_pipe_child, args=(theirs, frames, ping))
    child.start()
    theirs.close()
    done = loop.create_future()
    count = 0

    def on_loop(message) -> None:
        nonlocal count
        count += 1
        if ping and count < frames:
            ours.send(message)
        if count == frames:
            done.set_result(None)

    def read() -> None:
        for _ in range(frames):
            loop.call_soon_threadsafe(on_loop, ours.recv())

    cpu, wall = _cpu(), time.perf_counter()
    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    if ping:
        ours.send(STEP)
    await done
    result = (time.perf_counter() - wall, _cpu() - cpu)
    thread.join()
    child.join()
    return result


async def zmq_asyncio(frames: int, ping: bool) -> tuple[float, float]:
    import zmq
    import zmq.asyncio

    context = zmq.asyncio.Context()
    sock = context.socket(zmq.PAIR)
    address = f"ipc:///tmp/ovmsx-bench-{os.getpid()}"
    sock.bind(address)
    child = _FORK.Process(target=_zmq_child, args=(address, frames, ping))
    child.start()
    cpu, wall = _cpu(), time.perf_counter()
    if ping:
        await sock.send(pickle.dumps(STEP))
    for index in range(frames):
        message = pickle.loads(await sock.recv())
        if ping and index < frames - 1:
            await sock.send(pickle.dumps(message))
    result = (time.perf_counter() - wall, _cpu() - cpu)
    sock.close()
    context.term()
    child.join()
    return result


CONTENDERS = {"asyncio": asyncio_socket, "pipe-thread": pipe_thread, "zmq": zmq_asyncio}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--frames", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=3)
    add_write_arguments(parser)
    args = parser.parse_args()
    contenders = dict(CONTENDERS)
    try:
        import zmq  # noqa: F401
    except ImportError:
        del contenders["zmq"]
        print("pyzmq not installed: zmq left out")
    results: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for _ in range(args.rounds):  # contenders alternate within each round
        for mode in ("stream", "ping"):
            for name, contender in contenders.items():
                frames = args.frames if mode == "stream" else args.frames // 4
                wall, cpu = asyncio.run(contender(frames, mode == "ping"))
                results.setdefault((name, mode), []).append((wall / frames, cpu / frames))
    lines = [
        f"Frames of one engine step's events for {STREAMS} streams, sent as fast as the child "
        f"can ({args.frames:,}) and as pings ({args.frames // 4:,}); {args.rounds} rounds, "
        "contenders alternating; median (min-max).",
        "",
        "| transport | server CPU µs/frame | frames/s | round trip µs |",
        "|---|---|---|---|",
    ]
    for name in contenders:
        stream = results[(name, "stream")]
        ping = results[(name, "ping")]
        cpu = [c * 1e6 for _, c in stream]
        rate = [1 / w for w, _ in stream]
        trip = [w * 1e6 for w, _ in ping]
        lines.append(
            f"| {name} | {statistics.median(cpu):.1f} ({min(cpu):.1f}-{max(cpu):.1f}) | "
            f"{statistics.median(rate):,.0f} | {statistics.median(trip):.1f} "
            f"({min(trip):.1f}-{max(trip):.1f}) |"
        )
    lines += ["", machine(["pyzmq"])]
    publish("\n".join(lines), "llm-engine-transport", args)


if __name__ == "__main__":
    main()
