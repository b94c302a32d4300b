"""What a cloud ``base_path`` names: the store, its endpoint, the bucket and the key prefix.

Accepted forms (OVMS's): ``s3://bucket/path``, ``s3://host:port/bucket/path`` (the endpoint
named in the path, spoken to over HTTP) and ``gs://bucket/path``. ``az://``, ``azfs://`` and
``azure://`` are refused: no Azure emulator installs from the package index, so ovmsx could
not test an Azure reader, and it ships none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ovmsx.status import StatusCode, StatusError, status_error

S3 = "s3"
GCS = "gs"
AZURE_PREFIXES = ("az://", "azfs://", "azure://")

# host:port before the bucket: a host name with a dot or a colon-port cannot be a bucket name
# (bucket names have no colon), so the form is unambiguous.
_S3_WITH_ENDPOINT = re.compile(r"s3://([0-9A-Za-z.-]+):([0-9]+)/(.*)")


@dataclass(frozen=True)
class StorageUrl:
    scheme: str
    """``S3`` or ``GCS``."""
    bucket: str
    prefix: str
    """The model's key prefix without a trailing slash; "" is the bucket's root."""
    endpoint: str | None = None
    """``http://host:port`` when the URL names the endpoint (``s3://host:port/...``)."""

    @property
    def text(self) -> str:
        """The URL as ovmsx writes it in messages: the store, bucket and prefix."""
        return f"{self.scheme}://{self.bucket}/{self.prefix}".rstrip("/")

    def key_prefix(self) -> str:
        """The prefix every object of the model starts with ("" or ending with "/")."""
        return f"{self.prefix}/" if self.prefix else ""


def parse(url: str) -> StorageUrl:
    """The parts of a cloud ``base_path``; raises ``StatusError`` for Azure or a URL without
    a bucket (OVMS: "No bucket name found in path")."""
    if url.startswith(AZURE_PREFIXES):
        raise azure_refused(url)
    endpoint = None
    if url.startswith("s3://"):
        scheme, rest = S3, url.removeprefix("s3://")
        named = _S3_WITH_ENDPOINT.fullmatch(url)
        if named is not None:
            endpoint = f"http://{named.group(1)}:{named.group(2)}"
            rest = named.group(3)
        missing = StatusCode.S3_BUCKET_NOT_FOUND
    elif url.startswith("gs://"):
        scheme, rest = GCS, url.removeprefix("gs://")
        missing = StatusCode.GCS_BUCKET_NOT_FOUND
    else:
        raise status_error(StatusCode.PATH_INVALID, f"{url}: not an s3:// or gs:// URL")
    bucket, _, prefix = rest.partition("/")
    if not bucket:
        raise status_error(missing, f"No bucket name found in path {url}")
    return StorageUrl(scheme, bucket, prefix.strip("/"), endpoint)


def azure_refused(url: str) -> StatusError:
    """The error for an Azure URL. PATH_INVALID, not one of the AS_* codes: those report what
    an Azure store answered, and no store was asked; the path is one ovmsx cannot read."""
    return status_error(
        StatusCode.PATH_INVALID,
        f"{url}: ovmsx does not read Azure storage (az://, azfs://, azure://); "
        "serve the model from a local folder, s3:// or gs://",
    )
