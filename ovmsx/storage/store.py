"""What a model mirror needs from a store: list a prefix, fetch one object."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from ovmsx.storage.objects import StoredObject
from ovmsx.storage.url import S3, StorageUrl

# A store request's connect and read timeouts, and how long google-cloud-storage retries one
# (boto3 makes 3 attempts): a store that stopped answering holds a config poll for seconds,
# not the clients' default minutes; the next poll tries again.
CALL_SECONDS = 10.0


class ObjectStore(Protocol):
    @property
    def usable(self) -> bool:
        """False when the client could not be made (credentials): ``list`` says why."""
        ...

    def list(self, url: StorageUrl) -> list[StoredObject]:
        """Every object under ``url``'s prefix; raises ``StatusError`` with the store's code
        when the bucket, the prefix or the credentials are wrong."""
        ...

    def fetch(self, url: StorageUrl, stored: StoredObject, target: Path) -> None:
        """Write ``stored``'s bytes to ``target``; raises ``StatusError``."""
        ...


def open_store(url: StorageUrl) -> ObjectStore:
    """A client for ``url``'s store, configured from the environment. The client library is
    imported here, the first time a base path names its store."""
    if url.scheme == S3:
        from ovmsx.storage.s3_store import S3Store

        return S3Store(url.endpoint)
    from ovmsx.storage.gcs_store import GcsStore

    return GcsStore()
