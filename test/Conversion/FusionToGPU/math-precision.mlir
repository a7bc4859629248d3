// RUN: fusion-opt %s --split-input-file --fusion-pipeline --fusion-kernels-to-gpu | FileCheck %s
// RUN: fusion-opt %s --split-input-file --fusion-to-nvvm=format=isa | FileCheck %s --check-prefix=PTX

// The math of an op whose result is rounded to bf16 or f16 takes the
// approximate hardware forms (ScalarOps' MathPrecision, GpuMathForms.cpp):
// exponentials ex2.approx.ftz, divisions by a logistic denominator as
// products with rcp.approx.ftz. The elementwise composites stay whole to
// the strategy, so their result type decides.

// CHECK-LABEL: func.func @gelu_tanh_bf16
// CHECK: gpu.launch
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK-NOT: llvm.nvvm.div.full
// CHECK: llvm.call_intrinsic "llvm.nvvm.rcp.approx.ftz.f"
// CHECK: gpu.terminator
// PTX-LABEL: gpu.binary @gelu_tanh_bf16_k0_module
// PTX-SAME: ex2.approx.ftz.f32
// PTX-NOT: div.full.f32
// PTX-SAME: rcp.approx.ftz.f32
func.func @gelu_tanh_bf16(%x: tensor<64x1024xbf16>, %b: tensor<1024xbf16>) -> tensor<64x1024xbf16> {
  %0 = fusion.add %x, %b : (tensor<64x1024xbf16>, tensor<1024xbf16>) -> tensor<64x1024xbf16>
  %1 = fusion.gelu %0 approximation = tanh : tensor<64x1024xbf16>
  return %1 : tensor<64x1024xbf16>
}

// -----

// Erf gelu rounded to bf16 is x Phi(x) through erfc (ScalarOps'
// buildGeluByErfc): an approximate division, a polynomial of FMAs and an
// approximate exponential, no erf; in f32 it keeps libdevice's erf.
// CHECK-LABEL: func.func @gelu_erf_bf16
// CHECK: gpu.launch
// CHECK-NOT: math.erf
// CHECK: llvm.call_intrinsic "llvm.nvvm.rcp.approx.ftz.f"
// CHECK-COUNT-7: math.fma
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: arith.cmpf oge
// CHECK-NOT: math.erf
// CHECK: gpu.terminator
// PTX-LABEL: gpu.binary @gelu_erf_bf16_k0_module
// PTX-SAME: rcp.approx.ftz.f32
// PTX-SAME: ex2.approx.ftz.f32
// PTX-LABEL: gpu.binary @gelu_erf_f32_k0_module
// PTX-NOT: rcp.approx
// CHECK-LABEL: func.func @gelu_erf_f32
// CHECK: gpu.launch
// CHECK: math.erf
// CHECK: gpu.terminator
func.func @gelu_erf_bf16(%x: tensor<4096xbf16>) -> tensor<4096xbf16> {
  %0 = fusion.gelu %x : tensor<4096xbf16>
  return %0 : tensor<4096xbf16>
}
func.func @gelu_erf_f32(%x: tensor<4096xf32>) -> tensor<4096xf32> {
  %0 = fusion.gelu %x : tensor<4096xf32>
  return %0 : tensor<4096xf32>
}

// -----

// Silu and sigmoid in f16 likewise.
// CHECK-LABEL: func.func @silu_sigmoid_f16
// PTX-LABEL: gpu.binary @silu_sigmoid_f16_k0_module
// CHECK: gpu.launch
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK-NOT: llvm.nvvm.div.full
// CHECK: gpu.terminator
func.func @silu_sigmoid_f16(%x: tensor<4096xf16>) -> (tensor<4096xf16>, tensor<4096xf16>) {
  %0 = fusion.silu %x : tensor<4096xf16>
  %1 = fusion.sigmoid %x : tensor<4096xf16>
  return %0, %1 : tensor<4096xf16>, tensor<4096xf16>
}

// -----

// An f32 result keeps the accurate forms.
// CHECK-LABEL: func.func @gelu_tanh_f32
// CHECK: gpu.launch
// CHECK-NOT: approx.ftz
// CHECK: math.exp
// CHECK-NOT: approx.ftz
// CHECK: llvm.call_intrinsic "llvm.nvvm.div.full"
// CHECK-NOT: llvm.nvvm.rcp.approx.ftz
// CHECK: gpu.terminator
func.func @gelu_tanh_f32(%x: tensor<4096xf32>) -> tensor<4096xf32> {
  %0 = fusion.gelu %x approximation = tanh : tensor<4096xf32>
  return %0 : tensor<4096xf32>
}

// -----

