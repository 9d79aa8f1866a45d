"""Harnesses beside the package: ``hub``, a real JupyterHub on 127.0.0.1 (test_hub.py, the classroom bench)."""
