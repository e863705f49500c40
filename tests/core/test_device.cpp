// Device names and parsing; the thread-local current stream per device.
#include <gtest/gtest.h>

#include <thread>
#include <unordered_set>

#include "tileops/core/device.hpp"
#include "tileops/core/error.hpp"
#include "tileops/core/stream.hpp"

namespace tileops {
namespace {

TEST(Device, NamesAndStr) {
  EXPECT_EQ(device_type_name(DeviceType::kCPU), "cpu");
  EXPECT_EQ(device_type_name(DeviceType::kCUDA), "cuda");
  EXPECT_EQ(device_type_name(DeviceType::kMeta), "meta");
  EXPECT_EQ(Device::cpu().str(), "cpu");
  EXPECT_EQ(Device::meta().str(), "meta");
  EXPECT_EQ(Device::cuda().str(), "cuda:0");
  EXPECT_EQ(Device::cuda(7).str(), "cuda:7");
}

TEST(Device, ParsesEverySpelling) {
  EXPECT_EQ(Device::parse("cpu"), Device::cpu());
  EXPECT_EQ(Device::parse("meta"), Device::meta());
  EXPECT_EQ(Device::parse("cuda"), Device::cuda(0));
  EXPECT_EQ(Device::parse("cuda:0"), Device::cuda(0));
  EXPECT_EQ(Device::parse("cuda:12"), Device::cuda(12));
  EXPECT_EQ(Device::parse("cuda:2147483647"), Device::cuda(2147483647));
  for (Device d : {Device::cpu(), Device::meta(), Device::cuda(3)}) {
    EXPECT_EQ(Device::parse(d.str()), d);
  }
}

TEST(Device, RejectsMalformedTextWithItsSpelling) {
  for (const char* text : {"cuda:x", "", "CPU", "gpu", "cuda:", "cuda:-1", "cuda:+1", "cuda:01",
                           "cuda:1 ", " cpu", "cpu:0", "meta:0", "cuda:2147483648", "cuda:0:0"}) {
    try {
      Device::parse(text);
      ADD_FAILURE() << "parsed '" << text << "'";
    } catch (const CheckError& e) {
      EXPECT_EQ(std::string(e.what()), std::string("device: cannot parse '") + text +
                                           "'; expected 'cpu', 'meta', 'cuda' or 'cuda:<index>'");
    }
  }
}

TEST(Device, HashSeparatesTypesAndIndices) {
  std::unordered_set<Device> devices{Device::cpu(), Device::meta(), Device::cuda(0),
                                     Device::cuda(1)};
  EXPECT_EQ(devices.size(), 4u);
  EXPECT_TRUE(devices.count(Device::cuda(1)));
}

int stream_handle_a = 0;
int stream_handle_b = 0;

TEST(Stream, DefaultsToTheNullHandle) {
  EXPECT_EQ(Stream().device(), Device::cpu());
  EXPECT_TRUE(Stream().is_default());
  EXPECT_EQ(current_stream(Device::cuda(3)), Stream::default_for(Device::cuda(3)));
  EXPECT_EQ(current_stream(Device::cpu()).handle(), nullptr);
}

TEST(Stream, GuardsNestAndRestorePerDevice) {
  const Stream a(Device::cuda(0), &stream_handle_a);
  const Stream b(Device::cuda(0), &stream_handle_b);
  const Stream other(Device::cuda(1), &stream_handle_b);
  {
    StreamGuard outer(a);
    EXPECT_EQ(current_stream(Device::cuda(0)), a);
    EXPECT_TRUE(outer.original().is_default());
    {
      StreamGuard inner(b);
      StreamGuard elsewhere(other);
      EXPECT_EQ(current_stream(Device::cuda(0)), b);
      EXPECT_EQ(current_stream(Device::cuda(1)), other);
      EXPECT_EQ(inner.original(), a);
    }
    EXPECT_EQ(current_stream(Device::cuda(0)), a);
    EXPECT_TRUE(current_stream(Device::cuda(1)).is_default());
  }
  EXPECT_TRUE(current_stream(Device::cuda(0)).is_default());
}

TEST(Stream, CurrentStreamIsPerThread) {
  StreamGuard guard(Stream(Device::cuda(0), &stream_handle_a));
  Stream seen_elsewhere(Device::cuda(0), &stream_handle_b);
  std::thread([&] { seen_elsewhere = current_stream(Device::cuda(0)); }).join();
  EXPECT_TRUE(seen_elsewhere.is_default());
  EXPECT_EQ(current_stream(Device::cuda(0)).handle(), &stream_handle_a);
}

TEST(Stream, SetCurrentStreamReplacesTheSlot) {
  const Stream a(Device::cuda(2), &stream_handle_a);
  set_current_stream(a);
  EXPECT_EQ(current_stream(Device::cuda(2)), a);
  set_current_stream(Stream::default_for(Device::cuda(2)));
  EXPECT_TRUE(current_stream(Device::cuda(2)).is_default());
}

}  // namespace
}  // namespace tileops
