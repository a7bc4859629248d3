"""Fusion's Python package: compile `fusion` modules and call them.

`fusion.cpu` compiles a module for the CPU (through `fusion-opt
--fusion-to-cpu`, `mlir-translate`, `llc` and the system linker) and calls
its functions with numpy arrays.
"""
