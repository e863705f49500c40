// The accelerator's part in a call (docs/seeds.md, construction-and-calls §4-§5), on the fake
// accelerator:
// a call whose device nothing decides runs on the accelerator's current device; a call on a
// device runs with that device current and restores the previous one; tuning requests, however
// late, run with the entry's device current.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "toy_ops.hpp"

namespace tileops::optest {
namespace {

// No tensor is required and no `device` param exists: with x omitted, nothing decides the device.
constexpr std::string_view kDevicelessEntry = R"yaml(
@NAME@:
  family: toy
  status: spec-only
  signature:
    params:
      n: {type: int, default: 4}
      dtype: {type: "float16 | float32", default: float32}
    inputs:
      x: {dtype: dtype, shape: "[n]", optional: true}
    outputs:
      y: {dtype: dtype, shape: "[n]"}
  workloads:
    - {label: a, some: [x]}
    - {label: b}
  roofline: {flops: "n"}
)yaml";

TEST(AcceleratorDevice, AnUndecidedCallRunsOnTheAcceleratorsCurrentDevice) {
  FakeAccelerator accel(90, 1);
  std::optional<Device> seen;
  int current_in_body = -1;
  ToyOp op(toy_class(unique_op("Deviceless"), kDevicelessEntry), {}, std::nullopt,
           [&](ToyOp& self, const CallArgs& args) -> CallResult {
             seen = args.device();
             current_in_body = accel.current();
             return {self.output(args, 0)};
           });
  const Inputs none{std::nullopt};
  const CallResult r = op.call(none);
  EXPECT_EQ(seen, Device::cuda(1));
  EXPECT_EQ(op.last_call()->device(), Device::cuda(1));
  EXPECT_EQ(r.at(0)->device(), Device::cuda(1));
  EXPECT_EQ(current_in_body, 1);
  // A tensor decides before the accelerator does.
  op.call(Inputs{cpu({4}, DType::kFloat32)});
  EXPECT_EQ(seen, Device::cpu());
}

TEST(AcceleratorDevice, ACallOnADeviceRunsWithItCurrentAndRestoresThePrevious) {
  FakeAccelerator accel(90, 0);
  int current_in_body = -1;
  ToyOp op(toy_class(unique_op("OnDevice")), {}, std::nullopt,
           [&](ToyOp& self, const CallArgs& args) -> CallResult {
             current_in_body = accel.current();
             return {self.output(args, 0)};
           });
  op(on_cuda({4}, 3));
  EXPECT_EQ(current_in_body, 3);
  EXPECT_EQ(accel.current(), 0);
  // A failing call restores it too.
  ToyOp failing(toy_class(unique_op("Failing")), {}, std::nullopt,
                [&](ToyOp&, const CallArgs&) -> CallResult {
                  current_in_body = accel.current();
                  throw RuntimeStateError("body failed");
                });
  EXPECT_THROW(failing(on_cuda({4}, 2)), RuntimeStateError);
  EXPECT_EQ(current_in_body, 2);
  EXPECT_EQ(accel.current(), 0);
}

// Records the accelerator device current when it is asked to tune.
inline constexpr char kTuneProbe[] = "tune_probe";
struct TuneProbeKernel : FakeKernel<TuneProbeKernel, kTuneProbe> {
  using FakeKernel::FakeKernel;
  static constexpr bool general = true;
  static std::vector<DeviceType> devices() { return {DeviceType::kCPU, DeviceType::kCUDA}; }
  std::atomic<int> current_at_tune{-1};

 protected:
  void on_tune_request() override {
    FakeEntry::on_tune_request();
    if (auto a = accelerator()) current_at_tune = a->current_device();
  }
};

TEST(AcceleratorDevice, TuningRunsWithTheEntrysDeviceCurrent) {
  FakeAccelerator accel(90, 0);
  ToyOp op(toy_class(unique_op("Tuning"))
               .interface<Scaling>("scale")
               .kernel<TuneProbeKernel>("tune_probe"));
  auto entry = std::dynamic_pointer_cast<TuneProbeKernel>(
      op.kernel_for<Scaling>(scaling(7, Device::cuda(2))));
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->current_at_build, 2);
  EXPECT_EQ(entry->device(), Device::cuda(2));
  EXPECT_EQ(accel.current(), 0);
  op.request_tune();  // long after the build, from a thread whose current device is 0
  EXPECT_EQ(entry->current_at_tune.load(), 2);
  EXPECT_EQ(accel.current(), 0);
}

TEST(AcceleratorDevice, ATargetKernelTunesWithItsDeviceCurrent) {
  FakeAccelerator accel(90, 0);
  const std::string target = unique("tuned_target");
  const std::string name = unique_op("TargetTuning");
  register_detector(target, [](const Device& d) { return d.is_cuda(); });
  auto current_at_tune = std::make_shared<std::atomic<int>>(-1);
  register_kernel_builder(
      name, target,
      [current_at_tune](std::span<const std::optional<TensorSpec>> inputs, const ParamMap&) {
        const TensorSpec spec = *inputs[0];
        TargetKernel k;
        k.run = [spec](const TargetCall&) -> CallResult {
          return {Tensor::empty(spec.shape, spec.dtype, spec.device)};
        };
        k.request_tune = [current_at_tune] {
          if (auto a = accelerator()) *current_at_tune = a->current_device();
        };
        return k;
      });
  ToyOp op(toy_class(name));
  op(on_cuda({4}, 5));
  EXPECT_EQ(accel.current(), 0);
  op.request_tune();
  EXPECT_EQ(current_at_tune->load(), 5);
  EXPECT_EQ(accel.current(), 0);
}

}  // namespace
}  // namespace tileops::optest
