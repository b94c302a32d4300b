"""An ``image_url``'s bytes, classified and fetched as OVMS does (COMPAT_MULTIMODAL §1.5), with
its messages:

1. a URL holding ``base64,`` anywhere: what follows the first one, base64-decoded (the ``data:``
   prefix and its MIME type are not read);
2. ``http://`` or ``https://``: downloaded, only from a host ``--allowed_media_domains`` names
   exactly (or from any host when it is ``all``), at most ``MAX_DOWNLOAD_BYTES``, following
   redirects only when ``OVMS_MEDIA_URL_ALLOW_REDIRECTS=1``;
3. anything else: a file, only under ``--allowed_local_media_path``, with no ``..`` in its path.

Beyond OVMS: a redirect is followed only to an allowed host, so the domain list is the only way
out; ``ftp://`` and ``sftp://`` are refused (OVMS's libcurl fetches them); a download is bounded
in time as a whole, not only between reads, so a body that trickles for ever holds nothing; a
local path is resolved (symlinks included) before the prefix check, so a link cannot lead out of
the allowed folder. The HTTP client is urllib3 (bench/bench_image_download.py compares it with
httpx).
"""

from __future__ import annotations

import base64
import binascii
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import urllib3

log = logging.getLogger("ovmsx.llm_calculator")

MAX_DOWNLOAD_BYTES = 20_000_000  # OVMS's MAX_IMAGE_SIZE_BYTES
CONNECT_TIMEOUT_S = 5.0
READ_TIMEOUT_S = 10.0
DOWNLOAD_DEADLINE_S = 30.0
MAX_REDIRECTS = 5
REDIRECTS_ENV = "OVMS_MEDIA_URL_ALLOW_REDIRECTS"
_CHUNK = 1 << 16
_OTHER_SCHEMES = ("ftp://", "sftp://")

DOWNLOAD_FAILED = "Image downloading failed"
NOT_ALLOWED_DOMAIN = "Given url does not match any allowed domain from allowed_media_domains"
LOCAL_DISABLED = "Loading images from local filesystem is disabled."
NOT_SUBPATH = "Given filepath is not subpath of allowed_local_media_path"
FILE_FAILED = "Image file parsing failed"
BAD_BASE64 = "Invalid base64 string in request"


class ImageSourceError(ValueError):
    """An image OVMS refuses to fetch, with its message (a 400)."""


@dataclass(frozen=True)
class MediaAccess:
    """What the server's flags allow (``--allowed_media_domains``,
    ``--allowed_local_media_path``)."""

    domains: tuple[str, ...] = ()
    """Hosts images may be downloaded from; ``("all",)`` for any; empty: none."""
    local_path: Path | None = None
    """The folder images may be read from; None: no file."""
    allow_redirects: bool = False

    @classmethod
    def from_flags(cls, domains: str | None, local_path: str | None) -> MediaAccess:
        names = tuple(name.strip() for name in (domains or "").split(",") if name.strip())
        folder = Path(os.path.normpath(os.path.abspath(local_path))) if local_path else None
        return cls(names, folder, os.environ.get(REDIRECTS_ENV) == "1")

    def allows_host(self, url: str) -> bool:
        if self.domains == ("all",):
            return True
        return urlsplit(url).hostname in self.domains


_POOL = urllib3.PoolManager(
    num_pools=16, timeout=urllib3.Timeout(connect=CONNECT_TIMEOUT_S, read=READ_TIMEOUT_S)
)


def image_bytes(url: str, access: MediaAccess) -> bytes:
    """The bytes ``url`` names; ``ImageSourceError`` with OVMS's message when it may not be
    fetched or cannot be."""
    marker = url.find("base64,")
    if marker >= 0:
        encoded = "".join(url[marker + len("base64,") :].split())  # line breaks allowed
        try:
            return base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise ImageSourceError(BAD_BASE64) from None
    if url.startswith(("http://", "https://")):
        return _downloaded(url, access)
    if url.startswith(_OTHER_SCHEMES):
        raise ImageSourceError(f"{DOWNLOAD_FAILED}: ovmsx downloads images over http and https")
    return _local_file(url, access)


