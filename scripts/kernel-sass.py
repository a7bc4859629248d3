#!/usr/bin/env python3
"""The SASS of a module's GPU kernels, on a machine without a GPU.

    scripts/kernel-sass.py SOURCE.mlir [--options "matmul-backend=generated ..."]
                           [--kernel NAME] [--summary] [--cuobjdump PATH]
    scripts/kernel-sass.py --which      # the cuobjdump it would run

Lowers SOURCE with `fusion-opt --fusion-to-nvvm=format=isa <options>`,
assembles each kernel's PTX with ptxas (fusion.cuda.kernel_resources, which
keeps the PTX and cubins under --work) and disassembles the cubins with
cuobjdump. Prints the SASS of every kernel (or of --kernel), or with
--summary, per kernel: ptxas's registers and spills, the instructions by
opcode, and the kernel's synchronization in order (warpgroup MMAs, their
waits, barriers, mbarrier operations, branches, with runs of the same
instruction counted): where ptxas put each wait, which the PTX does not say.

cuobjdump and the nvdisasm it runs come with the CUDA toolkit; where the
toolkit has neither (this machine's), `pip install nvidia-cuda-cuobjdump
nvidia-cuda-nvdisasm` provides them, and the script finds them there."""

import argparse
import collections
import glob
import os
import re
import shutil
import subprocess
import sys
import sysconfig

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Opcodes whose order the summary keeps: the asynchronous products and
# their waits, barriers, mbarriers, register reallocation, branches and
# exits, and the special-function unit's (exponentials, reciprocals).
ORDERED = re.compile(r"^(HGMMA|WARPGROUP|BAR|SYNCS|USETMAXREG|BRA|EXIT|MUFU)")


def find_cuobjdump(given):
    if given:
        return given
    candidates = [shutil.which("cuobjdump"), "/usr/local/cuda/bin/cuobjdump"]
    for site in {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}:
        candidates += sorted(glob.glob(os.path.join(site, "nvidia", "cu*", "bin", "cuobjdump")))
    for path in candidates:
        if path and os.access(path, os.X_OK):
            return path
    sys.exit("kernel-sass.py: no cuobjdump (pip install nvidia-cuda-cuobjdump "
             "nvidia-cuda-nvdisasm, or --cuobjdump)")


def instructions(sass):
    """(opcode with its modifiers, operands) of each instruction, in order;
    a predicate guard stays on the opcode."""
    listed = []
    for line in sass.splitlines():
        match = re.match(r"\s*/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;", line)
        if not match:
            continue
        text = match.group(1)
        guard = ""
        if text.startswith("@"):
            guard, text = text.split(None, 1)
            guard += " "
        opcode, _, operands = text.partition(" ")
        listed.append((guard + opcode, operands.strip()))
    return listed


def summary(name, resources, sass):
    listed = instructions(sass)
    lines = [f"== {name}: {resources.get('registers')} registers, "
             f"{resources.get('spill_stores', 0)} B spill stores, "
             f"{resources.get('spill_loads', 0)} B spill loads, {len(listed)} instructions"]
    counts = collections.Counter(op.split()[-1].split(".")[0] for op, _ in listed)
    lines.append("   by opcode: " + ", ".join(f"{op} {n}" for op, n in counts.most_common()))
    ordered = []
    for op, operands in listed:
        base = op.split()[-1]
        if not ORDERED.match(base):
            continue
        # Waits and barriers keep their operands (which group, which barrier).
        shown = f"{op} {operands}" if base.startswith(("WARPGROUP.DEPBAR", "BAR")) else op
        if ordered and ordered[-1][0] == shown:
            ordered[-1][1] += 1
        else:
            ordered.append([shown, 1])
    lines.append("   in order: " + "; ".join(
        text if n == 1 else f"{n} x {text}" for text, n in ordered))
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", nargs="?")
    parser.add_argument("--options", default="", help="fusion-to-nvvm options")
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--work", default="kernel-sass", help="where the PTX and cubins go")
    parser.add_argument("--kernel", help="only this kernel")
    parser.add_argument("--summary", action="store_true")
    parser.add_argument("--cuobjdump")
    parser.add_argument("--which", action="store_true", help="print the cuobjdump found, and stop")
    args = parser.parse_args()
    cuobjdump = find_cuobjdump(args.cuobjdump)
    if args.which:
        print(cuobjdump)
        return
    if not args.source:
        parser.error("a SOURCE is needed")
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from fusion import cuda
    # Only this run's cubins are listed below.
    for stale in glob.glob(os.path.join(args.work, "*.ptx*")):
        os.remove(stale)
    resources = cuda.kernel_resources(args.source, args.build, args.work, args.options)
    if args.kernel and args.kernel not in resources:
        sys.exit(f"kernel-sass.py: no kernel {args.kernel!r}; kernels: {', '.join(sorted(resources))}")
    for cubin in sorted(glob.glob(os.path.join(args.work, "*.ptx.cubin"))):
        # cuobjdump runs nvdisasm, which the pip packages put beside it.
        env = dict(os.environ)
        env.setdefault("NVDISASM_PATH", os.path.dirname(cuobjdump))
        result = subprocess.run([cuobjdump, "-sass", cubin], capture_output=True, text=True,
                                env=env)
        if result.returncode != 0:
            sys.exit(f"kernel-sass.py: cuobjdump failed on {cubin}:\n{result.stderr}")
        sass = result.stdout
        # A module's cubin may hold several kernels: split at each function.
        for name, body in re.findall(r"Function : (\w+)\n(.*?)(?=\n\s*Function : |\Z)",
                                     sass, re.S):
            if name not in resources or (args.kernel and name != args.kernel):
                continue
            print(summary(name, resources[name], body) if args.summary else
                  f"== {name}\n{body}")


if __name__ == "__main__":
    main()
