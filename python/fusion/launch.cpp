//===- launch.cpp - Known calls of compiled functions, made from C++ ------===//
//
// The hot path of a call with torch tensors (fusion.launch). A call whose
// inputs have the dtypes, shapes, strides and device of a call the Python
// path checked before ("known") needs no checks and no size arithmetic:
// this allocates its outputs with PyTorch's allocator, fills the memref
// descriptors, tells the runtime the current stream and calls the compiled
// entry, without a Python frame or ctypes in between. What it does not know
// (a new signature, a buffer off a vector boundary, an output it cannot
// vouch for) it hands back to the Python path, which checks, copies or
// raises, and then remembers the call.
//
// Built on first use against the PyTorch at hand (torch.utils.cpp_extension);
// a plain CPython module, so a call costs no pybind11 argument parsing.
//
//===----------------------------------------------------------------------===//

#include <ATen/EmptyTensor.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/csrc/Dtype.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/python_variable.h>

#include <Python.h>

#include <array>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace {

/// Every buffer must start on a vector boundary: the kernels read and write
/// whole vectors of up to this many bytes from the start (fusion.cuda).
constexpr uintptr_t kVectorBytes = 16;

/// The most memref arguments (inputs and outputs) an entry may take here;
/// a function with more is called through ctypes.
constexpr size_t kMaxArguments = 32;

/// The remembered calls per function, as fusion.cuda kept them in Python.
constexpr size_t kMaxKnown = 256;

using EntryCaller = void (*)(void *entry, void **arguments);

/// Calls `entry` with `N` pointer arguments (the `_mlir_ciface_` ABI: one
/// pointer to a memref descriptor per argument).
template <size_t... I>
void callWith(void *entry, void **arguments, std::index_sequence<I...>) {
  using Entry = void (*)(decltype((void)I, static_cast<void *>(nullptr))...);
  reinterpret_cast<Entry>(entry)(arguments[I]...);
}

template <size_t N> void callEntry(void *entry, void **arguments) {
  callWith(entry, arguments, std::make_index_sequence<N>());
}

template <size_t... N>
constexpr std::array<EntryCaller, sizeof...(N)>
makeCallers(std::index_sequence<N...>) {
  return {&callEntry<N>...};
}

constexpr auto kCallers =
    makeCallers(std::make_index_sequence<kMaxArguments + 1>());

/// A call the Python path checked: what its inputs were, and what it made.
struct KnownCall {
  /// Per input: dtype, device type and index, rank, sizes, strides.
  std::vector<int64_t> signature;
  std::vector<std::vector<int64_t>> outputShapes;
  c10::Device device;
};

/// One compiled function: its entry, its runtime and its known calls.
struct Function {
  void *entry;
  /// fusion_cuda_set_stream, or null for the CPU target.
  void (*setStream)(void *);
  /// The runtime's first error since it was cleared (null: none kept).
  const char *(*lastError)();
  std::vector<int> ranks;
  size_t numInputs;
  std::vector<at::ScalarType> outputDtypes;
  std::vector<KnownCall> known;
  /// Where the last hit was: calls repeat.
  size_t last = 0;
};

void appendSignature(std::vector<int64_t> &signature, const at::Tensor &t) {
  signature.push_back(static_cast<int64_t>(t.scalar_type()));
  signature.push_back(static_cast<int64_t>(t.device().type()));
  signature.push_back(t.device().index());
  signature.push_back(t.dim());
  for (int64_t size : t.sizes())
    signature.push_back(size);
  for (int64_t stride : t.strides())
    signature.push_back(stride);
}

bool isAligned(const at::Tensor &t) {
  return reinterpret_cast<uintptr_t>(t.data_ptr()) % kVectorBytes == 0;
}

/// The tensors of a tuple (borrowed), or false if one is not a tensor.
bool unpackTensors(PyObject *tuple, std::vector<const at::Tensor *> &tensors) {
  Py_ssize_t count = PyTuple_GET_SIZE(tuple);
  for (Py_ssize_t i = 0; i < count; ++i) {
    PyObject *item = PyTuple_GET_ITEM(tuple, i);
    if (!THPVariable_Check(item))
      return false;
    tensors.push_back(&THPVariable_Unpack(item));
  }
  return true;
}

