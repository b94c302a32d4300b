"""Cloud model repositories against real servers of those protocols on loopback: moto's S3
server and gcp-storage-emulator's GCS server, started here (one each for the session, and
one of a test's own where a test stops it). Servers of ovmsx run as subprocesses
(``serving_process``) with the store's variables in their environment and their own TMPDIR,
so a test sees every local copy ovmsx makes and checks none is left behind."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

_TESTS = Path(__file__).resolve().parents[1]
if str(_TESTS / "serving") not in sys.path:
    sys.path.insert(0, str(_TESTS / "serving"))

from cloud_stores import GcsStore, S3Store, start_gcs, start_s3  # noqa: E402

with warnings.catch_warnings():
    # google-api-core asks for grpcio-status, which only its gRPC transports use (the storage
    # client speaks JSON over HTTP); the tests turn warnings into errors.
    warnings.simplefilter("ignore", ImportWarning)
    import google.api_core.exceptions  # noqa: F401

# Variables the stores read; none may leak in from the machine running the tests.
CLOUD_VARIABLES = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_PROFILE",
    "AWS_CONFIG_FILE",
    "AWS_SHARED_CREDENTIALS_FILE",
    "S3_ENDPOINT",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "STORAGE_EMULATOR_HOST",
    "CLOUD_STORAGE_EMULATOR_ENDPOINT",
)


@pytest.fixture(autouse=True)
def _no_cloud_variables(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in CLOUD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    # No ~/.aws of the machine's: a profile named in a test is the only one that exists.
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))


@pytest.fixture(scope="session")
def s3_session() -> Iterator[S3Store]:
    server, store = start_s3()
    yield store
    server.stop()


@pytest.fixture(scope="session")
def gcs_session() -> Iterator[GcsStore]:
    server, store = start_gcs()
    yield store
    server.stop()


@pytest.fixture(params=["s3", "gs"])
def store(request: pytest.FixtureRequest) -> S3Store | GcsStore:
    """Each store in turn (the session's server)."""
    return request.getfixturevalue(f"{request.param.replace('gs', 'gcs')}_session")
