"""``--model_name``/``--model_path`` with a cloud URL (single-model mode)."""

from __future__ import annotations

from pathlib import Path

from cloud_serving import cloud_served
from cloud_stores import GcsStore, S3Store, put_version


def test_s3_path_naming_its_endpoint_anonymously(tmp_path: Path, s3_session: S3Store) -> None:
    # No keys, no S3_ENDPOINT: anonymous requests to the endpoint the path names, which read
    # a public bucket's objects.
    bucket = s3_session.new_bucket()
    put_version(s3_session, bucket, "adder", 3, 3.0)
    s3_session.client.put_bucket_acl(Bucket=bucket, ACL="public-read")
    for key in s3_session.keys(bucket, "adder/"):
        s3_session.client.put_object_acl(Bucket=bucket, Key=key, ACL="public-read")
    path = f"s3://127.0.0.1:{s3_session.port}/{bucket}/adder"
    args = ["--model_name", "adder", "--model_path", path]
    with cloud_served(tmp_path, args, {}) as server:
        assert server.adds("adder") == 3.0
        assert server.adds("adder", "3") == 3.0


def test_gcs_with_the_cpp_clients_emulator_variable(tmp_path: Path, gcs_session: GcsStore) -> None:
    bucket = gcs_session.new_bucket()
    put_version(gcs_session, bucket, "adder", 1, 1.0)
    args = ["--model_name", "adder", "--model_path", gcs_session.url(bucket, "adder")]
    env = {"CLOUD_STORAGE_EMULATOR_ENDPOINT": gcs_session.endpoint}
    with cloud_served(tmp_path, args, env) as server:
        assert server.adds("adder") == 1.0
