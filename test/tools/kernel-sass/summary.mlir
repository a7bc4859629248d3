// scripts/kernel-sass.py: the SASS of a module's kernels (ptxas, then
// cuobjdump), here a generated warpgroup-MMA product with gelu fused.
// --summary gives each kernel's registers and spills, its opcodes, and its
// synchronization in order: the MMAs, then a wait for them (the PTX's
// wgmma.wait_group as ptxas placed it).
// REQUIRES: cuobjdump
// RUN: %fusion_python %fusion_src_root/scripts/kernel-sass.py %s --work %t --build %fusion_obj_root --options "matmul-backend=generated matmul-epilogue=any" --summary | FileCheck %s
// RUN: %fusion_python %fusion_src_root/scripts/kernel-sass.py %s --work %t --build %fusion_obj_root --options "matmul-backend=generated matmul-epilogue=any" --kernel linear_gelu_k0 | FileCheck %s --check-prefix=SASS
// RUN: not %fusion_python %fusion_src_root/scripts/kernel-sass.py %s --work %t --build %fusion_obj_root --options "matmul-backend=generated matmul-epilogue=any" --kernel nothing 2>&1 | FileCheck %s --check-prefix=MISSING

// CHECK: == linear_gelu_k0: {{[0-9]+}} registers, 0 B spill stores, 0 B spill loads, {{[0-9]+}} instructions
// CHECK-NEXT: by opcode: {{.*}}HGMMA {{[0-9]+}}
// CHECK-NEXT: in order: {{.*}}USETMAXREG{{.*}}HGMMA.64x{{[0-9]+}}x16.F32.BF16; {{.*}}WARPGROUP.DEPBAR.LE gsb0{{.*}}EXIT

// SASS: == linear_gelu_k0
// SASS: HGMMA.64x{{[0-9]+}}x16.F32.BF16
// SASS: EXIT

// MISSING: kernel-sass.py: no kernel 'nothing'; kernels: linear_gelu_k0

func.func @linear_gelu(%x: tensor<1024x256xbf16>, %w: tensor<256x128xbf16>) -> tensor<1024x128xbf16> {
  %y = fusion.matmul %x, %w : (tensor<1024x256xbf16>, tensor<256x128xbf16>) -> tensor<1024x128xbf16>
  %g = fusion.gelu %y : tensor<1024x128xbf16>
  return %g : tensor<1024x128xbf16>
}
