"""Harnesses beside the package: ``hub``, a real JupyterHub on 127.0.0.1 (tests/test_hub.py, the classroom bench)."""
