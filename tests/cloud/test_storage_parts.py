"""The pure parts of ovmsx/storage: what a cloud URL names, and how listed keys become
versions and the files a copy takes."""

from __future__ import annotations

import pytest

from ovmsx.status import StatusCode, StatusError
from ovmsx.storage.objects import StoredObject, group_versions
from ovmsx.storage.url import GCS, S3, StorageUrl, parse


@pytest.mark.parametrize(
    ("url", "parsed"),
    [
        ("s3://bucket/models/resnet", StorageUrl(S3, "bucket", "models/resnet")),
        ("s3://bucket/models/resnet/", StorageUrl(S3, "bucket", "models/resnet")),
        ("s3://bucket", StorageUrl(S3, "bucket", "")),
        (
            "s3://minio.local:9000/bucket/resnet",
            StorageUrl(S3, "bucket", "resnet", "http://minio.local:9000"),
        ),
        ("gs://bucket/a/b", StorageUrl(GCS, "bucket", "a/b")),
    ],
)
def test_urls(url: str, parsed: StorageUrl) -> None:
    assert parse(url) == parsed


@pytest.mark.parametrize(
    ("url", "code"),
    [("s3:///resnet", StatusCode.S3_BUCKET_NOT_FOUND), ("gs://", StatusCode.GCS_BUCKET_NOT_FOUND)],
)
def test_a_url_without_a_bucket(url: str, code: StatusCode) -> None:
    with pytest.raises(StatusError) as refused:
        parse(url)
    assert refused.value.code is code
    assert f"No bucket name found in path {url}" in refused.value.message


@pytest.mark.parametrize("url", ["az://container/m", "azfs://share/m", "azure://container/m"])
def test_azure_is_refused(url: str) -> None:
    with pytest.raises(StatusError) as refused:
        parse(url)
    assert refused.value.code is StatusCode.PATH_INVALID
    assert "ovmsx does not read Azure storage" in refused.value.message


def _listed(*keys: str, tag: str = "t") -> list[StoredObject]:
    return [StoredObject(key, tag, 1) for key in keys]


def test_versions_from_keys() -> None:
    listed = _listed(
        "m/1/model.xml",
        "m/1/model.bin",
        "m/1/notes.txt",  # not a model file
        "m/2/sub/model.onnx",  # nested, kept with its folder
        "m/3/saved_model.pb",
        "m/3/variables/variables.index",  # a SavedModel's weights, read with its .pb
        "m/0/model.onnx",  # 0 is not a version
        "m/latest/model.onnx",  # nor is a name
        "m/readme.md",  # a file beside the versions
        "m/1/../../outside.bin",  # keys are any strings: none may climb out of its folder
        "m/1//model.onnx",
        "m/1/sub/",  # a folder placeholder
    )
    versions, others = group_versions(listed, "m/")
    assert sorted(versions) == [1, 2, 3]
    assert [path for path, _ in versions[1].files] == ["model.bin", "model.xml"]
    assert [path for path, _ in versions[2].files] == ["sub/model.onnx"]
    assert [path for path, _ in versions[3].files] == [
        "saved_model.pb",
        "variables/variables.index",
    ]
    assert others == ["0", "latest"]


def test_a_signature_changes_with_any_object() -> None:
    before, _ = group_versions(_listed("m/1/model.xml", "m/1/model.bin"), "m/")
    same, _ = group_versions(_listed("m/1/model.bin", "m/1/model.xml"), "m/")
    changed, _ = group_versions(
        [*_listed("m/1/model.xml"), *_listed("m/1/model.bin", tag="new")], "m/"
    )
    assert before[1].signature == same[1].signature
    assert before[1].signature != changed[1].signature
