"""Where a chat image may come from (ovmsx/genai/vision/image_sources.py), against a real HTTP
server on loopback and real files: OVMS's rules and messages (COMPAT_MULTIMODAL §1.5), and the
bounds beyond them (redirects only to allowed hosts, a size cap while reading, a deadline for
the whole download, symlinks resolved)."""

from __future__ import annotations

import base64
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import cv2
import numpy as np
import pytest

from ovmsx.genai.vision import image_sources
from ovmsx.genai.vision.image_sources import (
    BAD_BASE64,
    DOWNLOAD_FAILED,
    FILE_FAILED,
    LOCAL_DISABLED,
    MAX_DOWNLOAD_BYTES,
    NOT_ALLOWED_DOMAIN,
    NOT_SUBPATH,
    ImageSourceError,
    MediaAccess,
    image_bytes,
)
from ovmsx.genai.vision.rgb_image import PARSING_FAILED, ImageDecodeError, rgb_image

RED_PIXELS = np.zeros((3, 4, 3), np.uint8)
RED_PIXELS[:, :, 2] = 255  # OpenCV's BGR: red
PNG = cv2.imencode(".png", RED_PIXELS)[1].tobytes()


class _Images(BaseHTTPRequestHandler):
    """/image.png, /missing (404), /big (one byte over the cap, with its length), /endless (a
    chunked body that never ends), /trickle (a byte a tenth of a second), /to?url (a redirect)."""

    def log_message(self, *args) -> None:  # quiet
        pass

    def do_GET(self) -> None:  # http.server's name for a GET handler
        path, _, query = self.path.partition("?")
        if path == "/image.png":
            self._send(PNG)
        elif path == "/big":
            self.send_response(200)
            self.send_header("Content-Length", str(MAX_DOWNLOAD_BYTES + 1))
            self.end_headers()
            self._write_until_closed(b"\0" * (1 << 20), MAX_DOWNLOAD_BYTES + 1)
        elif path in ("/endless", "/trickle"):
            self.send_response(200)
            self.end_headers()  # no length: read until the connection closes
            piece = b"\0" * (1 << 16) if path == "/endless" else b"\0"
            self._write_until_closed(piece, None, 0.1 if path == "/trickle" else 0.0)
        elif path == "/to":
            self.send_response(302)
            self.send_header("Location", query)
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self.send_error(404)

    def _send(self, body: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _write_until_closed(self, piece: bytes, total: int | None, pause: float = 0.0) -> None:
        sent = 0
        try:
            while total is None or sent < total:
                self.wfile.write(piece)
                sent += len(piece)
                if pause:
                    threading.Event().wait(pause)
        except OSError:  # the client gave up, as it should
            pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Images)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


LOOPBACK = MediaAccess(domains=("127.0.0.1",))


def refused(url: str, access: MediaAccess) -> str:
    with pytest.raises(ImageSourceError) as error:
        image_bytes(url, access)
    return str(error.value)


def test_base64_after_the_first_marker_is_the_image() -> None:
    encoded = base64.b64encode(PNG).decode()
    assert image_bytes(f"data:image/png;base64,{encoded}", MediaAccess()) == PNG
    # OVMS reads neither the data: prefix nor the MIME type; line breaks are allowed.
    wrapped = "\n".join(encoded[i : i + 16] for i in range(0, len(encoded), 16))
    assert image_bytes(f"whatever base64,{wrapped}", MediaAccess()) == PNG
    assert refused("data:image/png;base64,not*base64", MediaAccess()) == BAD_BASE64


def test_a_url_is_downloaded_only_from_an_allowed_host(server: str) -> None:
    url = f"{server}/image.png"
    assert image_bytes(url, LOOPBACK) == PNG
    assert image_bytes(url, MediaAccess(domains=("all",))) == PNG
    assert refused(url, MediaAccess()) == NOT_ALLOWED_DOMAIN
    assert refused(url, MediaAccess(domains=("example.com", "localhost"))) == NOT_ALLOWED_DOMAIN


def test_other_schemes_are_refused() -> None:
    message = refused("ftp://127.0.0.1/image.png", MediaAccess(domains=("all",)))
    assert message.startswith(DOWNLOAD_FAILED)
    assert refused("file:///etc/hostname", MediaAccess()) == LOCAL_DISABLED


@pytest.mark.parametrize("path", ["/missing", "/big", "/endless"])
def test_a_failed_or_oversized_download_is_refused(server: str, path: str) -> None:
    assert refused(f"{server}{path}", LOOPBACK) == DOWNLOAD_FAILED


