"""Package discovery that pyproject.toml alone cannot express: the top-level ``resources/``
folder ships as the package ``gge_resources`` (sample graphs, icons, desktop files), read
through ``importlib.resources``. Everything else is declared in pyproject.toml.

Each data folder is listed as a package of its own (``gge_resources.graphs``...): Python sees
a folder inside a package as an importable namespace package, and setuptools warns ("Package
would be ignored") about such folders when they are not declared - and will stop shipping
their files in a later version. Their files are package data (pyproject.toml)."""

from setuptools import find_packages, setup

RESOURCE_FOLDERS = ("graphs", "icons", "desktop")

setup(
    packages=find_packages(include=["kernels", "kernels.*", "explorer", "explorer.*"])
    + ["gge_resources"] + [f"gge_resources.{folder}" for folder in RESOURCE_FOLDERS],
    package_dir={"gge_resources": "resources"},
)
