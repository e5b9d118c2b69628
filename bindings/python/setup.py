"""pip install --no-build-isolation bindings/python

Builds tessera._C with CMake against an installed Tessera (find_package(Tessera); point
CMAKE_PREFIX_PATH at its prefix when it is not in a default location) and installs the package.
Inside the source tree the top-level CMake build makes the same package in build/python.
"""
import os
import pathlib
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = pathlib.Path(__file__).resolve().parent


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        out_dir = pathlib.Path(self.get_ext_fullpath(ext.name)).resolve().parent
        build_dir = pathlib.Path(self.build_temp).resolve() / "cmake"
        build_dir.mkdir(parents=True, exist_ok=True)
        args = [f"-DTESSERA_PYTHON={sys.executable}", "-DTESSERA_BUILD_TESTS=OFF", "-DCMAKE_BUILD_TYPE=Release"]
        if os.environ.get("CMAKE_PREFIX_PATH"):
            args.append(f"-DCMAKE_PREFIX_PATH={os.environ['CMAKE_PREFIX_PATH']}")
        subprocess.run(["cmake", "-S", str(HERE), "-B", str(build_dir), *args], check=True)
        subprocess.run(["cmake", "--build", str(build_dir), "-j", str(os.cpu_count() or 1)], check=True)
        built = build_dir / "python" / "tessera"
        target = out_dir
        target.mkdir(parents=True, exist_ok=True)
        for f in built.glob("_C*.so"):
            self.copy_file(str(f), str(target / f.name))


setup(
    name="tessera",
    version="0.1.0",
    description="Tessera tensor runtime: Python bindings over its C ABI",
    packages=["tessera", "tessera.nn"],
    ext_modules=[CMakeExtension("tessera._C")],
    cmdclass={"build_ext": CMakeBuild},
    python_requires=">=3.9",
    install_requires=["numpy"],
)
