"""What is wrong with a cloud base path is reported with OVMS's code and a message naming it,
and every other model still serves."""

from __future__ import annotations

from pathlib import Path

import serving_models as sm
from cloud_serving import cloud_served, config_args
from cloud_stores import SHAPE, GcsStore, S3Store, Store, bucket_name, put_version

NOT_FOUND = "Model with requested version is not found"


def _local_model(tmp_path: Path) -> dict:
    folder = tmp_path / "local"
    sm.save(sm.add_constant(SHAPE, 7.0), folder, 1)
    return {"name": "local", "base_path": str(folder)}


def test_bucket_prefix_and_versions_missing(tmp_path: Path, store: Store) -> None:
    bucket = store.new_bucket()
    put_version(store, bucket, "adder", 1, 1.0)
    store.put(bucket, "unnumbered/latest/model.xml", b"<net/>")
    missing_bucket = bucket_name()
    models = [
        {"name": "good", "base_path": store.url(bucket, "adder")},
        {"name": "no_bucket", "base_path": store.url(missing_bucket, "adder")},
        {"name": "no_prefix", "base_path": store.url(bucket, "absent")},
        {"name": "no_versions", "base_path": store.url(bucket, "unnumbered")},
        {"name": "azure", "base_path": "az://container/adder"},
        _local_model(tmp_path),
    ]
    with cloud_served(tmp_path, config_args(tmp_path, models), store.env()) as server:
        assert server.adds("good") == 1.0
        assert server.adds("local") == 7.0

        no_bucket = server.answer("no_bucket")
        assert NOT_FOUND in no_bucket
        if isinstance(store, S3Store):
            assert (
                "S3 metadata failure - Invalid or missing S3 credentials, or bucket does not "
                f"exist - {missing_bucket}." in no_bucket
            )
        else:
            assert "The provided base path is invalid or doesn't exists" in no_bucket
            assert f"GCS bucket {missing_bucket} does not exist" in no_bucket

        no_prefix = server.answer("no_prefix")
        assert "The provided base path is invalid or doesn't exists" in no_prefix
        assert f"Directory does not exist: {store.url(bucket, 'absent')}" in no_prefix

        no_versions = server.answer("no_versions")
        assert "Not a single model version directory has valid numeric name" in no_versions
        assert store.url(bucket, "unnumbered") in no_versions

        azure = server.answer("azure")
        assert "The provided base path is invalid or doesn't exists" in azure
        assert "az://container/adder: ovmsx does not read Azure storage" in azure
        assert "ignoring folder 'latest', version folders have numeric names" in server.log()
        # Nothing was fetched for the models that failed: one mirror, good's.
        assert [p.name for p in server.tmpdir.iterdir()] == [
            p.name for p in server.tmpdir.glob("ovmsx-good-*")
        ]


def test_s3_profile_that_does_not_exist(tmp_path: Path, s3_session: S3Store) -> None:
    # No keys: OVMS then reads the profile AWS_PROFILE names; this one exists nowhere (the
    # fixtures point AWS_CONFIG_FILE and AWS_SHARED_CREDENTIALS_FILE at missing files).
    bucket = s3_session.new_bucket()
    put_version(s3_session, bucket, "adder", 1, 1.0)
    env = {"S3_ENDPOINT": s3_session.endpoint, "AWS_PROFILE": "absent-profile"}
    models = [{"name": "adder", "base_path": s3_session.url(bucket, "adder")}]
    models.append(_local_model(tmp_path))
    with cloud_served(tmp_path, config_args(tmp_path, models), env) as server:
        assert server.adds("local") == 7.0
        answer = server.answer("adder")
        assert "S3 metadata failure - Invalid or missing S3 credentials" in answer
        assert "The config profile (absent-profile) could not be found" in answer
        assert server.copies() == []

    # With keys the profile is not read (OVMS's order: keys, then a profile).
    keyed = {**s3_session.env(), "AWS_PROFILE": "absent-profile"}
    with cloud_served(tmp_path, config_args(tmp_path, models), keyed) as server:
        assert server.adds("adder") == 1.0


def test_gcs_credentials_file_missing(tmp_path: Path, gcs_session: GcsStore) -> None:
    bucket = gcs_session.new_bucket()
    put_version(gcs_session, bucket, "adder", 1, 1.0)
    missing = tmp_path / "no-such-key.json"
    env = {**gcs_session.env(), "GOOGLE_APPLICATION_CREDENTIALS": str(missing)}
    models = [{"name": "adder", "base_path": gcs_session.url(bucket, "adder")}]
    models.append(_local_model(tmp_path))
    with cloud_served(tmp_path, config_args(tmp_path, models), env) as server:
        assert server.adds("local") == 7.0
        answer = server.answer("adder")
        assert "GCS Invalid access rights" in answer
        assert "Unable to create default GCS credentials" in answer
        assert str(missing) in answer
        assert server.copies() == []