/// The outputs a caller passed are usable as this known call's: its dtypes,
/// shapes and device, contiguous, on vector boundaries.
bool outputsFit(const Function &function, const KnownCall &call,
                const std::vector<const at::Tensor *> &outputs) {
  if (outputs.size() != call.outputShapes.size())
    return false;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const at::Tensor &out = *outputs[i];
    if (out.scalar_type() != function.outputDtypes[i] ||
        out.device() != call.device || out.sizes() != call.outputShapes[i] ||
        !out.is_contiguous() || !isAligned(out))
      return false;
  }
  return true;
}

/// A new contiguous tensor from PyTorch's allocator for `device` (its
/// caching allocator on CUDA), as at::empty makes it but without the
/// dispatcher: that costs a decode step more than the launch.
at::Tensor allocate(c10::IntArrayRef sizes, at::ScalarType dtype,
                    c10::Device device) {
  c10::DispatchKeySet keys(
      c10::computeDispatchKey(dtype, c10::kStrided, device));
  return at::detail::empty_generic(sizes, c10::GetAllocator(device.type()),
                                   keys, dtype, std::nullopt);
}

/// The outputs of a known call. Outputs of at most kSharedBytes in all
/// share one allocation (each on a kSharedAlignment boundary of it): an
/// allocation, and its free, cost a launch-bound call about as much as the
/// launch. Larger ones are allocated apart, so that each is freed when it
/// dies.
void allocateOutputs(const Function &function, const KnownCall &call,
                     std::vector<at::Tensor> &made) {
  constexpr size_t kSharedBytes = 1 << 20;
  constexpr size_t kSharedAlignment = 256;
  c10::DeviceGuard guard(call.device);
  size_t numOutputs = call.outputShapes.size();
  made.reserve(numOutputs);
  std::vector<size_t> offsets;
  size_t total = 0;
  for (size_t i = 0; i < numOutputs; ++i) {
    offsets.push_back(total);
    size_t bytes = c10::elementSize(function.outputDtypes[i]);
    for (int64_t size : call.outputShapes[i])
      bytes *= static_cast<size_t>(size);
    total +=
        (bytes + kSharedAlignment - 1) / kSharedAlignment * kSharedAlignment;
  }
  if (numOutputs < 2 || total > kSharedBytes) {
    for (size_t i = 0; i < numOutputs; ++i)
      made.push_back(allocate(call.outputShapes[i], function.outputDtypes[i],
                              call.device));
    return;
  }
  at::Tensor buffer =
      allocate({static_cast<int64_t>(total)}, at::kByte, call.device);
  for (size_t i = 0; i < numOutputs; ++i) {
    at::ScalarType dtype = function.outputDtypes[i];
    at::Tensor out = at::detail::make_tensor<c10::TensorImpl>(
        c10::Storage(buffer.storage()), buffer.key_set(),
        c10::scalarTypeToTypeMeta(dtype));
    c10::TensorImpl *impl = out.unsafeGetTensorImpl();
    impl->set_storage_offset(
        static_cast<int64_t>(offsets[i] / c10::elementSize(dtype)));
    impl->set_sizes_contiguous(call.outputShapes[i]);
    made.push_back(std::move(out));
  }
}

Function *getFunction(PyObject *capsule) {
  return static_cast<Function *>(
      PyCapsule_GetPointer(capsule, "fusion.Function"));
}

void destroyFunction(PyObject *capsule) { delete getFunction(capsule); }

