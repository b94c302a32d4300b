"""Google Cloud Storage through google-cloud-storage.

Credentials: the file ``GOOGLE_APPLICATION_CREDENTIALS`` names (read by google-auth); without
it, anonymous requests (public buckets), as OVMS does. An emulator: ``STORAGE_EMULATOR_HOST``
(the Python client's variable) or ``CLOUD_STORAGE_EMULATOR_ENDPOINT`` (the C++ client's, which
OVMS reads), as ``http://host:port``.
"""

from __future__ import annotations

import os
from pathlib import Path

import google.auth
from google.api_core import exceptions as api_errors
from google.api_core.retry import Retry
from google.auth.credentials import AnonymousCredentials
from google.auth.exceptions import GoogleAuthError
from google.cloud import storage
from google.cloud.storage.retry import DEFAULT_RETRY

from ovmsx.status import StatusCode, status_error
from ovmsx.storage.objects import StoredObject
from ovmsx.storage.store import CALL_SECONDS
from ovmsx.storage.url import StorageUrl

# with_timeout replaced with_deadline (now deprecated) in google-api-core 2.x.
_RETRY: Retry = (
    DEFAULT_RETRY.with_timeout(CALL_SECONDS)
    if hasattr(DEFAULT_RETRY, "with_timeout")
    else DEFAULT_RETRY.with_deadline(CALL_SECONDS)
)
_TIMEOUT = (CALL_SECONDS, CALL_SECONDS)  # (connect, read) of each attempt


def _emulator() -> str | None:
    for name in ("STORAGE_EMULATOR_HOST", "CLOUD_STORAGE_EMULATOR_ENDPOINT"):
        given = os.environ.get(name)
        if given:
            return given if "://" in given else f"http://{given}"
    return None


class GcsStore:
    def __init__(self) -> None:
        self._problem: str | None = None
        self._client: storage.Client | None = None
        project = None
        try:
            if os.environ.get("GOOGLE_APPLICATION_CREDENTIALS"):
                credentials, project = google.auth.default()
            else:
                credentials = AnonymousCredentials()
        except (GoogleAuthError, OSError, ValueError) as error:
            self._problem = f"Unable to create default GCS credentials: {error}"
            return
        emulator = _emulator()
        options = {"api_endpoint": emulator} if emulator else None
        # A project is only needed to create buckets; listing and reading take none.
        self._client = storage.Client(
            project=project or "<none>", credentials=credentials, client_options=options
        )

    @property
    def usable(self) -> bool:
        return self._client is not None

    def list(self, url: StorageUrl) -> list[StoredObject]:
        if self._client is None:
            # GCS_INVALID_ACCESS: the credentials file named is missing or unreadable, so no
            # request can be made with the access it was meant to give.
            raise status_error(StatusCode.GCS_INVALID_ACCESS, f"{url.text}: {self._problem}")
        try:
            blobs = self._client.list_blobs(
                url.bucket, prefix=url.key_prefix(), retry=_RETRY, timeout=_TIMEOUT
            )
            return [StoredObject(b.name, str(b.generation), b.size or 0) for b in blobs]
        except api_errors.NotFound:
            # OVMS reports a path it cannot list as a base path that does not exist.
            raise status_error(
                StatusCode.PATH_INVALID, f"{url.text}: GCS bucket {url.bucket} does not exist"
            ) from None
        except (api_errors.Forbidden, api_errors.Unauthorized, GoogleAuthError) as error:
            raise status_error(
                StatusCode.GCS_INVALID_ACCESS,
                f"Invalid or missing GCS credentials, or directory does not exist - "
                f"{url.text}: {error}",
            ) from None
        except Exception as error:  # other API errors, and requests' connection errors
            raise status_error(StatusCode.GCS_FAILED_LIST_OBJECTS, f"{url.text}: {error}") from None

    def fetch(self, url: StorageUrl, stored: StoredObject, target: Path) -> None:
        assert self._client is not None  # list succeeded first
        where = f"gs://{url.bucket}/{stored.key}"
        blob = self._client.bucket(url.bucket).blob(stored.key)
        try:
            # The listed generation: a copy holds what its signature says, or fails.
            blob.download_to_filename(
                str(target),
                if_generation_match=int(stored.tag),
                retry=_RETRY,
                timeout=_TIMEOUT,
            )
        except (api_errors.NotFound, api_errors.PreconditionFailed):
            raise status_error(StatusCode.GCS_FILE_NOT_FOUND, f"{where} does not exist") from None
        except Exception as error:  # HTTP, connection and file errors alike
            raise status_error(StatusCode.GCS_FAILED_GET_OBJECT, f"{where}: {error}") from None
