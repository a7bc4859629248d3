// With plans, the report counts bytes as the plan moves them.
// RUN: fusion-opt %s --fusion-pipeline --fusion-plan-kernels --fusion-report="format=json output=%t.json" -o /dev/null
// RUN: FileCheck %s --input-file=%t.json

// Softmax over rows of 262144 f32: 8 parts of 8192 vectors would be 16
// vectors a thread at 512 threads, more than a thread of so large a block
// holds, so one block streams the row and each of its two passes (max and
// sum together, write) reads it: 2 x 8 MiB read, 8 MiB written.
// CHECK-LABEL: "kernel_list"
// CHECK:        "bytes_read": 16777216,
// CHECK-NEXT:   "bytes_written": 8388608,
// CHECK:        "plan": "rows/streamed",
// CHECK:      "name": "streamed_softmax",
func.func @streamed_softmax(%x: tensor<8x262144xf32>) -> tensor<8x262144xf32> {
  %0 = fusion.softmax %x axis = 1 : tensor<8x262144xf32>
  return %0 : tensor<8x262144xf32>
}

// Rows of 4096 are held: read once.
// CHECK-LABEL: "kernel_list"
// CHECK:        "bytes_read": 1048576,
// CHECK-NEXT:   "bytes_written": 1048576,
// CHECK:        "plan": "rows/registers",
// CHECK:      "name": "held_softmax",
func.func @held_softmax(%x: tensor<64x4096xf32>) -> tensor<64x4096xf32> {
  %0 = fusion.softmax %x axis = 1 : tensor<64x4096xf32>
  return %0 : tensor<64x4096xf32>
}
