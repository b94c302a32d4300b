"""Versions served from a bucket, the poll seeing versions come and go, and the local copies'
lifetime: each against moto's S3 server and the GCS emulator."""

from __future__ import annotations

import stat
from pathlib import Path

import serving_models as sm
from cloud_serving import cloud_served, config_args
from cloud_stores import SHAPE, S3Store, Store, delete_version, put_version
from serving_process import wait_until, write_config


def _mirror_roots(copies: list[Path]) -> list[Path]:
    return [p for p in copies if len(p.parts) == 1]


def test_versions_are_served_from_local_copies(tmp_path: Path, store: Store) -> None:
    bucket = store.new_bucket()
    put_version(store, bucket, "repo/adder", 1, 1.0)
    put_version(store, bucket, "repo/adder", 2, 2.0)
    # Not a model file: stays in the store (OVMS copies only model files).
    store.put(bucket, "repo/adder/2/README.txt", b"notes")
    model = {
        "name": "adder",
        "base_path": store.url(bucket, "repo/adder"),
        "model_version_policy": {"all": {}},
    }
    with cloud_served(tmp_path, config_args(tmp_path, [model]), store.env()) as server:
        assert server.adds("adder", "1") == 1.0
        assert server.adds("adder", "2") == 2.0
        assert server.adds("adder") == 2.0  # the default: the highest version
        roots = _mirror_roots(server.copies())
        assert len(roots) == 1, server.copies()
        root = server.tmpdir / roots[0]
        assert stat.S_IMODE(root.stat().st_mode) == 0o700  # private to the server's user
        assert sorted(p.name for p in (root / "1").iterdir()) == ["model.bin", "model.xml"]
        assert sorted(p.name for p in (root / "2").iterdir()) == ["model.bin", "model.xml"]
        assert sorted(p.name for p in root.iterdir()) == ["1", "2"]  # no staging folder left


def test_poll_sees_versions_added_and_removed(tmp_path: Path, store: Store) -> None:
    bucket = store.new_bucket()
    put_version(store, bucket, "adder", 1, 1.0)
    model = {
        "name": "adder",
        "base_path": store.url(bucket, "adder"),
        "model_version_policy": {"all": {}},
    }
    with cloud_served(tmp_path, config_args(tmp_path, [model]), store.env()) as server:
        assert server.adds("adder") == 1.0
        put_version(store, bucket, "adder", 2, 2.0)
        wait_until(lambda: server.adds("adder", "2") == 2.0, "version 2 served", log=server.log)
        assert server.adds("adder") == 2.0
        assert server.adds("adder", "1") == 1.0

        delete_version(store, bucket, "adder", 1)
        wait_until(lambda: server.adds("adder", "1") is None, "version 1 retired", log=server.log)
        assert "retired" in server.answer("adder", "1")
        assert server.adds("adder") == 2.0
        # The retired version's copy went with it; version 2's stays.
        root = _mirror_roots(server.copies())[0]
        wait_until(
            lambda: sorted(p.name for p in (server.tmpdir / root).iterdir()) == ["2"],
            "only version 2's copy left",
            log=server.log,
        )


def test_copies_go_when_the_model_leaves_the_config(tmp_path: Path, s3_session: S3Store) -> None:
    # The copies' lifetime does not depend on the store: one store is enough here.
    store = s3_session
    bucket = store.new_bucket()
    put_version(store, bucket, "adder", 1, 1.0)
    put_version(store, bucket, "adder", 2, 2.0)
    local = tmp_path / "local"
    model = {"name": "adder", "base_path": store.url(bucket, "adder")}
    config = tmp_path / "config.json"
    args = config_args(tmp_path, [model])
    with cloud_served(tmp_path, args, store.env()) as server:
        assert server.adds("adder") == 2.0
        # Latest-1 policy: only version 2 was fetched.
        root = _mirror_roots(server.copies())[0]
        assert sorted(p.name for p in (server.tmpdir / root).iterdir()) == ["2"]

        # The same name from a local folder: the cloud copies are deleted once it serves.
        sm.save(sm.add_constant(SHAPE, 5.0), local, 1)
        write_config(config, [{"name": "adder", "base_path": str(local)}])
        wait_until(lambda: server.adds("adder") == 5.0, "the local model served", log=server.log)
        wait_until(lambda: server.copies() == [], "no copies left", log=server.log)

        # Back on the bucket, then out of the config: copies made again, then deleted.
        write_config(config, [model])
        wait_until(lambda: server.adds("adder") == 2.0, "the cloud model again", log=server.log)
        assert server.copies() != []
        write_config(config, [])
        wait_until(lambda: server.adds("adder") is None, "the model retired", log=server.log)
        wait_until(lambda: server.copies() == [], "no copies left", log=server.log)


def test_a_version_that_failed_loads_once_its_objects_change(tmp_path: Path, store: Store) -> None:
    bucket = store.new_bucket()
    store.put(bucket, "adder/1/model.xml", b"<not a model/>")
    store.put(bucket, "adder/1/model.bin", b"")
    model = {"name": "adder", "base_path": store.url(bucket, "adder")}
    with cloud_served(tmp_path, config_args(tmp_path, [model]), store.env()) as server:
        assert "model adder version 1: LOADING" in server.answer("adder", "1")
        put_version(store, bucket, "adder", 1, 1.0)  # new ETags / generations
        wait_until(lambda: server.adds("adder") == 1.0, "the fixed version", log=server.log)
        # The broken copy was replaced by the new one, then deleted.
        (root,) = server.tmpdir.iterdir()
        wait_until(lambda: len(list(root.iterdir())) == 1, "one copy left", log=server.log)
