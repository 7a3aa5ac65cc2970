"""Package discovery that pyproject.toml alone cannot express: the top-level ``resources/``
folder ships as the package ``gge_resources`` (sample graphs, icons, desktop files), read
through ``importlib.resources``. Everything else is declared in pyproject.toml."""

from setuptools import find_packages, setup

setup(
    packages=find_packages(include=["kernels", "kernels.*", "explorer", "explorer.*"]) + ["gge_resources"],
    package_dir={"gge_resources": "resources"},
)
