// Helpers of simt's tests.
#pragma once

#include <cuda_runtime_api.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "simt/simt.h"

template <class T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t n) : n_(n) {
    if (cudaMalloc(&p_, n * sizeof(T)) != cudaSuccess) throw std::runtime_error("cudaMalloc failed");
  }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }
  ~DeviceBuffer() { cudaFree(p_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* get() const { return p_; }
  void upload(const std::vector<T>& host) {
    cudaMemcpy(p_, host.data(), n_ * sizeof(T), cudaMemcpyHostToDevice);
  }
  void fill(int byte_or_value) {
    std::vector<T> v(n_, static_cast<T>(byte_or_value));
    upload(v);
  }
  std::vector<T> download() const {
    std::vector<T> v(n_);
    cudaMemcpy(v.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost);
    return v;
  }

 private:
  T* p_ = nullptr;
  std::size_t n_;
};

// Sets a schedule for a scope, then back to in order.
struct Schedule {
  explicit Schedule(const std::string& spec) { simt::set_schedule(spec); }
  ~Schedule() { simt::set_schedule("inorder"); }
};
