"""The Hugging Face hub, through huggingface_hub: a repository's file list, and downloads.

As OVMS, the hub is ``HF_ENDPOINT`` (default ``https://huggingface.co``) and the token is
``HF_TOKEN``, both read when a pull starts; no other token source is used. Every failure
becomes a ``PullError`` whose text says what happened and what to do about it.

Resuming: huggingface_hub continues a file whose transfer breaks off, with a ``Range`` request
from the byte it had reached (a few times within one run); across runs it keeps the files that
were complete (their metadata in ``<folder>/.cache/huggingface``) and fetches the others anew.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx2
from huggingface_hub import HfApi, constants, hf_hub_download, snapshot_download
from huggingface_hub.errors import (
    FileMetadataError,
    GatedRepoError,
    HfHubHTTPError,
    HFValidationError,
    LocalEntryNotFoundError,
    RemoteEntryNotFoundError,
    RepositoryNotFoundError,
)

from ovmsx import __version__
from ovmsx.config.errors import UsageError
from ovmsx.pull.errors import PullError
from ovmsx.pull.progress import TerminalOnlyBar

DEFAULT_ENDPOINT = "https://huggingface.co"
REVISION = "main"
"""OVMS pulls a repository's default branch."""


@dataclass(frozen=True)
class Hub:
    """One hub and the token to show it."""

    endpoint: str = DEFAULT_ENDPOINT
    token: str | None = None

    @classmethod
    def from_environment(cls) -> Hub:
        """``HF_ENDPOINT`` and ``HF_TOKEN`` as they are now."""
        endpoint = os.environ.get("HF_ENDPOINT", "").strip() or DEFAULT_ENDPOINT
        return cls(endpoint.rstrip("/"), os.environ.get("HF_TOKEN") or None)

    def repo_files(self, repo_id: str) -> list[str]:
        """The files of ``repo_id`` at its default branch (the model info's ``siblings``)."""
        with self._failures(repo_id, None):
            info = self._api().model_info(
                repo_id, revision=REVISION, timeout=constants.HF_HUB_ETAG_TIMEOUT
            )
        return [sibling.rfilename for sibling in info.siblings or ()]

    def download_repository(self, repo_id: str, folder: Path) -> None:
        """Every file of ``repo_id`` into ``folder``, keeping the repository's layout."""
        with self._failures(repo_id, folder):
            snapshot_download(repo_id, **self._into(folder))

    def download_files(self, repo_id: str, filenames: Sequence[str], folder: Path) -> None:
        """Some files of ``repo_id`` into ``folder`` (a GGUF model and its parts)."""
        with self._failures(repo_id, folder):
            for filename in filenames:
                hf_hub_download(repo_id, filename, **self._into(folder))

    def _into(self, folder: Path) -> dict:
        """What every download into ``folder`` passes to huggingface_hub."""
        return {
            "revision": REVISION,
            "local_dir": folder,
            "cache_dir": _cache_dir(folder),
            "endpoint": self.endpoint,
            "token": self._token(),
            "library_name": "ovmsx",
            "library_version": __version__,
            "tqdm_class": TerminalOnlyBar,
        }

    def _api(self) -> HfApi:
        return HfApi(
            endpoint=self.endpoint,
            token=self._token(),
            library_name="ovmsx",
            library_version=__version__,
        )

    def _token(self) -> str | bool:
        # False, not None: without HF_TOKEN no token is sent, as in OVMS, rather than one
        # huggingface_hub would find in its own token file.
        return self.token or False

    @contextlib.contextmanager
    def _failures(self, repo_id: str, folder: Path | None) -> Iterator[None]:
        try:
            yield
        except HFValidationError as bad:
            raise UsageError(f"--source_model {repo_id!r}: {bad}") from None
        except GatedRepoError:
            raise PullError(self._gated(repo_id)) from None
        except RepositoryNotFoundError as bad:
            raise PullError(
                f"repository {repo_id} was not found on {self.endpoint} "
                f"(HTTP {_status(bad)}): check --source_model; a private repository also "
                "needs HF_TOKEN set to a token that can read it"
            ) from None
        except RemoteEntryNotFoundError as bad:
            raise PullError(
                f"repository {repo_id} on {self.endpoint} has no file {_url_path(bad)} "
                f"(HTTP {_status(bad)})"
            ) from None
        except HfHubHTTPError as bad:
            raise PullError(self._http_failure(repo_id, bad)) from None
        except FileMetadataError as bad:
            raise PullError(
                f"{self.endpoint} did not answer as a Hugging Face hub does ({bad}); check "
                "HF_ENDPOINT"
            ) from None
        except (httpx2.TransportError, LocalEntryNotFoundError) as bad:
            raise PullError(self._unreachable(bad)) from None
        except OSError as bad:
            if bad.errno is None:  # huggingface_hub's own checks, e.g. a size mismatch
                raise PullError(f"downloading {repo_id} failed: {bad}") from None
            place = bad.filename or folder
            raise PullError(
                f"cannot write {repo_id} to {place}: {bad.strerror or bad}"
                + (" (the disk is full)" if bad.errno == errno.ENOSPC else "")
            ) from None

    def _gated(self, repo_id: str) -> str:
        if self.token:
            return (
                f"repository {repo_id} is gated and the account of HF_TOKEN has not been "
                f"granted access: request it on the repository's page on {self.endpoint}"
            )
        return (
            f"repository {repo_id} is gated: accept its conditions on the repository's page on "
            f"{self.endpoint}, then set HF_TOKEN to an access token of that account"
        )

    def _http_failure(self, repo_id: str, bad: HfHubHTTPError) -> str:
        status = _status(bad)
        if status == 401:
            return f"{self.endpoint} refused the token in HF_TOKEN (HTTP 401) for {repo_id}"
        if status == 403:
            return f"{self.endpoint} forbids access to {repo_id} (HTTP 403): {_server_message(bad)}"
        return f"{self.endpoint} failed to serve {repo_id}: HTTP {status} {_server_message(bad)}"

    def _unreachable(self, bad: BaseException) -> str:
        reason = bad
        while reason.__cause__ is not None:
            reason = reason.__cause__
        return (
            f"cannot reach the Hugging Face hub at {self.endpoint}: {_reason(reason)}. Check the "
            "network connection and proxy settings (HTTPS_PROXY), or set HF_ENDPOINT to a "
            "reachable mirror"
        )


def _cache_dir(folder: Path) -> Path:
    # huggingface_hub's bookkeeping stays inside the model folder (as git's would in OVMS's
    # clone), rather than in the user's cache.
    return folder / ".cache" / "huggingface" / "hub"


def _status(bad: HfHubHTTPError) -> int | str:
    response = getattr(bad, "response", None)
    return response.status_code if response is not None else "?"


def _server_message(bad: HfHubHTTPError) -> str:
    response = getattr(bad, "response", None)
    message = response.headers.get("X-Error-Message") if response is not None else None
    return message or str(bad).strip().splitlines()[0]


def _url_path(bad: HfHubHTTPError) -> str:
    response = getattr(bad, "response", None)
    if response is None:
        return "?"
    path = response.request.url.path
    marker = "/resolve/"
    return path.split(marker, 1)[1].split("/", 1)[-1] if marker in path else path


def _reason(bad: BaseException) -> str:
    text = str(bad).strip()
    if isinstance(bad, httpx2.TimeoutException):
        return f"no answer in time ({text or type(bad).__name__})"
    return text or type(bad).__name__