/// function(entry, set_stream, last_error, ranks, num_inputs, output_dtypes)
/// -> a handle: addresses as ints (0 for none), ranks of every argument,
/// torch dtypes of the outputs.
PyObject *makeFunction(PyObject *, PyObject *args) {
  unsigned long long entry, setStream, lastError;
  PyObject *ranks, *dtypes;
  Py_ssize_t numInputs;
  if (!PyArg_ParseTuple(args, "KKKO!nO!", &entry, &setStream, &lastError,
                        &PyTuple_Type, &ranks, &numInputs, &PyTuple_Type,
                        &dtypes))
    return nullptr;
  auto function = std::make_unique<Function>();
  function->entry = reinterpret_cast<void *>(entry);
  function->setStream = reinterpret_cast<void (*)(void *)>(setStream);
  function->lastError = reinterpret_cast<const char *(*)()>(lastError);
  function->numInputs = static_cast<size_t>(numInputs);
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(ranks); ++i) {
    long rank = PyLong_AsLong(PyTuple_GET_ITEM(ranks, i));
    if (rank == -1 && PyErr_Occurred())
      return nullptr;
    function->ranks.push_back(static_cast<int>(rank));
  }
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(dtypes); ++i) {
    PyObject *dtype = PyTuple_GET_ITEM(dtypes, i);
    if (!THPDtype_Check(dtype)) {
      PyErr_SetString(PyExc_TypeError, "output dtypes must be torch dtypes");
      return nullptr;
    }
    function->outputDtypes.push_back(
        reinterpret_cast<THPDtype *>(dtype)->scalar_type);
  }
  size_t numArguments = function->ranks.size();
  if (numArguments > kMaxArguments ||
      numArguments != function->numInputs + function->outputDtypes.size()) {
    Py_RETURN_NONE; // not served here: the Python path calls it
  }
  return PyCapsule_New(function.release(), "fusion.Function", destroyFunction);
}

/// remember(handle, inputs, output_shapes, device): a call the Python path
/// checked, with the shapes and device of the outputs it made.
PyObject *remember(PyObject *, PyObject *args) {
  HANDLE_TH_ERRORS
  PyObject *capsule, *inputs, *shapes, *deviceObject;
  if (!PyArg_ParseTuple(args, "OO!O!O", &capsule, &PyTuple_Type, &inputs,
                        &PyTuple_Type, &shapes, &deviceObject))
    return nullptr;
  Function *function = getFunction(capsule);
  if (!function)
    return nullptr;
  std::vector<const at::Tensor *> tensors;
  if (!unpackTensors(inputs, tensors) || tensors.size() != function->numInputs)
    Py_RETURN_NONE;
  KnownCall call{{}, {}, c10::Device(c10::DeviceType::CPU)};
  for (const at::Tensor *t : tensors)
    appendSignature(call.signature, *t);
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(shapes); ++i) {
    PyObject *shape = PyTuple_GET_ITEM(shapes, i);
    if (!PyTuple_Check(shape)) {
      PyErr_SetString(PyExc_TypeError, "output shapes must be tuples");
      return nullptr;
    }
    std::vector<int64_t> sizes;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(shape); ++k) {
      sizes.push_back(PyLong_AsLongLong(PyTuple_GET_ITEM(shape, k)));
      if (PyErr_Occurred())
        return nullptr;
    }
    call.outputShapes.push_back(std::move(sizes));
  }
  if (call.outputShapes.size() != function->outputDtypes.size()) {
    PyErr_SetString(PyExc_ValueError, "one shape per output expected");
    return nullptr;
  }
  // The device as "type:index" or "type" (str(torch.device)).
  PyObject *text = PyObject_Str(deviceObject);
  if (!text)
    return nullptr;
  call.device = c10::Device(PyUnicode_AsUTF8(text));
  Py_DECREF(text);
  if (function->known.size() >= kMaxKnown)
    function->known.clear();
  function->known.push_back(std::move(call));
  Py_RETURN_NONE;
  END_HANDLE_TH_ERRORS
}

