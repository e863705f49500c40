#include "op/record_pool.hpp"

#include <utility>

#include "tileops/manifest/signature_plan.hpp"

namespace tileops::detail {

std::unique_ptr<manifest::SignatureCall> RecordPool::take() {
  if (manifest::SignatureCall* spare = spare_.exchange(nullptr, std::memory_order_acquire))
    return std::unique_ptr<manifest::SignatureCall>(spare);
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
  manifest::SignatureCall* empty = nullptr;
  if (spare_.compare_exchange_strong(empty, record.get(), std::memory_order_release,
                                     std::memory_order_relaxed))
    record.release();  // the pool's spare now
  // Otherwise `record` is deleted here: the pool keeps one spare.
}

}  // namespace tileops::detail
