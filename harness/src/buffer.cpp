#include "cudalab/buffer.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "cudalab/check.h"

namespace cudalab {

GuardedBuffer::GuardedBuffer(std::string name, std::size_t count, std::size_t elem_size)
    : name_(std::move(name)), count_(count), elem_size_(elem_size), guard_(guard_bytes()) {
  const std::size_t total = bytes() + 2 * guard_;
  void* p = nullptr;
  const cudaError_t err = cudaMalloc(&p, total == 0 ? 1 : total);
  if (err != cudaSuccess) {
    cudaGetLastError();
    throw CudaError(err, fmt::format("cudaMalloc({} bytes for {})", total, name_).c_str(), __FILE__,
                    __LINE__);
  }
  base_ = static_cast<unsigned char*>(p);
  user_ = base_ + guard_;
  if (guard_ > 0) {
    const std::vector<std::uint8_t> before = guard_zone(name_, false, guard_),
                                    after = guard_zone(name_, true, guard_);
    CUDA_CHECK(cudaMemcpy(base_, before.data(), guard_, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(user_ + bytes(), after.data(), guard_, cudaMemcpyHostToDevice));
  }
}

GuardedBuffer::~GuardedBuffer() {
  if (base_) cudaFree(base_);  // may fail after a sticky error: nothing to do then
}

GuardedBuffer::GuardedBuffer(GuardedBuffer&& other) noexcept
    : name_(std::move(other.name_)),
      count_(other.count_),
      elem_size_(other.elem_size_),
      guard_(other.guard_),
      base_(other.base_),
      user_(other.user_) {
  other.base_ = other.user_ = nullptr;
}

void GuardedBuffer::upload(const void* host) {
  CUDA_CHECK(cudaMemcpy(user_, host, bytes(), cudaMemcpyHostToDevice));
}

void GuardedBuffer::download(void* host) const {
  CUDA_CHECK(cudaMemcpy(host, user_, bytes(), cudaMemcpyDeviceToHost));
}

void GuardedBuffer::poison() {
  CUDA_CHECK(cudaMemset(user_, kPoisonByte, bytes()));
}

void GuardedBuffer::guard_zones(std::vector<std::uint8_t>& before, std::vector<std::uint8_t>& after) const {
  before.assign(guard_, 0);
  after.assign(guard_, 0);
  if (guard_ == 0) return;
  CUDA_CHECK(cudaMemcpy(before.data(), base_, guard_, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(after.data(), user_ + bytes(), guard_, cudaMemcpyDeviceToHost));
}

std::vector<std::string> GuardedBuffer::guard_damage() const {
  if (guard_ == 0) return {};
  std::vector<std::uint8_t> before, after;
  guard_zones(before, after);
  return describe_guard_damage(name_, elem_size_, count_, before, after);
}

}  // namespace cudalab
