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
    intact_before_ = guard_zone(name_, false, guard_);
    intact_after_ = guard_zone(name_, true, guard_);
    CUDA_CHECK(cudaMemcpy(base_, intact_before_.data(), guard_, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(user_ + bytes(), intact_after_.data(), guard_, cudaMemcpyHostToDevice));
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
      intact_before_(std::move(other.intact_before_)),
      intact_after_(std::move(other.intact_after_)),
      seen_before_(std::move(other.seen_before_)),
      seen_after_(std::move(other.seen_after_)),
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
  with_damage_seen(intact_before_, seen_before_, before);
  with_damage_seen(intact_after_, seen_after_, after);
}

void GuardedBuffer::keep_guard_damage() noexcept {
  if (guard_ == 0 || !base_) return;
  try {
    std::vector<std::uint8_t> before(guard_), after(guard_);
    if (cudaMemcpy(before.data(), base_, guard_, cudaMemcpyDeviceToHost) != cudaSuccess ||
        cudaMemcpy(after.data(), user_ + bytes(), guard_, cudaMemcpyDeviceToHost) != cudaSuccess)
      return;  // the error stays for the launcher's own checks and run_launcher's to report
    keep_damage(intact_before_, before, seen_before_);
    keep_damage(intact_after_, after, seen_after_);
  } catch (...) {
    // Out of host memory: the zones are read again after the launcher.
  }
}

std::vector<std::string> GuardedBuffer::guard_damage() const {
  if (guard_ == 0) return {};
  std::vector<std::uint8_t> before, after;
  guard_zones(before, after);
  return describe_guard_damage(name_, elem_size_, count_, before, after);
}

}  // namespace cudalab
