"""Which folders make up the `fallback_doctor` package, found rather than listed.

The package is assembled from top-level folders: `launcher/` is `fallback_doctor` itself,
`core/`, `cli/`, `gui/` and `resources/` are its sub-packages. Every folder below them that
holds an `__init__.py` is a package of the wheel, so a new folder can never import in an
editable install and be missing from the wheel. The folders of `resources/` hold data only
(no `__init__.py`): they are listed as namespace packages so that setuptools ships them as the
package data they are instead of warning, once a folder, that they "would be ignored".
Everything else is in pyproject.toml.
tests/test_packaging.py builds the wheel and compares its contents with the folders.
"""

from setuptools import find_namespace_packages, find_packages, setup

# fallback_doctor.<name> lives in the folder on the right; sub-packages follow the folders.
PACKAGE_DIR = {
    "fallback_doctor": "launcher",
    "fallback_doctor.core": "core",
    "fallback_doctor.cli": "cli",
    "fallback_doctor.gui": "gui",
    "fallback_doctor.resources": "resources",
}


def _packages() -> list[str]:
    found = ["fallback_doctor"]
    for name, folder in PACKAGE_DIR.items():
        if name == "fallback_doctor":
            continue
        found.append(name)
        finder = find_namespace_packages if folder == "resources" else find_packages
        found.extend(f"{name}.{sub}" for sub in finder(folder, exclude=["*__pycache__*"]))
    return found


setup(packages=_packages(), package_dir=PACKAGE_DIR)
