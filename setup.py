"""Builds the extension module onnx_repack._core with the project's CMake (the core and the
command line linked in, no Qt), for the interpreter running this script. See pyproject.toml."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


def project_version():
    """The one version of the project: CMakeLists.txt's project(... VERSION x.y.z)."""
    text = (ROOT / "CMakeLists.txt").read_text()
    match = re.search(r"project\(onnx-repack VERSION ([0-9]+\.[0-9]+\.[0-9]+)", text)
    if not match:
        sys.exit("setup.py: no project(onnx-repack VERSION ...) in CMakeLists.txt")
    return match.group(1)


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        target = Path(self.get_ext_fullpath(ext.name)).resolve()
        build = Path(self.build_temp).resolve() / "cmake"
        package = build / "package"
        configure = [
            "cmake", "-S", str(ROOT), "-B", str(build),
            "-DCMAKE_BUILD_TYPE=Release",
            "-DREPACK_BUILD_GUI=OFF", "-DREPACK_BUILD_TESTS=OFF", "-DREPACK_BUILD_BENCH=OFF",
            "-DREPACK_BUILD_PYTHON=ON",
            f"-DPython3_EXECUTABLE={sys.executable}",
            f"-DREPACK_PYTHON_PACKAGE_DIR={package}",
        ]
        if shutil.which("ninja") and not (build / "CMakeCache.txt").exists():
            configure += ["-G", "Ninja"]
        subprocess.check_call(configure)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
        subprocess.check_call(
            ["cmake", "--build", str(build), "--target", "onnx_repack", "-j", jobs])
        built = list(package.glob("_core*.so"))
        if len(built) != 1:
            sys.exit(f"setup.py: expected one _core*.so in {package}, found {built}")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[0], target)


setup(
    version=project_version(),
    ext_modules=[CMakeExtension("onnx_repack._core")],
    cmdclass={"build_ext": CMakeBuild},
)
