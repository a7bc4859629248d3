// RUN: fusion-opt %s --split-input-file --fusion-kernels-to-gpu | FileCheck %s

// attention_rows: a block of 128 threads here (the plan's) per query row and
// range of keys (at most 8 ranges here: the plan's split). A key's rows of
// K and V are shared by a group of 8 lanes, 16 elements each (vector
// loads); a step of the loop gives each of the 16 groups 4 adjacent keys
// (64 keys a step), the same steps in every lane (a key past the range is
// read at its last and masked), every row loaded before the first is used.
// A score is the group's sum (3 butterfly shuffles), rounded to bf16,
// scaled; the softmax stays whole until here and runs online, the state
// rescaled once a step (one exp) and each key weighted by its own exp. The
// groups of a warp fold their states by shuffles (lanes 8, then 16 apart);
// the 4 warps' states meet in shared memory (a state each, on 32-byte
// boundaries); with several ranges each block writes its state to a
// workspace and the row's last block (an arrival count) folds them and
// writes the row.
// CHECK-LABEL: func.func @decode
// CHECK: arith.minui %{{.+}}, %c8 : index
// CHECK: gpu.alloc async
// CHECK: gpu.alloc async
// CHECK: gpu.memset async
// CHECK: gpu.launch
// CHECK-SAME: threads({{.*}}) in ({{.*}} = %c128
// CHECK-SAME: function(@decode_k0)
// CHECK-SAME: workgroup(%[[STATES:.+]] : memref<544xf32, #gpu.address_space<workgroup>>, %{{.+}} : memref<1xi32, #gpu.address_space<workgroup>>)
// CHECK: vector.load %{{.+}} : memref<2x4x1x128xbf16>, vector<16xbf16>
// CHECK: scf.for %{{.+}} step %c64
// CHECK-COUNT-8: vector.load %{{.+}} : memref<2x4x?x128xbf16>, vector<16xbf16>
// CHECK: vector.reduction <add>
// CHECK-COUNT-3: gpu.shuffle  xor
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK-COUNT-5: math.exp
// CHECK-NOT: math.exp
// CHECK: scf.yield
// CHECK: gpu.shuffle  xor %{{.+}}, %c8_i32
// CHECK: gpu.shuffle  xor %{{.+}}, %c16_i32
// CHECK: vector.store %{{.+}}, %[[STATES]]
// CHECK: gpu.barrier
// CHECK: vector.store %{{.+}} : memref<2x4x1x128xbf16>, vector<16xbf16>
// CHECK: memref.atomic_rmw addi
// CHECK: scf.for
// CHECK: vector.store %{{.+}} : memref<2x4x1x128xbf16>, vector<16xbf16>
// CHECK-NOT: fusion.
// CHECK: gpu.dealloc async
func.func @decode(%q: tensor<2x4x1x128xbf16>, %k: tensor<2x4x?x128xbf16>, %v: tensor<2x4x?x128xbf16>) -> tensor<2x4x1x128xbf16> {
  %0 = fusion.kernel attention "decode_k0" (%q, %k, %v) {plan = #fusion.plan<attention_rows, threads = 128, vector = 16, row = none, cluster = 1, split = 8, passes = [1, 1, 1]>} : (tensor<2x4x1x128xbf16>, tensor<2x4x?x128xbf16>, tensor<2x4x?x128xbf16>) -> tensor<2x4x1x128xbf16> {
  ^bb0(%a: tensor<2x4x1x128xbf16>, %b: tensor<2x4x?x128xbf16>, %c: tensor<2x4x?x128xbf16>):
    %kt = fusion.transpose %b permutation = [0, 1, 3, 2] : tensor<2x4x?x128xbf16> -> tensor<2x4x128x?xbf16>
    %s = fusion.matmul %a, %kt : (tensor<2x4x1x128xbf16>, tensor<2x4x128x?xbf16>) -> tensor<2x4x1x?xbf16>
    %scale = fusion.constant dense<0.125> : tensor<bf16>
    %t = fusion.mul %s, %scale : (tensor<2x4x1x?xbf16>, tensor<bf16>) -> tensor<2x4x1x?xbf16>
    %p = fusion.softmax %t axis = 3 : tensor<2x4x1x?xbf16>
    %o = fusion.matmul %p, %c : (tensor<2x4x1x?xbf16>, tensor<2x4x?x128xbf16>) -> tensor<2x4x1x128xbf16>
    fusion.yield %o : tensor<2x4x1x128xbf16>
  }
  return %0 : tensor<2x4x1x128xbf16>
}
