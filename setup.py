"""The wheel's packages, found on disk rather than listed: every package under ragkit/, and data/ as ragkit._data.

pyproject.toml alone cannot say this: its finder names a package after the folder it lies in, and data/ (the one copy
in git) becomes ragkit/_data only through pyproject's package-dir, so its package names are made here from its folders.
"""

from setuptools import find_namespace_packages, find_packages, setup

setup(
    packages=find_packages(include=["ragkit", "ragkit.*"])
    + ["ragkit._data"]
    + [f"ragkit._data.{name}" for name in find_namespace_packages(where="data")]
)
