// cuda_runtime_api.h (cudalab CPU mode): the part of the CUDA runtime API
// that cudalab's harness and its labs use, implemented on the host by simt
// (simt/src). With simt/include first on the include path, this file stands
// in for the CUDA toolkit's; see simt/README.md for what CPU mode models.
//
// Same names, same enum values, same error strings as CUDA 13.0, so that
// code written against the real runtime compiles unchanged and the messages
// built from cudaGetErrorString read the same. All calls are synchronous.
#pragma once

#include <cstddef>

#include "driver_types.h"
#include "vector_types.h"

#define CUDART_VERSION 13000
#define CUDALAB_SIMT 1  // this is simt's runtime, not NVIDIA's

// --- errors
const char* cudaGetErrorString(cudaError_t error);
const char* cudaGetErrorName(cudaError_t error);
cudaError_t cudaGetLastError();
cudaError_t cudaPeekAtLastError();

// --- device
cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaGetDevice(int* device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device);
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device);
cudaError_t cudaDriverGetVersion(int* version);
cudaError_t cudaRuntimeGetVersion(int* version);
cudaError_t cudaDeviceSynchronize();
cudaError_t cudaDeviceReset();

// --- memory (device memory is host memory; see simt/src/memory.cpp)
cudaError_t cudaMalloc(void** ptr, size_t bytes);
cudaError_t cudaMallocManaged(void** ptr, size_t bytes, unsigned flags = cudaMemAttachGlobal);
cudaError_t cudaMallocHost(void** ptr, size_t bytes);
cudaError_t cudaHostAlloc(void** ptr, size_t bytes, unsigned flags);
cudaError_t cudaFree(void* ptr);
cudaError_t cudaFreeHost(void* ptr);
cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream = 0);
cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                         size_t height, cudaMemcpyKind kind);
cudaError_t cudaMemset(void* ptr, int value, size_t bytes);
cudaError_t cudaMemsetAsync(void* ptr, int value, size_t bytes, cudaStream_t stream = 0);
cudaError_t cudaMemGetInfo(size_t* free, size_t* total);

// Typed conveniences of the CUDA C++ API.
template <class T>
inline cudaError_t cudaMalloc(T** ptr, size_t bytes) {
  return cudaMalloc(reinterpret_cast<void**>(ptr), bytes);
}
template <class T>
inline cudaError_t cudaMallocManaged(T** ptr, size_t bytes, unsigned flags = cudaMemAttachGlobal) {
  return cudaMallocManaged(reinterpret_cast<void**>(ptr), bytes, flags);
}
template <class T>
inline cudaError_t cudaMallocHost(T** ptr, size_t bytes) {
  return cudaMallocHost(reinterpret_cast<void**>(ptr), bytes);
}

// __constant__ and __device__ variables are ordinary host variables here.
namespace simt {
cudaError_t copy_symbol(void* symbol, size_t symbol_bytes, void* dst, const void* src, size_t count,
                        size_t offset, bool to_symbol);
}
template <class T>
inline cudaError_t cudaMemcpyToSymbol(const T& symbol, const void* src, size_t count, size_t offset = 0,
                                      cudaMemcpyKind kind = cudaMemcpyHostToDevice) {
  (void)kind;
  return simt::copy_symbol(const_cast<void*>(static_cast<const volatile void*>(&symbol)), sizeof(T), nullptr,
                           src, count, offset, true);
}
template <class T>
inline cudaError_t cudaMemcpyFromSymbol(void* dst, const T& symbol, size_t count, size_t offset = 0,
                                        cudaMemcpyKind kind = cudaMemcpyDeviceToHost) {
  (void)kind;
  return simt::copy_symbol(const_cast<void*>(static_cast<const volatile void*>(&symbol)), sizeof(T), dst,
                           nullptr, count, offset, false);
}

// --- streams and events (one in-order queue; everything has completed on return)
cudaError_t cudaStreamCreate(cudaStream_t* stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned flags);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaEventCreate(cudaEvent_t* event);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned flags);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = 0);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventQuery(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end);

// --- kernels
cudaError_t cudaFuncSetAttribute(const void* func, cudaFuncAttribute attr, int value);
template <class T>
inline cudaError_t cudaFuncSetAttribute(T* entry, cudaFuncAttribute attr, int value) {
  return cudaFuncSetAttribute(reinterpret_cast<const void*>(entry), attr, value);
}
cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr, const void* func);
template <class T>
inline cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr, T* entry) {
  return cudaFuncGetAttributes(attr, reinterpret_cast<const void*>(entry));
}