// A division by an arbitrary value keeps the full-range form in bf16 too
// (its divisor may be subnormal or past 2^126); the exp is approximate.
// CHECK-LABEL: func.func @div_exp_bf16
// CHECK: gpu.launch
// CHECK: llvm.call_intrinsic "llvm.nvvm.div.full"
// CHECK-NOT: llvm.nvvm.rcp.approx.ftz
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: gpu.terminator
func.func @div_exp_bf16(%x: tensor<4096xbf16>, %y: tensor<4096xbf16>) -> tensor<4096xbf16> {
  %0 = fusion.div %x, %y : tensor<4096xbf16>
  %1 = fusion.exp %0 : tensor<4096xbf16>
  return %1 : tensor<4096xbf16>
}

// -----

// A bf16 softmax computes in f32 (its decomposition converts first), but
// its exponentials reach only the bf16 result, through a sum of
// non-negative terms and a quotient: they take the fast form.
// CHECK-LABEL: func.func @softmax_bf16
// CHECK: gpu.launch
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: gpu.terminator
func.func @softmax_bf16(%x: tensor<256x1024xbf16>) -> tensor<256x1024xbf16> {
  %0 = fusion.softmax %x axis = 1 : tensor<256x1024xbf16>
  return %0 : tensor<256x1024xbf16>
}

// -----

// Streamed, the online sum's terms take it too.
// CHECK-LABEL: func.func @softmax_streamed_bf16
// CHECK: gpu.launch
// CHECK: scf.for
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: gpu.all_reduce
// CHECK: gpu.terminator
func.func @softmax_streamed_bf16(%x: tensor<256x?xbf16>) -> tensor<256x?xbf16> {
  %0 = fusion.softmax %x axis = 1 : tensor<256x?xbf16>
  return %0 : tensor<256x?xbf16>
}

// -----

// Rows held in registers: an f32 softmax, and a logsumexp of bf16 rows
// (its log turns the sum's relative error into an absolute one in an f32
// result), keep the accurate exponentials.
// CHECK-LABEL: func.func @softmax_f32
// CHECK: gpu.launch
// CHECK-NOT: approx.ftz
// CHECK: gpu.terminator
func.func @softmax_f32(%x: tensor<256x1024xf32>) -> tensor<256x1024xf32> {
  %0 = fusion.softmax %x axis = 1 : tensor<256x1024xf32>
  return %0 : tensor<256x1024xf32>
}

// -----

// CHECK-LABEL: func.func @logsumexp_bf16
// CHECK: gpu.launch
// CHECK-NOT: approx.ftz
// CHECK: gpu.terminator
func.func @logsumexp_bf16(%x: tensor<256x1024xbf16>) -> tensor<256xbf16> {
  %0 = fusion.logsumexp %x axis = 1 : tensor<256x1024xbf16> -> tensor<256xbf16>
  return %0 : tensor<256xbf16>
}

// -----

// Streamed rows: an online sum's terms, exp(y - running max), take the fast
// form whatever the result type (MathPrecision::sumTerm: only their error
// relative to the sum, which has a term of 1, counts); the rescaling of the
// running sum and the f32 softmax's outputs keep math.exp.
// CHECK-LABEL: func.func @softmax_streamed_f32
// CHECK: gpu.launch
// CHECK: scf.for
// CHECK: math.exp %{{.+}} : f32
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: gpu.all_reduce maximumf
// CHECK: gpu.all_reduce add
// CHECK: scf.for
// CHECK-NOT: approx.ftz
// CHECK: math.exp %{{.+}} : vector<4xf32>
// CHECK-NOT: approx.ftz
// CHECK: gpu.terminator
func.func @softmax_streamed_f32(%x: tensor<256x?xf32>) -> tensor<256x?xf32> {
  %0 = fusion.softmax %x axis = 1 : tensor<256x?xf32>
  return %0 : tensor<256x?xf32>
}

// -----

// CHECK-LABEL: func.func @logsumexp_streamed_f32
// CHECK: gpu.launch
// CHECK: scf.for
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: gpu.all_reduce maximumf
// CHECK: gpu.all_reduce add
// CHECK: math.log
// CHECK: gpu.terminator
// PTX-LABEL: gpu.binary @logsumexp_streamed_f32_k0_module
// PTX-SAME: ex2.approx.ftz.f32
func.func @logsumexp_streamed_f32(%x: tensor<256x?xf32>) -> tensor<256xf32> {
  %0 = fusion.logsumexp %x axis = 1 : tensor<256x?xf32> -> tensor<256xf32>
  return %0 : tensor<256xf32>
}

// -----

