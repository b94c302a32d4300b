"""Where a request's encoded images are checked, decoded and fitted: one thread of their own.

Decoding takes milliseconds per image (16 ms for a 1080p JPEG here), too long for the thread
polling gRPC or for the event loop, which would hold every other request meanwhile. One thread
is enough: it hands the decoding of a batch to the decode pool, a share per core
(``decode.in_shares``). Keeping it to one also keeps to one the malloc arena that the
conversions' large buffers come from, so memory freed by a refused request is reused by the
next rather than held by one arena per thread.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import TypeVar

_Result = TypeVar("_Result")

_thread: ThreadPoolExecutor | None = None
_thread_lock = threading.Lock()


async def off_loop(work: Callable[..., _Result], *args: object) -> _Result:
    """``work(*args)`` on the images' thread, awaited."""
    global _thread
    with _thread_lock:
        if _thread is None:
            _thread = ThreadPoolExecutor(1, thread_name_prefix="ovmsx-image-requests")
    return await asyncio.get_running_loop().run_in_executor(_thread, partial(work, *args))
