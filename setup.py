"""The wheel's packages, found on disk rather than listed: every package under ragkit/, and data/ as ragkit._data.

pyproject.toml alone cannot say this: its finder names a package after the folder it lies in, and data/ (the one copy
in git) becomes ragkit/_data only through pyproject's package-dir, so its package names are made here from its folders.
"""

from setuptools import find_namespace_packages, setup

setup(
    # namespace packages too: ragkit/teach/locale/ holds only the catalogues (no __init__.py), and setuptools warns
    # at length, in every install, about a folder of package data it does not find as a package
    packages=find_namespace_packages(include=["ragkit", "ragkit.*"], exclude=["*.__pycache__"])
    + ["ragkit._data"]
    + [f"ragkit._data.{name}" for name in find_namespace_packages(where="data")]
)