def test_a_body_that_trickles_is_cut_at_the_deadline(server: str, monkeypatch) -> None:
    monkeypatch.setattr(image_sources, "DOWNLOAD_DEADLINE_S", 0.5)
    assert refused(f"{server}/trickle", LOOPBACK) == DOWNLOAD_FAILED


def test_redirects_are_followed_only_when_allowed_and_only_to_allowed_hosts(server: str) -> None:
    port = server.rsplit(":", 1)[1]
    same_host = f"{server}/to?{server}/image.png"
    other_host = f"{server}/to?http://localhost:{port}/image.png"
    following = MediaAccess(domains=("127.0.0.1",), allow_redirects=True)
    assert refused(same_host, LOOPBACK) == DOWNLOAD_FAILED  # OVMS follows none by default
    assert image_bytes(same_host, following) == PNG
    assert refused(other_host, following) == DOWNLOAD_FAILED
    assert refused(f"{server}/to?file:///etc/hostname", following) == DOWNLOAD_FAILED


def test_the_redirect_switch_is_ovms_variable(monkeypatch) -> None:
    monkeypatch.setenv("OVMS_MEDIA_URL_ALLOW_REDIRECTS", "1")
    assert MediaAccess.from_flags("a.com, b.com", None) == MediaAccess(
        ("a.com", "b.com"), None, True
    )
    monkeypatch.setenv("OVMS_MEDIA_URL_ALLOW_REDIRECTS", "true")
    assert not MediaAccess.from_flags("all", None).allow_redirects


def test_a_local_file_is_read_only_inside_the_allowed_folder(tmp_path: Path) -> None:
    allowed = tmp_path / "images"
    (allowed / "cats").mkdir(parents=True)
    (allowed / "cats" / "a.png").write_bytes(PNG)
    sibling = tmp_path / "images2"
    sibling.mkdir()
    (sibling / "b.png").write_bytes(PNG)
    (allowed / "out.png").symlink_to(sibling / "b.png")
    access = MediaAccess.from_flags(None, str(allowed))

    assert image_bytes(str(allowed / "cats" / "a.png"), access) == PNG
    assert refused(str(allowed / "cats" / "a.png"), MediaAccess()) == LOCAL_DISABLED
    escape = f"{allowed}/cats/../../images2/b.png"
    assert refused(escape, access) == f"Path {escape} escape with .. is forbidden."
    assert refused(str(sibling / "b.png"), access) == NOT_SUBPATH  # a prefix, not a subfolder
    assert refused(str(allowed / "out.png"), access) == NOT_SUBPATH  # a link leading out
    assert refused(str(allowed / "cats" / "none.png"), access) == FILE_FAILED


def _encoded(extension: str, pixels: np.ndarray) -> bytes:
    return cv2.imencode(extension, pixels)[1].tobytes()


@pytest.mark.parametrize("extension", [".png", ".bmp", ".gif"])
def test_an_image_becomes_rgb_u8_with_a_batch_axis(extension: str) -> None:
    tensor = rgb_image(_encoded(extension, RED_PIXELS))
    assert tensor.dtype == np.uint8
    assert tensor.shape == (1, 3, 4, 3)
    # Red, in RGB order (GIF's palette may move it a little).
    np.testing.assert_allclose(tensor[0, 0, 0], [255, 0, 0], atol=4)


def test_grey_alpha_sixteen_bit_and_jpeg_images_become_three_channels() -> None:
    grey = np.full((5, 6), 200, np.uint8)
    assert rgb_image(_encoded(".png", grey)).shape == (1, 5, 6, 3)
    alpha = np.dstack([RED_PIXELS, np.full((3, 4), 128, np.uint8)])
    np.testing.assert_array_equal(rgb_image(_encoded(".png", alpha))[0, 1, 1], [255, 0, 0])
    deep = (RED_PIXELS.astype(np.uint16) << 8) | 0xFF
    np.testing.assert_array_equal(rgb_image(_encoded(".png", deep))[0, 2, 3], [255, 0, 0])
    photo = np.random.default_rng(0).integers(0, 255, (16, 24, 3), np.uint8)
    assert rgb_image(_encoded(".jpg", photo)).shape == (1, 16, 24, 3)


@pytest.mark.parametrize("data", [b"", b"not an image", PNG[:20]])
def test_bytes_that_are_no_image_are_refused(data: bytes) -> None:
    with pytest.raises(ImageDecodeError) as error:
        rgb_image(data)
    assert str(error.value) == PARSING_FAILED
