"""Cloud model repositories: ``s3://`` and ``gs://`` base paths served from local copies.

- ``url``: what a cloud base path names (store, endpoint, bucket, prefix); Azure refused.
- ``objects``: a listed object, which files a version copy takes, versions by key prefix.
- ``s3_store`` / ``gcs_store``: list and fetch objects with boto3 / google-cloud-storage,
  imported only when a base path names their store.
- ``mirror``: one model's local copies of its versions, staged and renamed into place.
- ``mirrors``: every model's mirror, what a scan fetches, and when copies are deleted.
"""

from ovmsx.storage.mirrors import CloudMirrors, CloudScan

__all__ = ["CloudMirrors", "CloudScan"]
