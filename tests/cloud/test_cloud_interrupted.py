"""A fetch that fails, or a store that stops answering, never replaces the version serving."""

from __future__ import annotations

from pathlib import Path

import pytest
from cloud_serving import cloud_served, config_args
from cloud_stores import S3Store, model_files, put_version, start_gcs, start_s3
from serving_process import wait_until


def test_an_object_that_cannot_be_read(tmp_path: Path, s3_session: S3Store) -> None:
    store = s3_session
    bucket = store.new_bucket()
    put_version(store, bucket, "adder", 1, 1.0)
    models = [{"name": "adder", "base_path": store.url(bucket, "adder")}]
    with cloud_served(tmp_path, config_args(tmp_path, models), store.env()) as server:
        assert server.adds("adder") == 1.0
        # Version 2's weights are archived: listed, but S3 refuses to read them until
        # restored (InvalidObjectState), so its fetch fails after the .xml arrived.
        files = model_files(2.0)
        store.put(bucket, "adder/2/model.xml", files["model.xml"])
        store.put(bucket, "adder/2/model.bin", files["model.bin"], StorageClass="GLACIER")
        wait_until(
            lambda: "S3 Failed to get object from path" in server.answer("adder", "2"),
            "version 2 reported as not fetched",
            log=server.log,
        )
        assert "adder/2/model.bin" in server.answer("adder", "2")
        assert server.adds("adder") == 1.0  # version 1 serves on
        assert server.adds("adder", "1") == 1.0
        (root,) = server.tmpdir.iterdir()
        assert [p.name for p in root.iterdir()] == ["1"]  # nothing of the failed fetch

        # Readable again: fetched on the next poll, and it replaces version 1 (latest 1).
        store.put(bucket, "adder/2/model.bin", files["model.bin"])
        wait_until(lambda: server.adds("adder") == 2.0, "version 2 served", log=server.log)
        wait_until(
            lambda: [p.name for p in root.iterdir()] == ["2"],
            "version 1's copy deleted",
            log=server.log,
        )

        # Version 2 changes in the store, and its new weights cannot be read: the copy
        # serving stays, and serves on.
        changed = model_files(20.0)["model.bin"]
        store.put(bucket, "adder/2/model.bin", changed, StorageClass="GLACIER")
        wait_until(
            lambda: "version 2 changed in the store but could not be fetched" in server.log(),
            "the failed fetch reported",
            log=server.log,
        )
        assert server.adds("adder") == 2.0
        assert [p.name for p in root.iterdir()] == ["2"]


@pytest.mark.parametrize("scheme", ["s3", "gs"])
def test_store_stopping_during_polls(tmp_path: Path, scheme: str) -> None:
    server_of_store, store = start_s3() if scheme == "s3" else start_gcs()
    try:
        bucket = store.new_bucket()
        put_version(store, bucket, "adder", 1, 1.0)
        models = [{"name": "adder", "base_path": store.url(bucket, "adder")}]
        with cloud_served(tmp_path, config_args(tmp_path, models), store.env()) as server:
            assert server.adds("adder") == 1.0
            server_of_store.stop()
            failure = "S3 Failed to list objects" if scheme == "s3" else "GCS Failed to list"
            wait_until(lambda: failure in server.log(), "a poll failing", log=server.log)
            assert server.adds("adder") == 1.0
            assert server.copies() != []  # the copy serving stays while the model does
    finally:
        server_of_store.stop()
