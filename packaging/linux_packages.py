"""The desktop install: a .deb (dpkg-deb) and, where rpmbuild is installed, an .rpm of the frozen folder.

    python packaging/linux_packages.py [FROZEN_FOLDER] [--out dist]

Layout (the same in both)::

    /opt/fallback-doctor/                    the frozen folder (fallback-doctor + _internal/)
    /usr/bin/fallback-doctor                 -> /opt/fallback-doctor/fallback-doctor
    /usr/share/applications/<id>.desktop     the wizard in the desktop's menu
    /usr/share/metainfo/<id>.metainfo.xml    AppStream metadata (software centres)
    /usr/share/icons/hicolor/*/apps/<id>.*   the icon, 16 to 512 px and scalable

No maintainer scripts: dpkg's and rpm's file triggers refresh the icon and desktop caches, and
removing the package removes every file it installed. Depends on the C library and, where a file
of the build needs GLIBCXX symbols (re2 and numpy's extensions do), on the C++ library of the GCC
release that first shipped them; the wizard's system libraries are Recommends.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from build import NAME, ROOT, version
from desktop.make_icons import APP_ID, render
from elfinfo import dotted, folder_needs

PACKAGE = "gpu-fallback-doctor"
DESKTOP = Path(__file__).resolve().parent / "desktop"
SUMMARY = "Find out why ONNX Runtime runs on the CPU when it was asked for the GPU"
# The wizard's system libraries (not in the frozen folder): Debian package names.
GUI_RECOMMENDS = (
    "libstdc++6",
    "libfontconfig1",
    "libfreetype6",
    "libexpat1",
    "libegl1",
    "libgl1",
    "libxkbcommon0",
    "libxkbcommon-x11-0",
    "libxcb-cursor0",
    "libxcb-icccm4",
    "libxcb-keysyms1",
    "libxcb-shape0",
    "libdbus-1-3",
    "fonts-noto-cjk",
)


def tree(frozen: Path, root: Path) -> None:
    """Lay the installed files out under ``root``."""
    opt = root / "opt" / NAME
    shutil.copytree(frozen, opt, symlinks=True)
    (root / "usr" / "bin").mkdir(parents=True)
    (root / "usr" / "bin" / NAME).symlink_to(f"/opt/{NAME}/{NAME}")
    apps = root / "usr" / "share" / "applications"
    apps.mkdir(parents=True)
    shutil.copyfile(DESKTOP / f"{APP_ID}.desktop", apps / f"{APP_ID}.desktop")
    meta = root / "usr" / "share" / "metainfo"
    meta.mkdir(parents=True)
    shutil.copyfile(DESKTOP / f"{APP_ID}.metainfo.xml", meta / f"{APP_ID}.metainfo.xml")
    with tempfile.TemporaryDirectory() as icons:
        render(Path(icons))
        shutil.copytree(Path(icons) / "hicolor", root / "usr" / "share" / "icons" / "hicolor")
    for path in root.rglob("*"):
        if not path.is_symlink():
            path.chmod(0o755 if path.is_dir() or os.access(path, os.X_OK) else 0o644)


def installed_size_kib(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file() and not p.is_symlink()) // 1024 + 1


#: The GCC release that first shipped each GLIBCXX symbol version (the libstdc++ manual, "ABI
#: Policy and Guidelines", gcc.gnu.org/onlinedocs/libstdc++/manual/abi.html): the floor of the
#: libstdc++6 (Debian) or libstdc++ (RPM) package a build needing that version depends on.
GLIBCXX_GCC: dict[tuple[int, ...], int] = {
    (3, 4, 25): 8,
    (3, 4, 26): 9,
    (3, 4, 28): 10,
    (3, 4, 29): 11,
    (3, 4, 30): 12,
    (3, 4, 31): 13,
    (3, 4, 32): 13,
    (3, 4, 33): 14,
}


def libstdcxx_floor(glibcxx: tuple[int, ...]) -> int | None:
    """The GCC major whose libstdc++ provides ``glibcxx`` (None: no GLIBCXX needed, or older than 8)."""
    if not glibcxx:
        return None
    known = [gcc for version, gcc in GLIBCXX_GCC.items() if version <= glibcxx]
    return max(known) if known else None


def deb(frozen: Path, out: Path) -> Path:
    """Build ``gpu-fallback-doctor_<version>_amd64.deb`` with dpkg-deb."""
    needs = folder_needs(frozen)
    glibc = dotted(needs.glibc)
    gcc = libstdcxx_floor(needs.glibcxx)
    depends = f"libc6 (>= {glibc})" + (f", libstdc++6 (>= {gcc})" if gcc else "")
    with tempfile.TemporaryDirectory(prefix="gfd-deb-") as scratch:
        root = Path(scratch) / "root"
        tree(frozen, root)
        control = root / "DEBIAN"
        control.mkdir()
        (control / "control").write_text(
            f"Package: {PACKAGE}\n"
            f"Version: {version()}\n"
            "Section: utils\n"
            "Priority: optional\n"
            "Architecture: amd64\n"
            "Maintainer: GPU Fallback Doctor maintainers <gpu-fallback-doctor@users.noreply.github.com>\n"
            f"Installed-Size: {installed_size_kib(root)}\n"
            f"Depends: {depends}\n"
            f"Recommends: {', '.join(GUI_RECOMMENDS)}\n"
            "Homepage: https://github.com/gpu-fallback-doctor/gpu-fallback-doctor\n"
            f"Description: {SUMMARY}\n"
            " A troubleshooting wizard and a headless command (fallback-doctor diagnose) for GPU\n"
            " inference servers where ONNX Runtime quietly fell back to the CPU: it checks the\n"
            " configuration, the log and the stack from the driver up, runs a CPU baseline and a\n"
            " GPU retry, and names the cause with the exact fix. Self-contained (frozen build).\n",
            encoding="utf-8",
        )
        target = out / f"{PACKAGE}_{version()}_amd64.deb"
        subprocess.run(
            # gzip: every dpkg reads it, and it takes seconds where xz takes minutes on two cores.
            ["dpkg-deb", "--root-owner-group", "-Zgzip", "-z6", "--build", str(root), str(target)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    return target


def rpm(frozen: Path, out: Path) -> Path | None:
    """Build ``gpu-fallback-doctor-<version>-1.x86_64.rpm`` with rpmbuild (None without it)."""
    rpmbuild = shutil.which("rpmbuild")
    if rpmbuild is None:
        return None
    needs = folder_needs(frozen)
    glibc = dotted(needs.glibc)
    gcc = libstdcxx_floor(needs.glibcxx)
    requires = f"Requires: glibc >= {glibc}\n" + (f"Requires: libstdc++ >= {gcc}\n" if gcc else "")
    with tempfile.TemporaryDirectory(prefix="gfd-rpm-") as scratch:
        top = Path(scratch)
        root = top / "root"
        tree(frozen, root)
        files = []
        for path in sorted(root.rglob("*")):
            rel = '"/' + str(path.relative_to(root)).replace("%", "%%") + '"'  # names with spaces
            if path.is_dir() and not path.is_symlink():
                if rel.startswith(f'"/opt/{NAME}'):
                    files.append(f"%dir {rel}")
            else:
                files.append(rel)
        spec = top / f"{PACKAGE}.spec"
        spec.write_text(
            f"Name: {PACKAGE}\nVersion: {version()}\nRelease: 1\nSummary: {SUMMARY}\n"
            "License: Apache-2.0\nBuildArch: x86_64\n"
            f"{requires}"
            "AutoReqProv: no\n"
            "%define __strip /bin/true\n%define __brp_strip /bin/true\n%define debug_package %{nil}\n"
            "%define _build_id_links none\n"
            "%description\nA troubleshooting wizard and a headless command (fallback-doctor diagnose)\n"
            "for GPU inference servers where ONNX Runtime quietly fell back to the CPU.\n"
            f"%install\nmkdir -p %{{buildroot}}\ncp -a {root}/. %{{buildroot}}/\n"
            "%files\n" + "\n".join(files) + "\n",
            encoding="utf-8",
        )
        proc = subprocess.run(
            [rpmbuild, "-bb", "--quiet", "--define", f"_topdir {top / 'rpm'}", str(spec)],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            raise SystemExit(f"rpmbuild failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}")
        built = next((top / "rpm" / "RPMS").rglob("*.rpm"))
        target = out / built.name
        shutil.copyfile(built, target)
    return target


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("frozen", nargs="?", default=str(ROOT / "dist" / NAME), help="the frozen folder")
    parser.add_argument("--out", default=str(ROOT / "dist"), help="where the packages go (default: dist/)")
    parser.add_argument("--no-rpm", action="store_true", help="only the .deb")
    args = parser.parse_args()
    frozen, out = Path(args.frozen), Path(args.out)
    if not (frozen / NAME).exists():
        raise SystemExit(f"{frozen}: no frozen build there (make package builds it)")
    out.mkdir(parents=True, exist_ok=True)
    print(deb(frozen, out))
    if not args.no_rpm:
        built = rpm(frozen, out)
        print(built if built else "rpmbuild is not installed: no .rpm")
    return 0


if __name__ == "__main__":
    if not re.match(r"^linux", sys.platform):
        raise SystemExit("the .deb and .rpm are built on Linux")
    sys.exit(main())
