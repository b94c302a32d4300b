"""The tests' side of each store: a real server on a free loopback port, a client that fills
buckets with model versions, and the environment that points ovmsx at the server.

Models are ``input`` [1,4] FP32 -> ``output`` = input + N, N chosen per version, so an answer
tells which version (and which copy) served it.
"""

from __future__ import annotations

import tempfile
import uuid
from pathlib import Path

import serving_models as sm
from serving_process import free_port

SHAPE = [1, 4]


def model_files(add: float) -> dict[str, bytes]:
    """One version's files by name: ``model.xml`` and ``model.bin`` of input + ``add``."""
    with tempfile.TemporaryDirectory() as folder:
        sm.save(sm.add_constant(SHAPE, add), Path(folder), 1)
        return {p.name: p.read_bytes() for p in (Path(folder) / "1").iterdir()}


def bucket_name() -> str:
    return f"models-{uuid.uuid4().hex[:12]}"


class S3Store:
    scheme = "s3"

    def __init__(self, port: int) -> None:
        import boto3
        from botocore.config import Config

        self.port = port
        self.endpoint = f"http://127.0.0.1:{port}"
        self.client = boto3.session.Session(
            aws_access_key_id="test", aws_secret_access_key="test", region_name="us-east-1"
        ).client("s3", endpoint_url=self.endpoint, config=Config(s3={"addressing_style": "path"}))

    def env(self) -> dict[str, str]:
        """What ovmsx needs to reach this server: keys (moto takes any) and the endpoint,
        written without a scheme as MinIO users often do."""
        return {
            "AWS_ACCESS_KEY_ID": "test",
            "AWS_SECRET_ACCESS_KEY": "test",
            "S3_ENDPOINT": f"127.0.0.1:{self.port}",
        }

    def new_bucket(self) -> str:
        name = bucket_name()
        self.client.create_bucket(Bucket=name)
        return name

    def put(self, bucket: str, key: str, data: bytes, **extra: str) -> None:
        self.client.put_object(Bucket=bucket, Key=key, Body=data, **extra)

    def delete(self, bucket: str, key: str) -> None:
        self.client.delete_object(Bucket=bucket, Key=key)

    def keys(self, bucket: str, prefix: str) -> list[str]:
        listed = self.client.list_objects_v2(Bucket=bucket, Prefix=prefix)
        return [item["Key"] for item in listed.get("Contents", ())]

    def url(self, bucket: str, prefix: str) -> str:
        return f"s3://{bucket}/{prefix}"


class GcsStore:
    scheme = "gs"

    def __init__(self, port: int) -> None:
        from google.auth.credentials import AnonymousCredentials
        from google.cloud import storage

        self.port = port
        self.endpoint = f"http://127.0.0.1:{port}"
        self.client = storage.Client(
            project="test",
            credentials=AnonymousCredentials(),
            client_options={"api_endpoint": self.endpoint},
        )

    def env(self) -> dict[str, str]:
        return {"STORAGE_EMULATOR_HOST": self.endpoint}

    def new_bucket(self) -> str:
        name = bucket_name()
        self.client.create_bucket(name)
        return name

    def put(self, bucket: str, key: str, data: bytes) -> None:
        self.client.bucket(bucket).blob(key).upload_from_string(data)

    def delete(self, bucket: str, key: str) -> None:
        self.client.bucket(bucket).blob(key).delete()

    def keys(self, bucket: str, prefix: str) -> list[str]:
        return [blob.name for blob in self.client.list_blobs(bucket, prefix=prefix)]

    def url(self, bucket: str, prefix: str) -> str:
        return f"gs://{bucket}/{prefix}"


Store = S3Store | GcsStore


def put_version(store: Store, bucket: str, prefix: str, number: int, add: float) -> None:
    """Version ``number`` of the model at ``prefix``: input + ``add``."""
    for name, data in model_files(add).items():
        store.put(bucket, f"{prefix}/{number}/{name}", data)


def delete_version(store: Store, bucket: str, prefix: str, number: int) -> None:
    for key in store.keys(bucket, f"{prefix}/{number}/"):
        store.delete(bucket, key)


def start_s3():
    """moto's S3 server on a port the OS picks: (server, store)."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    return server, S3Store(server.get_host_and_port()[1])


def start_gcs(port: int | None = None):
    """gcp-storage-emulator's GCS server (in memory): (server, store). It cannot report the
    port it bound, so a free one is picked first."""
    from gcp_storage_emulator.server import create_server

    port = port or free_port()
    server = create_server("127.0.0.1", port, in_memory=True)
    server.start()
    return server, GcsStore(port)
