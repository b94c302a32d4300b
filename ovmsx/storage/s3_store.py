"""S3 and S3-compatible stores (MinIO, moto…) through boto3, configured as OVMS configures its
client.

Credentials, in OVMS's order: ``AWS_ACCESS_KEY_ID`` with ``AWS_SECRET_ACCESS_KEY`` (plus
``AWS_SESSION_TOKEN`` and ``AWS_REGION`` when set); else the profile ``AWS_PROFILE`` names;
else anonymous requests (public buckets). The endpoint: ``S3_ENDPOINT`` (``host:port`` or a
URL; without a scheme, HTTP), else the one an ``s3://host:port/...`` path names, else AWS.
"""

from __future__ import annotations

import os
from pathlib import Path

import boto3
import botocore.session
from botocore import UNSIGNED
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from ovmsx.status import StatusCode, StatusError, status_error
from ovmsx.storage.objects import StoredObject
from ovmsx.storage.store import CALL_SECONDS
from ovmsx.storage.url import StorageUrl

# Answers that mean "these credentials cannot see this bucket, or it does not exist": OVMS
# reports both as one failure, since S3 itself often cannot tell them apart (403 vs 404).
_NO_BUCKET_OR_ACCESS = {
    "NoSuchBucket",
    "AccessDenied",
    "InvalidAccessKeyId",
    "SignatureDoesNotMatch",
    "ExpiredToken",
    "InvalidToken",
    "AllAccessDisabled",
}


_CHUNK = 1 << 20


def _endpoint(named: str | None) -> str | None:
    given = os.environ.get("S3_ENDPOINT") or None
    if given is None:
        return named
    return given if "://" in given else f"http://{given}"


def _ignoring_profile() -> botocore.session.Session:
    """A botocore session that never reads AWS_PROFILE: keys win over a profile (OVMS's
    order), and boto3 would otherwise fail on a profile named but absent, keys or not."""
    return botocore.session.Session(session_vars={"profile": (None, None, None, None)})


class S3Store:
    def __init__(self, named_endpoint: str | None) -> None:
        env = os.environ
        endpoint = _endpoint(named_endpoint)
        settings: dict = {
            "connect_timeout": CALL_SECONDS,
            "read_timeout": CALL_SECONDS,
            "retries": {"mode": "standard", "max_attempts": 3},
        }
        if endpoint is not None:
            # S3-compatible stores serve buckets as paths; host-style names need DNS for
            # every bucket, which a MinIO on host:port does not have.
            settings["s3"] = {"addressing_style": "path"}
        self._problem: str | None = None
        key, secret = env.get("AWS_ACCESS_KEY_ID"), env.get("AWS_SECRET_ACCESS_KEY")
        try:
            if key and secret:
                session = boto3.session.Session(
                    botocore_session=_ignoring_profile(),
                    aws_access_key_id=key,
                    aws_secret_access_key=secret,
                    aws_session_token=env.get("AWS_SESSION_TOKEN") or None,
                    region_name=env.get("AWS_REGION") or None,
                )
            elif env.get("AWS_PROFILE"):
                session = boto3.session.Session(profile_name=env["AWS_PROFILE"])
            else:
                session = boto3.session.Session(region_name=env.get("AWS_REGION") or None)
                settings["signature_version"] = UNSIGNED
            self._client = session.client("s3", endpoint_url=endpoint, config=Config(**settings))
        except BotoCoreError as error:  # a profile that does not exist, a bad region…
            self._client = None
            self._problem = str(error)

    def _metadata_failure(self, url: StorageUrl, reason: str) -> StatusError:
        return status_error(
            StatusCode.S3_METADATA_FAIL,
            f"Invalid or missing S3 credentials, or bucket does not exist - {url.bucket}. {reason}",
        )

    @property
    def usable(self) -> bool:
        return self._client is not None

    def list(self, url: StorageUrl) -> list[StoredObject]:
        if self._client is None:
            raise self._metadata_failure(url, self._problem or "")
        found: list[StoredObject] = []
        try:
            pages = self._client.get_paginator("list_objects_v2")
            for page in pages.paginate(Bucket=url.bucket, Prefix=url.key_prefix()):
                for item in page.get("Contents", ()):
                    found.append(StoredObject(item["Key"], item["ETag"], item["Size"]))
        except ClientError as error:
            code = error.response.get("Error", {}).get("Code", "")
            if code in _NO_BUCKET_OR_ACCESS:
                raise self._metadata_failure(url, str(error)) from None
            raise status_error(StatusCode.S3_FAILED_LIST_OBJECTS, f"{url.text}: {error}") from None
        except BotoCoreError as error:  # no connection, no credentials found…
            raise status_error(StatusCode.S3_FAILED_LIST_OBJECTS, f"{url.text}: {error}") from None
        return found

    def fetch(self, url: StorageUrl, stored: StoredObject, target: Path) -> None:
        assert self._client is not None  # list succeeded first
        where = f"s3://{url.bucket}/{stored.key}"
        try:
            # IfMatch: the bytes of the listed object, or an error (the next poll lists again),
            # so that a copy always holds what its signature says.
            answer = self._client.get_object(Bucket=url.bucket, Key=stored.key, IfMatch=stored.tag)
            body = answer["Body"]
            try:
                with target.open("wb") as out:
                    for chunk in body.iter_chunks(_CHUNK):
                        out.write(chunk)
            finally:
                body.close()
        except ClientError as error:
            code = error.response.get("Error", {}).get("Code", "")
            if code in ("NoSuchKey", "404", "PreconditionFailed", "412"):
                raise status_error(
                    StatusCode.S3_FILE_NOT_FOUND, f"File/folder does not exist at {where}"
                ) from None
            raise status_error(StatusCode.S3_FAILED_GET_OBJECT, f"{where}: {error}") from None
        except (BotoCoreError, OSError) as error:
            raise status_error(StatusCode.S3_FAILED_GET_OBJECT, f"{where}: {error}") from None
