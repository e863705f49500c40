#include "op/record_pool.hpp"

#include <utility>

#include "tileops/manifest/signature_plan.hpp"

namespace tileops::detail {

std::unique_ptr<manifest::SignatureCall> RecordPool::take() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (spare_) return std::move(spare_);
  }
  return manifest::SignaturePlan::new_record();
}

std::shared_ptr<manifest::SignatureCall> RecordPool::publish(
    std::unique_ptr<manifest::SignatureCall> record) {
  return std::shared_ptr<manifest::SignatureCall>(
      record.release(), [pool = shared_from_this()](manifest::SignatureCall* r) {
        pool->give_back(std::unique_ptr<manifest::SignatureCall>(r));
      });
}

void RecordPool::give_back(std::unique_ptr<manifest::SignatureCall> record) noexcept {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!spare_) {
      spare_ = std::move(record);
      return;
    }
  }
  // `record` is deleted here, outside the lock.
}

}  // namespace tileops::detail
