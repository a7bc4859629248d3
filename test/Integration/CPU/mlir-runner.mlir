// The CPU path runs under mlir-runner with MLIR's runner utilities: a main
// calls the (destination-passing after lowering) function and prints the
// result; with count-traffic, Fusion's counter prints each kernel's bytes.
// The four-op chain on 4 f32: fused, one kernel moves 3 * 4 * 4 = 48 bytes;
// unfused, four kernels move 9 * 4 * 4 = 144.

// RUN: fusion-opt %s --fusion-to-cpu="count-traffic=true" \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:   -shared-libs=%mlir_lib_dir/libmlir_runner_utils.so,%mlir_lib_dir/libmlir_c_runner_utils.so,%fusion_lib_dir/libfusion_cpu_runtime.so \
// RUN: | FileCheck %s --check-prefixes=CHECK,FUSED
// RUN: fusion-opt %s --fusion-to-cpu="fuse=false count-traffic=true" \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:   -shared-libs=%mlir_lib_dir/libmlir_runner_utils.so,%mlir_lib_dir/libmlir_c_runner_utils.so,%fusion_lib_dir/libfusion_cpu_runtime.so \
// RUN: | FileCheck %s --check-prefixes=CHECK,UNFUSED

// relu(2x + 1) * w for x = [1, -2, 3, 0.5], w = [10, 10, -1, 4].
// CHECK: rank = 1 offset = 0 sizes = [4] strides = [1] data =
// CHECK-NEXT: [30,  0,  -7,  8]
// FUSED: fusion traffic: kernel 0 read 32 B, wrote 16 B
// FUSED-NEXT: fusion traffic: total 48 B (read 32 B, wrote 16 B)
// UNFUSED-COUNT-4: fusion traffic: kernel {{[0-3]}} read
// UNFUSED-NEXT: fusion traffic: total 144 B (read 80 B, wrote 64 B)

func.func @chain(%x: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  %two = fusion.constant dense<2.0> : tensor<f32>
  %one = fusion.constant dense<1.0> : tensor<f32>
  %zero = fusion.constant dense<0.0> : tensor<f32>
  %0 = fusion.mul %x, %two : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = fusion.add %0, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %2 = fusion.max %1, %zero : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %3 = fusion.mul %2, %w : tensor<4xf32>
  return %3 : tensor<4xf32>
}

func.func private @printMemrefF32(memref<*xf32>)
func.func private @fusion_traffic_report()

func.func @main() {
  %x = arith.constant dense<[1.0, -2.0, 3.0, 0.5]> : tensor<4xf32>
  %w = arith.constant dense<[10.0, 10.0, -1.0, 4.0]> : tensor<4xf32>
  %r = call @chain(%x, %w) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %m = bufferization.to_buffer %r : tensor<4xf32> to memref<4xf32>
  %u = memref.cast %m : memref<4xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  call @fusion_traffic_report() : () -> ()
  return
}