// A divisor every lane shares (a row's value splat over a vector): its
// IEEE reciprocal once, of the divisor scaled by a power of two that keeps
// the reciprocal normal, then two products a lane, with no div.full.
// CHECK-LABEL: func.func @div_rows_f32
// CHECK: gpu.launch
// CHECK: %[[D:.+]] = memref.load
// CHECK: math.absf %[[D]]
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpf olt
// CHECK: arith.select
// CHECK: %[[K:.+]] = arith.select
// CHECK: %[[DK:.+]] = arith.mulf %[[D]], %[[K]] : f32
// CHECK: %[[R:.+]] = arith.divf %{{.+}}, %[[DK]] : f32
// CHECK-DAG: %[[RV:.+]] = vector.broadcast %[[R]]
// CHECK-DAG: %[[KV:.+]] = vector.broadcast %[[K]]
// CHECK: %[[XK:.+]] = arith.mulf %{{.+}}, %[[KV]] : vector<4xf32>
// CHECK: %[[Q:.+]] = arith.mulf %[[XK]], %[[RV]] : vector<4xf32>
// CHECK: vector.store %[[Q]]
// CHECK-NOT: llvm.nvvm.div.full
// CHECK: gpu.terminator
// PTX-LABEL: gpu.binary @div_rows_f32_k0_module
// PTX-NOT: div.full
// PTX-SAME: rcp.rn.f32
// PTX-NOT: div.full
func.func @div_rows_f32(%x: tensor<64x1024xf32>, %y: tensor<64x1xf32>) -> tensor<64x1024xf32> {
  %0 = fusion.div %x, %y : (tensor<64x1024xf32>, tensor<64x1xf32>) -> tensor<64x1024xf32>
  return %0 : tensor<64x1024xf32>
}

// -----

// tanh whose result reaches only bf16 values (a bf16 tanh; an f32 tanh
// scaled and converted to bf16, as a soft-cap's) is LLVM's tanh marked afn,
// PTX's tanh.approx.f32: its relative error (2^-10.987) is at most an
// eighth of bf16's spacing. f16's spacing is as fine as that error, and an
// f32 result needs the accurate form: both keep math.tanh (libdevice).
// CHECK-LABEL: func.func @tanh_bf16
// CHECK: gpu.launch
// CHECK: llvm.intr.tanh(%{{.+}}) {fastmathFlags = #llvm.fastmath<afn>}
// CHECK: gpu.terminator
// CHECK-LABEL: func.func @softcap_f32_to_bf16
// CHECK: gpu.launch
// CHECK: llvm.intr.tanh(%{{.+}}) {fastmathFlags = #llvm.fastmath<afn>}
// CHECK: gpu.terminator
// CHECK-LABEL: func.func @tanh_f16
// CHECK: gpu.launch
// CHECK-NOT: llvm.intr.tanh
// CHECK: math.tanh
// CHECK: gpu.terminator
// CHECK-LABEL: func.func @tanh_bf16_and_f16
// CHECK: gpu.launch
// CHECK-NOT: llvm.intr.tanh
// CHECK: math.tanh
// CHECK: gpu.terminator
// CHECK-LABEL: func.func @tanh_f32
// CHECK: gpu.launch
// CHECK-NOT: llvm.intr.tanh
// CHECK: math.tanh
// CHECK: gpu.terminator
// PTX-LABEL: gpu.binary @tanh_bf16_k0_module
// PTX-SAME: tanh.approx.f32
// PTX-LABEL: gpu.binary @softcap_f32_to_bf16_k0_module
// PTX-SAME: tanh.approx.f32
// PTX-LABEL: gpu.binary @tanh_f16_k0_module
// PTX-NOT: tanh.approx
// PTX-LABEL: gpu.binary @tanh_bf16_and_f16_k0_module
// PTX-NOT: tanh.approx
// PTX-LABEL: gpu.binary @tanh_f32_k0_module
// PTX-NOT: tanh.approx
func.func @tanh_bf16(%x: tensor<4096xbf16>) -> tensor<4096xbf16> {
  %0 = fusion.tanh %x : tensor<4096xbf16>
  return %0 : tensor<4096xbf16>
}
func.func @softcap_f32_to_bf16(%x: tensor<4096xf32>) -> tensor<4096xbf16> {
  %c = fusion.constant dense<3.000000e+01> : tensor<f32>
  %r = fusion.constant dense<0.0333333351> : tensor<f32>
  %0 = fusion.mul %x, %r : (tensor<4096xf32>, tensor<f32>) -> tensor<4096xf32>
  %1 = fusion.tanh %0 : tensor<4096xf32>
  %2 = fusion.mul %1, %c : (tensor<4096xf32>, tensor<f32>) -> tensor<4096xf32>
  %3 = fusion.convert %2 : tensor<4096xf32> to tensor<4096xbf16>
  return %3 : tensor<4096xbf16>
}
func.func @tanh_f16(%x: tensor<4096xf16>) -> tensor<4096xf16> {
  %0 = fusion.tanh %x : tensor<4096xf16>
  return %0 : tensor<4096xf16>
}
func.func @tanh_bf16_and_f16(%x: tensor<4096xf32>) -> (tensor<4096xbf16>, tensor<4096xf16>) {
  %0 = fusion.tanh %x : tensor<4096xf32>
  %1 = fusion.convert %0 : tensor<4096xf32> to tensor<4096xbf16>
  %2 = fusion.convert %0 : tensor<4096xf32> to tensor<4096xf16>
  return %1, %2 : tensor<4096xbf16>, tensor<4096xf16>
}
func.func @tanh_f32(%x: tensor<4096xf32>) -> tensor<4096xf32> {
  %0 = fusion.tanh %x : tensor<4096xf32>
  return %0 : tensor<4096xf32>
}
