"""The desktop install: the .deb (and the .rpm) of the frozen build, checked with the distributions' tools.

dpkg-deb --info / --contents, the desktop entry and the AppStream metadata validated as installed,
the package unpacked into a scratch root (dpkg -x) and its command run from there; as root, a real
``dpkg -i`` then ``dpkg -r`` that must leave nothing behind (GFD_PACKAGING_INSTALL=0 skips it).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "packaging"))

from desktop.make_icons import APP_ID, SIZES  # noqa: E402

pytestmark = [pytest.mark.packaging, pytest.mark.slow, pytest.mark.timeout(1800)]

NAME = "fallback-doctor"
PACKAGE = "gpu-fallback-doctor"


def sh(*cmd: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(list(cmd), capture_output=True, text=True, timeout=600, check=False)
    if check and proc.returncode != 0:
        raise AssertionError(
            f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
        )
    return proc


def _packaging_key() -> str:
    """A hash of what the packages add to the frozen folder (the builder, the desktop files)."""
    digest = hashlib.sha256()
    for path in [
        ROOT / "packaging" / "linux_packages.py",
        *sorted((ROOT / "packaging" / "desktop").iterdir()),
    ]:
        if path.is_file():
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


@pytest.fixture(scope="session")
def packages(frozen_exe: Path) -> dict[str, Path]:
    """The .deb (and .rpm where rpmbuild is installed) of the cached build, built beside it once."""
    out = frozen_exe.parent.parent / f"packages-{_packaging_key()}"
    out.mkdir(exist_ok=True)
    with open(out / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (out / ".done").is_file():
            builder = str(ROOT / "packaging" / "linux_packages.py")
            sh("nice", "-n", "10", sys.executable, builder, str(frozen_exe.parent), "--out", str(out))
            (out / ".done").write_text("")
    found = {"deb": next(out.glob("*.deb"))}
    rpms = list(out.glob("*.rpm"))
    if rpms:
        found["rpm"] = rpms[0]
    return found


def test_deb_info(packages: dict[str, Path]) -> None:
    info = sh("dpkg-deb", "--info", str(packages["deb"])).stdout
    fields = dict(re.findall(r"^ (\w[\w-]*): (.*)$", info, re.MULTILINE))
    assert fields["Package"] == PACKAGE
    assert fields["Architecture"] == "amd64"
    assert re.fullmatch(r"libc6 \(>= 2\.\d+\), libstdc\+\+6 \(>= \d+\)", fields["Depends"]), fields["Depends"]
    assert "libxcb-cursor0" in fields["Recommends"]
    assert int(fields["Installed-Size"]) > 50_000  # KiB: the whole frozen folder


def test_deb_contents(packages: dict[str, Path]) -> None:
    listing = sh("dpkg-deb", "--contents", str(packages["deb"])).stdout
    paths = {line.split()[5].lstrip(".") for line in listing.splitlines()}
    assert f"/opt/{NAME}/{NAME}" in paths
    assert f"/usr/share/applications/{APP_ID}.desktop" in paths
    assert f"/usr/share/metainfo/{APP_ID}.metainfo.xml" in paths
    for size in SIZES:
        assert f"/usr/share/icons/hicolor/{size}x{size}/apps/{APP_ID}.png" in paths
    assert f"/usr/share/icons/hicolor/scalable/apps/{APP_ID}.svg" in paths
    assert f"-> /opt/{NAME}/{NAME}" in next(
        line for line in listing.splitlines() if f"./usr/bin/{NAME}" in line
    )
    stray = [
        p
        for p in paths
        if p not in ("/", "/opt/", "/usr/") and not p.startswith(("/opt/", "/usr/bin/", "/usr/share/"))
    ]
    assert not stray, stray
    assert not [p for p in paths if re.search(r"/lib(cudart|cublas|cudnn|nvinfer|onnxruntime|cuda)\b", p)]


def test_deb_unpacked_validates_and_runs(packages: dict[str, Path], tmp_path: Path) -> None:
    root = tmp_path / "root"
    sh("dpkg-deb", "-x", str(packages["deb"]), str(root))
    sh("desktop-file-validate", str(root / "usr/share/applications" / f"{APP_ID}.desktop"))
    sh("appstreamcli", "validate", "--no-net", str(root / "usr/share/metainfo" / f"{APP_ID}.metainfo.xml"))
    version = sh("env", "-i", str(root / "opt" / NAME / NAME), "--version")
    assert version.stdout.startswith(f"{NAME} ")


@pytest.mark.skipif(os.geteuid() != 0 or os.environ.get("GFD_PACKAGING_INSTALL") == "0", reason="needs root")
def test_deb_installs_runs_and_uninstalls_cleanly(packages: dict[str, Path], tmp_path: Path) -> None:
    if sh("dpkg-query", "-W", PACKAGE, check=False).returncode == 0:
        pytest.skip(f"{PACKAGE} is installed on this machine already: not touching it")
    sh("dpkg", "-i", str(packages["deb"]))
    try:
        listed = sh("dpkg", "-L", PACKAGE).stdout.split()
        assert f"/usr/bin/{NAME}" in listed
        proc = subprocess.run(
            ["env", "-i", "PATH=/usr/bin:/bin", NAME, "diagnose", "--quick", "--json"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert proc.returncode in (0, 1), proc.stderr[-2000:]
        assert '"verdict"' in proc.stdout
    finally:
        sh("dpkg", "-r", PACKAGE)
    assert not Path(f"/opt/{NAME}").exists()
    assert not Path(f"/usr/bin/{NAME}").exists()
    assert not [
        p
        for p in listed
        if p.startswith(("/opt/", "/usr/share/applications/", "/usr/share/metainfo/"))
        and Path(p).exists()
        and not Path(p).is_dir()
    ]
    assert shutil.which(NAME) in (None, str(Path(sys.executable).parent / NAME))


def test_rpm_metadata(packages: dict[str, Path]) -> None:
    if "rpm" not in packages:
        pytest.skip("rpmbuild is not installed: no .rpm was built")
    requires = sh("rpm", "-qp", "--requires", str(packages["rpm"])).stdout
    assert re.search(r"^glibc >= 2\.\d+$", requires, re.MULTILINE), requires
    assert re.search(r"^libstdc\+\+ >= \d+$", requires, re.MULTILINE), requires
    files = sh("rpm", "-qpl", str(packages["rpm"])).stdout.splitlines()
    assert f"/usr/bin/{NAME}" in files and f"/opt/{NAME}/{NAME}" in files
    assert f"/usr/share/applications/{APP_ID}.desktop" in files


def test_the_cxx_library_floor_is_the_gcc_that_first_shipped_the_symbols() -> None:
    from linux_packages import libstdcxx_floor

    assert libstdcxx_floor(()) is None
    assert libstdcxx_floor((3, 4, 29)) == 11  # re2's and numpy's need in the current build
    assert libstdcxx_floor((3, 4, 27)) == 9  # between two known versions: the older one's GCC
    assert libstdcxx_floor((3, 4, 33)) == 14
    assert libstdcxx_floor((3, 4, 21)) is None