def _downloaded(url: str, access: MediaAccess) -> bytes:
    if not access.allows_host(url):
        raise ImageSourceError(NOT_ALLOWED_DOMAIN)
    deadline = time.monotonic() + DOWNLOAD_DEADLINE_S
    for _ in range(MAX_REDIRECTS + 1):
        try:
            response = _POOL.request(
                "GET", url, preload_content=False, redirect=False, retries=False
            )
        except urllib3.exceptions.HTTPError as error:
            log.debug("downloading %s failed: %s", url, error)
            raise ImageSourceError(DOWNLOAD_FAILED) from None
        try:
            if response.status in (301, 302, 303, 307, 308) and access.allow_redirects:
                target = urljoin(url, response.headers.get("Location", ""))
                if not target.startswith(("http://", "https://")) or not access.allows_host(target):
                    log.debug("%s redirects to %s, which is not allowed", url, target)
                    raise ImageSourceError(DOWNLOAD_FAILED)
                url = target
                response.drain_conn()  # a redirect's body is empty
                continue
            if response.status != 200:
                log.debug("downloading %s failed: HTTP %d", url, response.status)
                raise ImageSourceError(DOWNLOAD_FAILED)
            body = _body(response, url, deadline)
        except BaseException:
            # Whatever is left unread (a refused body may never end) is not drained: the
            # connection is closed instead of going back to the pool.
            response.close()
            if response.connection is not None:
                response.connection.close()
            raise
        finally:
            response.release_conn()
        return body
    raise ImageSourceError(DOWNLOAD_FAILED)


def _body(response, url: str, deadline: float) -> bytes:
    """The body, read in chunks: refused past the size cap or the deadline, never held whole
    beyond the cap."""
    declared = response.headers.get("Content-Length")
    if declared is not None and declared.isdigit() and int(declared) > MAX_DOWNLOAD_BYTES:
        log.debug("%s declares %s bytes, more than %d", url, declared, MAX_DOWNLOAD_BYTES)
        raise ImageSourceError(DOWNLOAD_FAILED)
    chunks: list[bytes] = []
    size = 0
    try:
        # read1 returns what has arrived (read would wait for a whole chunk), so the deadline
        # is looked at while a body trickles; a silent one ends at the read timeout.
        while chunk := response.read1(_CHUNK):
            size += len(chunk)
            if size > MAX_DOWNLOAD_BYTES or time.monotonic() > deadline:
                log.debug("downloading %s stopped after %d bytes", url, size)
                raise ImageSourceError(DOWNLOAD_FAILED)
            chunks.append(chunk)
    except urllib3.exceptions.HTTPError as error:
        log.debug("downloading %s failed: %s", url, error)
        raise ImageSourceError(DOWNLOAD_FAILED) from None
    return b"".join(chunks)


def _local_file(text: str, access: MediaAccess) -> bytes:
    if access.local_path is None:
        raise ImageSourceError(LOCAL_DISABLED)
    if ".." in text.replace("\\", "/").split("/"):  # OVMS's forms, Windows' included
        raise ImageSourceError(f"Path {text} escape with .. is forbidden.")
    path = Path(os.path.normpath(os.path.abspath(text)))
    try:
        resolved = path.resolve(strict=False)
        folder = access.local_path.resolve(strict=False)
    except OSError:
        raise ImageSourceError(FILE_FAILED) from None
    # Component-wise, as OVMS compares (a sibling /data2 is not inside /data); resolved, so a
    # symlink in the allowed folder cannot point out of it.
    if not (path.is_relative_to(access.local_path) and resolved.is_relative_to(folder)):
        raise ImageSourceError(NOT_SUBPATH)
    try:
        return resolved.read_bytes()
    except OSError:
        raise ImageSourceError(FILE_FAILED) from None
