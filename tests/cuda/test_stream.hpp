// TestStream: a CUDA stream a GPU test owns, made this thread's current stream for cuda:0 while it
// lives (graph capture needs a stream other than the legacy default one).
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <optional>

#include "cuda_testing.hpp"
#include "tileops/core/stream.hpp"

namespace tileops::test_cuda {

class TestStream {
 public:
  TestStream() {
    EXPECT_EQ(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), cudaSuccess);
    guard_.emplace(Stream(gpu(), stream_));
  }
  ~TestStream() {
    guard_.reset();
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
  }
  TestStream(const TestStream&) = delete;
  TestStream& operator=(const TestStream&) = delete;

  cudaStream_t get() const { return stream_; }
  Stream stream() const { return Stream(gpu(), stream_); }

 private:
  cudaStream_t stream_ = nullptr;
  std::optional<StreamGuard> guard_;
};

}  // namespace tileops::test_cuda