/// call(handle, inputs, outputs or None) -> the outputs as a tuple; None
/// when the call is not a known one (the Python path takes it); False when
/// the runtime reported an error (the caller raises it).
PyObject *call(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  if (nargs != 3 || !PyTuple_Check(args[1])) {
    PyErr_SetString(PyExc_TypeError, "call(handle, inputs, outputs)");
    return nullptr;
  }
  Function *function = getFunction(args[0]);
  if (!function)
    return nullptr;
  std::vector<const at::Tensor *> inputs, given;
  inputs.reserve(function->numInputs);
  if (!unpackTensors(args[1], inputs) || inputs.size() != function->numInputs)
    Py_RETURN_NONE;
  bool outputsGiven = args[2] != Py_None;
  if (outputsGiven &&
      (!PyTuple_Check(args[2]) || !unpackTensors(args[2], given)))
    Py_RETURN_NONE;

  std::vector<int64_t> signature;
  signature.reserve(inputs.size() * 12);
  for (const at::Tensor *t : inputs) {
    if (!isAligned(*t))
      Py_RETURN_NONE; // the Python path copies it onto a boundary
    appendSignature(signature, *t);
  }
  const KnownCall *known = nullptr;
  auto &calls = function->known;
  for (size_t k = 0; k < calls.size() && !known; ++k) {
    size_t at = (function->last + k) % calls.size();
    if (calls[at].signature == signature) {
      known = &calls[at];
      function->last = at;
    }
  }
  if (!known || (outputsGiven && !outputsFit(*function, *known, given)))
    Py_RETURN_NONE;

  std::vector<at::Tensor> made;
  std::vector<const at::Tensor *> outputs = given;
  if (!outputsGiven) {
    allocateOutputs(*function, *known, made);
    for (const at::Tensor &t : made)
      outputs.push_back(&t);
  }

  // The memref descriptors: allocated, aligned, offset, sizes, strides.
  std::vector<int64_t> descriptors;
  size_t words = 0;
  for (int rank : function->ranks)
    words += 3 + 2 * static_cast<size_t>(rank);
  descriptors.resize(words);
  std::array<void *, kMaxArguments> pointers;
  size_t at = 0, index = 0;
  auto fill = [&](const at::Tensor &t) {
    pointers[index++] = &descriptors[at];
    auto address = reinterpret_cast<int64_t>(t.data_ptr());
    descriptors[at++] = address;
    descriptors[at++] = address;
    descriptors[at++] = 0;
    for (int64_t size : t.sizes())
      descriptors[at++] = size;
    for (int64_t stride : t.strides())
      descriptors[at++] = stride;
  };
  for (const at::Tensor *t : inputs)
    fill(*t);
  for (const at::Tensor *t : outputs)
    fill(*t);

  void *stream = nullptr;
  if (function->setStream && known->device.is_cuda())
    stream = c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA)
                 ->getStream(known->device)
                 .native_handle();
  const char *error = nullptr;
  Py_BEGIN_ALLOW_THREADS;
  if (function->setStream)
    function->setStream(stream);
  kCallers[index](function->entry, pointers.data());
  if (function->lastError)
    error = function->lastError();
  Py_END_ALLOW_THREADS;
  if (error)
    Py_RETURN_FALSE;

  PyObject *result = PyTuple_New(static_cast<Py_ssize_t>(outputs.size()));
  if (!result)
    return nullptr;
  for (size_t i = 0; i < outputs.size(); ++i) {
    PyObject *tensor;
    if (outputsGiven) {
      tensor = PyTuple_GET_ITEM(args[2], static_cast<Py_ssize_t>(i));
      Py_INCREF(tensor);
    } else {
      tensor = THPVariable_Wrap(std::move(made[i]));
    }
    PyTuple_SET_ITEM(result, static_cast<Py_ssize_t>(i), tensor);
  }
  return result;
  END_HANDLE_TH_ERRORS
}

PyMethodDef methods[] = {

    {"function", makeFunction, METH_VARARGS,
     "function(entry, set_stream, last_error, ranks, num_inputs, "
     "output_dtypes): a handle, or None if calls are not served here"},
    {"remember", remember, METH_VARARGS,
     "remember(handle, inputs, output_shapes, device): a checked call"},
    {"call", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(call)),
     METH_FASTCALL,
     "call(handle, inputs, outputs): the outputs; None if not a known call, "
     "False if the runtime reported an error"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef moduleDef = {PyModuleDef_HEAD_INIT, "fusion_launch",
                         "Known calls of compiled functions, made from C++.",
                         -1, methods};

} // namespace

PyMODINIT_FUNC PyInit_fusion_launch() { return PyModule_Create(&moduleDef); }
