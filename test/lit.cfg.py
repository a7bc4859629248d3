# -*- Python -*-
# lit configuration for the Fusion regression tests.

import os

import lit.formats
import lit.util
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "FUSION"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test", ".c"]
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py", "lit.site.cfg.py"]

config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.fusion_obj_root, "test")

config.substitutions.append(("%fusion_src_root", config.fusion_src_root))
config.substitutions.append(("%fusion_docs_dir", config.fusion_docs_dir))
config.substitutions.append(("%fusion_version", config.fusion_version))
config.substitutions.append(("%mlir_version", config.mlir_version))

# CUDA_HOME (or CUDA_ROOT, CUDA_PATH) tells the NVVM target where libdevice
# and ptxas are.
llvm_config.with_system_environment(
    ["HOME", "INCLUDE", "LIB", "TMP", "TEMP", "CUDA_HOME", "CUDA_ROOT", "CUDA_PATH",
     "ASAN_OPTIONS", "UBSAN_OPTIONS", "CFLAGS", "CXXFLAGS", "LDFLAGS",
     # Tests that draw a fresh random seed print it; this reruns one.
     "FUSION_TEST_SEED"])
# scripts/sanitize.sh: uninstrumented programs (Python, which loads the
# instrumented runtime) get the sanitizer runtimes first.
if os.environ.get("FUSION_TEST_PRELOAD"):
    config.environment["LD_PRELOAD"] = os.environ["FUSION_TEST_PRELOAD"]
llvm_config.use_default_substitutions()

tool_dirs = [config.fusion_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["fusion-opt", "fusion-compile", "fusion-capi-test"], tool_dirs)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.fusion_tools_dir, append_path=True)

# ptxas turns PTX into cubin; MLIR looks for it under CUDA's install and PATH.
if os.path.exists("/usr/local/cuda/bin/ptxas") or lit.util.which("ptxas"):
    config.available_features.add("ptxas")

# mlir-runner loads MLIR's runner utilities and Fusion's traffic counter.
config.substitutions.append(("%mlir_lib_dir", config.mlir_lib_dir))
config.substitutions.append(("%fusion_lib_dir", config.fusion_lib_dir))

# Graphviz renders the fusion-view graphs (Debian's graphviz).
if lit.util.which("dot"):
    config.available_features.add("graphviz")

# The PyTorch front end needs torch: the suite's Python if it has it, else
# Debian's python3-torch under /usr/bin/python3.
import subprocess
for candidate in (config.fusion_python, "/usr/bin/python3"):
    if os.path.exists(candidate) and subprocess.run(
            [candidate, "-c", "import torch, numpy"], capture_output=True).returncode == 0:
        config.available_features.add("torch")
        config.substitutions.append(("%torch_python", candidate))
        break

# The torch.compile backend needs PyTorch 2.x in the suite's Python (the
# test command installs it there).
if subprocess.run([config.fusion_python, "-c", "import torch; torch.compile; import torch._dynamo"],
                  capture_output=True).returncode == 0:
    config.available_features.add("torch-compile")

# cuobjdump disassembles cubins (scripts/kernel-sass.py finds it in the
# toolkit, in PATH or in the suite's Python's pip packages).
if subprocess.run([config.fusion_python,
                   os.path.join(config.fusion_src_root, "scripts", "kernel-sass.py"), "--which"],
                  capture_output=True).returncode == 0:
    config.available_features.add("cuobjdump")

# Executed tests run Python with the fusion package on its path.
config.substitutions.append(("%fusion_python", config.fusion_python))
config.substitutions.append(("%fusion_obj_root", config.fusion_obj_root))
llvm_config.with_environment(
    "PYTHONPATH", os.path.join(config.fusion_src_root, "python"), append_path=True)
