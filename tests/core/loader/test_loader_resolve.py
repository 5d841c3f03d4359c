"""The resolver on synthetic layouts built from real libraries, and against ld.so itself."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import loader_wheels as wheels
import pytest
from fallback_doctor.core.model.facts.libraries import DependencyReport, Resolution
from fallback_doctor.core.readers.loader.ld_debug import failed_names, parse_ld_debug_libs
from fallback_doctor.core.readers.loader.ldcache import load_ld_cache
from fallback_doctor.core.readers.loader.resolve import ort_lazy_libraries, resolve_dependencies
from fallback_doctor.core.readers.loader.search_path import (
    detect_linux_host,
    expand_dst,
    split_search_path,
    windows_search_steps,
)

HOST = detect_linux_host()


def _by_name(report: DependencyReport) -> dict[str, Resolution]:
    return {item.name: item for item in report.resolutions}


def _cuda13_libs() -> dict[str, Path]:
    return {
        "libcudart.so.13": wheels.cu13_lib("cudart13") / "libcudart.so.13",
        "libcublas.so.13": wheels.cu13_lib("cublas13") / "libcublas.so.13",
        "libcublasLt.so.13": wheels.cu13_lib("cublas13") / "libcublasLt.so.13",
        "libcurand.so.10": wheels.cu13_lib("curand10") / "libcurand.so.10",
    }


@pytest.fixture
def capi(tmp_path: Path) -> Path:
    """A copy of onnxruntime/capi of onnxruntime-gpu 1.31.1 (links, so the real files load)."""
    target = tmp_path / "site" / "onnxruntime" / "capi"
    source = wheels.provider("ort131").parent
    wheels.place(
        {
            name: source / name
            for name in (
                "libonnxruntime_providers_cuda.so",
                "libonnxruntime_providers_shared.so",
                "libonnxruntime_providers_tensorrt.so",
            )
        },
        target,
    )
    return target


def test_search_path_helpers() -> None:
    assert split_search_path("/a::/b;/c") == ("/a", ".", "/b", "/c")
    assert split_search_path("") == ()
    assert (
        expand_dst("$ORIGIN/../../cu13/lib", "/x/nvidia/cudnn/lib", lib="lib64", platform="x86_64")
        == "/x/nvidia/cu13/lib"
    )
    assert (
        expand_dst("${ORIGIN}/$LIB/$PLATFORM", "/o", lib="lib/x86_64-linux-gnu", platform="x86_64")
        == "/o/lib/x86_64-linux-gnu/x86_64"
    )
    steps = windows_search_steps(
        "C:\\app\\capi\\p.dll", {"SystemRoot": "C:\\Windows", "PATH": "C:\\cuda\\bin;;D:\\x"}
    )
    assert [step.via for step in steps] == [
        "DLL directory",
        "System32",
        "System",
        "Windows directory",
        "PATH",
    ]
    assert steps[0].dirs == ("C:\\app\\capi",)
    assert steps[-1].dirs == ("C:\\cuda\\bin", "D:\\x")


def test_nothing_installed_names_every_cuda_library(capi: Path) -> None:
    report = resolve_dependencies(
        "CUDAExecutionProvider", str(capi / "libonnxruntime_providers_cuda.so"), env={}, cache=None, host=HOST
    )
    found = _by_name(report)
    for name in ("libcublasLt.so.13", "libcublas.so.13", "libcurand.so.10", "libcudart.so.13"):
        assert found[name].path is None and not found[name].lazy
        assert found[name].searched == HOST.default_dirs
    assert found["libc.so.6"].path is not None and found["libc.so.6"].via == "default"
    # ONNX Runtime >= 1.28 opens these by name at run time.
    for name in ("libcudnn.so.9", "libcufft.so.12", "libnvrtc.so.13"):
        assert found[name].lazy and found[name].path is None
    assert not report.budget_exhausted


def test_installed_elsewhere_and_ld_library_path(capi: Path, tmp_path: Path) -> None:
    site_lib = wheels.place(_cuda13_libs(), tmp_path / "site" / "nvidia" / "cu13" / "lib")
    root = str(capi / "libonnxruntime_providers_cuda.so")
    report = resolve_dependencies("CUDA", root, env={}, cache=None, host=HOST, known_dirs=[str(site_lib)])
    cudart = _by_name(report)["libcudart.so.13"]
    assert cudart.path is None
    assert cudart.installed_elsewhere == (str(site_lib / "libcudart.so.13"),)
    report = resolve_dependencies(
        "CUDA",
        root,
        env={"LD_LIBRARY_PATH": str(site_lib)},
        cache=None,
        host=HOST,
        known_dirs=[str(site_lib)],
    )
    found = _by_name(report)
    for name in _cuda13_libs():
        assert found[name].path == str(site_lib / name)
        assert found[name].via == "LD_LIBRARY_PATH"
        assert found[name].installed_elsewhere == ()
    # curand needs libcudart.so.13: already loaded by then (breadth-first, each name once).
    names = [item.name for item in report.resolutions]
    assert names.count("libcudart.so.13") == 1


def test_other_major_and_shadowing(capi: Path, tmp_path: Path) -> None:
    libs = _cuda13_libs()
    old = wheels.place(
        {"libcublasLt.so.12": libs["libcublasLt.so.13"], "libcudart.so.12.8.90": libs["libcudart.so.13"]},
        tmp_path / "cuda12",
    )
    (old / "libcudart.so.13").symlink_to("libcudart.so.12.8.90")  # a "fixed" link
    report = resolve_dependencies(
        "CUDA",
        str(capi / "libonnxruntime_providers_cuda.so"),
        env={"LD_LIBRARY_PATH": str(old)},
        cache=None,
        host=HOST,
    )
    found = _by_name(report)
    assert found["libcublasLt.so.13"].path is None
    assert found["libcublasLt.so.13"].other_majors == (str(old / "libcublasLt.so.12"),)
    cudart = found["libcudart.so.13"]
    assert cudart.path == str(old / "libcudart.so.13")
    assert cudart.version == "12.8.90"  # the real file behind the link is another major


def test_wrong_elf_class_is_skipped_like_ld_so(capi: Path, tmp_path: Path) -> None:
    libs = _cuda13_libs()
    first = tmp_path / "first"
    first.mkdir()
    data = bytearray(libs["libcudart.so.13"].read_bytes()[:4096])
    data[4] = 1  # ELFCLASS32
    (first / "libcudart.so.13").write_bytes(bytes(data))
    second = wheels.place({"libcudart.so.13": libs["libcudart.so.13"]}, tmp_path / "second")
    report = resolve_dependencies(
        "CUDA",
        str(capi / "libonnxruntime_providers_cuda.so"),
        env={"LD_LIBRARY_PATH": f"{first}:{second}"},
        cache=None,
        host=HOST,
    )
    cudart = _by_name(report)["libcudart.so.13"]
    assert cudart.path == str(second / "libcudart.so.13")
    assert cudart.skipped == (str(first / "libcudart.so.13"),)


def test_cudnn_runpath_origin_and_sublibraries(capi: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    wheels.link_tree(wheels.cudnn_lib(), site / "nvidia" / "cudnn" / "lib")
    cudnn = site / "nvidia" / "cudnn" / "lib"
    os.remove(cudnn / "libcudnn_heuristic.so.9")
    report = resolve_dependencies(
        "CUDA",
        str(capi / "libonnxruntime_providers_cuda.so"),
        env={"LD_LIBRARY_PATH": str(cudnn)},
        cache=None,
        host=HOST,
    )
    found = _by_name(report)
    assert found["libcudnn.so.9"].via == "LD_LIBRARY_PATH" and found["libcudnn.so.9"].lazy
    graph = found["libcudnn_graph.so.9"]
    assert graph.lazy and graph.via == "RPATH"  # libcudnn.so.9 has DT_RPATH $ORIGIN
    assert graph.needed_by == str(cudnn / "libcudnn.so.9")
    assert found["libz.so.1"].path is not None
    assert found["libcudnn_heuristic.so.9"].path is None
    # libcudnn_ops' RUNPATH $ORIGIN/../../cu13/lib is expanded for its own needs.
    assert found["libcudnn_ops.so.9"].path == str(cudnn / "libcudnn_ops.so.9")


def test_rpath_of_loader_chain_versus_runpath(tmp_path: Path) -> None:
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("no C compiler")
    src = tmp_path / "f.c"
    src.write_text("int f(void) { return 1; }\n")
    deep = tmp_path / "deep"
    deep.mkdir()
    subprocess.run(
        [gcc, "-shared", "-o", str(deep / "libleaf.so.1"), str(src), "-Wl,-soname,libleaf.so.1"], check=True
    )
    subprocess.run(
        [
            gcc,
            "-shared",
            "-o",
            str(tmp_path / "libmid.so.1"),
            str(src),
            "-Wl,-soname,libmid.so.1",
            "-Wl,--no-as-needed",
            f"-L{deep}",
            "-l:libleaf.so.1",
            "-Wl,--disable-new-dtags",
        ],
        check=True,
    )
    # the root has DT_RPATH $ORIGIN/deep: its RPATH serves libmid's needs too (mid has none).
    subprocess.run(
        [
            gcc,
            "-shared",
            "-o",
            str(tmp_path / "libroot.so"),
            str(src),
            "-Wl,--no-as-needed",
            f"-L{tmp_path}",
            "-l:libmid.so.1",
            "-Wl,-rpath,$ORIGIN:$ORIGIN/deep",
            "-Wl,--disable-new-dtags",
        ],
        check=True,
    )
    report = resolve_dependencies("X", str(tmp_path / "libroot.so"), env={}, cache=None, host=HOST, lazy=())
    found = _by_name(report)
    assert found["libmid.so.1"].via == "RPATH"
    assert found["libleaf.so.1"].via == "RPATH"
    assert found["libleaf.so.1"].path == str(deep / "libleaf.so.1")
    # With DT_RUNPATH instead, the root's path applies to its direct needs only.
    subprocess.run(
        [
            gcc,
            "-shared",
            "-o",
            str(tmp_path / "libroot.so"),
            str(src),
            "-Wl,--no-as-needed",
            f"-L{tmp_path}",
            "-l:libmid.so.1",
            "-Wl,-rpath,$ORIGIN:$ORIGIN/deep",
            "-Wl,--enable-new-dtags",
        ],
        check=True,
    )
    report = resolve_dependencies("X", str(tmp_path / "libroot.so"), env={}, cache=None, host=HOST, lazy=())
    found = _by_name(report)
    assert found["libmid.so.1"].via == "RUNPATH"
    assert found["libleaf.so.1"].path is None
    _compare_with_ld_so(str(tmp_path / "libroot.so"), {}, report, expect_failure="libleaf.so.1")


def test_budget_exhausted(capi: Path) -> None:
    report = resolve_dependencies(
        "CUDA", str(capi / "libonnxruntime_providers_cuda.so"), env={}, cache=None, host=HOST, budget_s=0.0
    )
    assert report.budget_exhausted


def test_missing_root_is_an_error_not_an_exception(tmp_path: Path) -> None:
    report = resolve_dependencies("CUDA", str(tmp_path / "nope.so"), env={}, cache=None, host=HOST)
    assert report.error and report.resolutions == ()


def test_lazy_inference() -> None:
    assert ort_lazy_libraries(["libcublas.so.13", "libcudart.so.13"]) == (
        "libcudnn.so.9",
        "libcufft.so.12",
        "libnvrtc.so.13",
    )
    assert ort_lazy_libraries(["libcublas.so.12", "libcudnn.so.9"]) == ()
    assert ort_lazy_libraries(["cublasLt64_13.dll", "cublas64_13.dll"], windows=True) == (
        "cudnn64_9.dll",
        "cufft64_12.dll",
        "nvrtc64_130_0.dll",
        "cudart64_13.dll",
    )


def test_windows_dll_directory_and_path(tmp_path: Path) -> None:
    capi = wheels.wheel_dir("win_ort131") / "onnxruntime" / "capi"
    app = wheels.place(
        {
            name: capi / name
            for name in ("onnxruntime_providers_cuda.dll", "onnxruntime_providers_shared.dll")
        },
        tmp_path / "capi",
    )
    cudart_dir = wheels.wheel_dir("win_cudart13") / "nvidia" / "cu13" / "bin" / "x86_64"
    report = resolve_dependencies(
        "CUDAExecutionProvider",
        str(app / "onnxruntime_providers_cuda.dll"),
        env={"PATH": str(cudart_dir), "SystemRoot": str(tmp_path / "Windows")},
        platform="win32",
        known_dirs=[str(cudart_dir)],
    )
    found = {item.name.lower(): item for item in report.resolutions}
    assert found["onnxruntime_providers_shared.dll"].via == "DLL directory"
    assert found["kernel32.dll"].via == "KnownDLLs"
    assert found["api-ms-win-crt-runtime-l1-1-0.dll"].via == "API set"
    assert found["cublaslt64_13.dll"].path is None
    assert found["cudart64_13.dll"].lazy and found["cudart64_13.dll"].via == "PATH"


# -- against the real loader ---------------------------------------------------------------------

_CHILD = (
    "import ctypes, os, sys\n"
    "os.write(2, b'GFD-START\\n')\n"
    "try:\n"
    "    ctypes.CDLL(sys.argv[1])\n"
    "except OSError as error:\n"
    "    print('LOADFAIL', error)\n"
)


def _compare_with_ld_so(
    root: str,
    env: dict[str, str],
    report: DependencyReport,
    expect_failure: str | None,
    compared: list[str] | None = None,
) -> None:
    compared = [] if compared is None else compared
    child_env = {
        key: value for key, value in os.environ.items() if key not in ("LD_LIBRARY_PATH", "LD_PRELOAD")
    }
    child_env.update(env)
    child_env["LD_DEBUG"] = "libs"
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, root],
        capture_output=True,
        text=True,
        env=child_env,
        timeout=60,
        check=False,
    )
    text = done.stderr
    # Only the blocks after the provider's own load: the interpreter's start-up is not ours.
    start = text.find("GFD-START")
    assert start >= 0, text[-2000:]
    failed = failed_names(done.stdout)
    searches = parse_ld_debug_libs(text[start:], failed)
    assert searches, text[-2000:]
    compared.extend(search.name for search in searches)
    resolved = _by_name(report)
    for search in searches:
        ours = resolved.get(search.name)
        assert ours is not None, f"ld.so searched {search.name}, the resolver never did"
        if search.found is None:
            assert ours.path is None, (search, ours)
        else:
            assert ours.path is not None, (search, ours)
            assert os.path.realpath(ours.path) == os.path.realpath(search.found), (search, ours)
    if expect_failure is None:
        assert not failed, done.stdout
    else:
        assert failed == (expect_failure,), done.stdout
        load_time = [item.name for item in report.resolutions if item.path is None and not item.lazy]
        assert load_time and load_time[0] == expect_failure


def _fake_libcuda(directory: Path) -> None:
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("no C compiler for a stand-in libcuda.so.1")
    src = directory / "cuda.c"
    src.write_text("int cuDriverGetVersion(int *v) { *v = 13000; return 0; }\n")
    subprocess.run(
        [gcc, "-shared", "-o", str(directory / "libcuda.so.1"), str(src), "-Wl,-soname,libcuda.so.1"],
        check=True,
    )


@pytest.mark.parametrize("layout", ["none", "cuda_libs", "cuda_libs_and_driver"])
def test_resolver_agrees_with_ld_so(capi: Path, tmp_path: Path, layout: str) -> None:
    """LD_DEBUG=libs of a real dlopen of the 1.31.1 CUDA provider versus the resolver."""
    root = str(capi / "libonnxruntime_providers_cuda.so")
    env: dict[str, str] = {}
    expect: str | None = "libcublasLt.so.13"
    if layout != "none":
        dirs = sorted({str(wheels.cu13_lib(key)) for key in ("cudart13", "cublas13", "curand10")})
        if layout == "cuda_libs_and_driver":
            driver = tmp_path / "driver"
            driver.mkdir()
            _fake_libcuda(driver)
            dirs.append(str(driver))
        env["LD_LIBRARY_PATH"] = ":".join(dirs)
        expect = None if layout == "cuda_libs_and_driver" else "libcuda.so.1"
        cache = load_ld_cache()
        if expect == "libcuda.so.1" and cache is not None and cache.lookup("libcuda.so.1"):
            expect = None  # a machine with a driver: libcuda comes from the cache
    else:
        cache = load_ld_cache()
        if cache is not None and cache.lookup("libcublasLt.so.13"):
            pytest.skip("this machine has CUDA 13 cuBLAS in its ldconfig cache")
    report = resolve_dependencies("CUDA", root, env=env, cache=load_ld_cache(), lazy=())
    compared: list[str] = []
    _compare_with_ld_so(root, env, report, expect, compared)
    assert compared[0] == "libcublasLt.so.13"
    if layout == "cuda_libs_and_driver":
        # the whole load-time tree was searched and found by both
        assert {
            "libcublas.so.13",
            "libcurand.so.10",
            "libcudart.so.13",
            "libcuda.so.1",
            "libstdc++.so.6",
        } <= set(compared)
