"""The peer servers bench_peers.py measures ovmsx against: Triton, KServe and MLServer.

Each peer runs from its own virtual environment (made by ``setup_peers.py``, outside the
repository). ``<peer>_peer.py`` writes that peer's model repository for a list of
``models.PeerModel`` and starts its server on given loopback ports; the files the peer's own
interpreter runs (``triton_model.py``, ``kserve_main.py``, ``mlserver_runtime.py`` and
``peer_compute.py``) import nothing from ovmsx or bench/. Nothing here is part of CI.
"""
