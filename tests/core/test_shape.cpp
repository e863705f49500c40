// Shape: the small vector (inline up to rank 6, heap beyond), printing, strides and extents.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "tileops/core/shape.hpp"

namespace tileops {
namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

TEST(Shape, StrPrintsPythonLists) {
  EXPECT_EQ(Shape().str(), "[]");
  EXPECT_EQ(Shape({7}).str(), "[7]");
  EXPECT_EQ(Shape({2, 3, 4}).str(), "[2, 3, 4]");
  EXPECT_EQ(Shape({-1, 0}).str(), "[-1, 0]");
}

TEST(Shape, BuildsFromSpansAndFills) {
  const std::vector<std::int64_t> dims{1, 2, 3, 4, 5, 6, 7, 8};
  const Shape s{std::span<const std::int64_t>(dims)};
  EXPECT_EQ(s.rank(), 8u);
  EXPECT_EQ(s.back(), 8);
  EXPECT_EQ(Shape::filled(3, 5), Shape({5, 5, 5}));
  Shape grown;
  for (std::int64_t d : dims) grown.push_back(d);
  EXPECT_EQ(grown, s);
  Shape appended{1, 2};
  appended.append(std::span<const std::int64_t>(dims).subspan(2));
  EXPECT_EQ(appended, s);
}

TEST(Shape, HeapShapesCopyAndMove) {
  const Shape big{1, 2, 3, 4, 5, 6, 7, 8, 9};
  Shape copy = big;
  EXPECT_EQ(copy, big);
  EXPECT_NE(copy.data(), big.data());
  copy[0] = 100;
  EXPECT_EQ(big[0], 1);

  Shape moved = std::move(copy);
  EXPECT_EQ(moved.rank(), 9u);
  EXPECT_EQ(moved[0], 100);
  EXPECT_TRUE(copy.empty());  // NOLINT(bugprone-use-after-move): moved-from shapes are empty
  copy.push_back(4);          // and usable again
  EXPECT_EQ(copy, Shape({4}));

  Shape small{1, 2};
  small = big;  // inline -> heap
  EXPECT_EQ(small, big);
  small = Shape{3};  // heap -> inline by move
  EXPECT_EQ(small, Shape({3}));
  Shape target{5, 6, 7, 8, 9, 10, 11};
  target = std::move(moved);  // heap <- heap
  EXPECT_EQ(target[0], 100);
  EXPECT_EQ(target.rank(), 9u);
  Shape& self = target;
  target = self;
  EXPECT_EQ(target.rank(), 9u);
}

TEST(Shape, InlineShapesMoveByCopy) {
  Shape a{1, 2, 3};
  Shape b = std::move(a);
  EXPECT_EQ(b, Shape({1, 2, 3}));
  EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move)
}

TEST(Shape, Numel) {
  EXPECT_EQ(Shape().numel(), 1);
  EXPECT_EQ(Shape({2, 3, 4}).numel(), 24);
  EXPECT_EQ(Shape({2, 0}).checked_numel(), 0);
  EXPECT_EQ(Shape({2, 3}).checked_numel(), 6);
  EXPECT_EQ(Shape({-1, 3}).checked_numel(), std::nullopt);
  EXPECT_EQ(Shape({std::int64_t{1} << 32, std::int64_t{1} << 32}).checked_numel(), std::nullopt);
}

TEST(Shape, ContiguousStrides) {
  EXPECT_EQ(contiguous_strides(Shape()), Shape());
  EXPECT_EQ(contiguous_strides(Shape({2, 3, 4})), Shape({12, 4, 1}));
  // Empty and unit axes advance the step by one, as in PyTorch.
  EXPECT_EQ(contiguous_strides(Shape({2, 0, 4})), Shape({4, 4, 1}));
  EXPECT_EQ(contiguous_strides(Shape({1, 1, 5})), Shape({5, 5, 1}));
  EXPECT_EQ(contiguous_strides(Shape({2, 1, 1, 1, 1, 1, 1, 3})), Shape({3, 3, 3, 3, 3, 3, 3, 1}));
}

TEST(Shape, StridedExtent) {
  EXPECT_EQ(strided_extent(Shape(), Shape()), 1);
  EXPECT_EQ(strided_extent(Shape({2, 3}), Shape({3, 1})), 6);
  EXPECT_EQ(strided_extent(Shape({2, 3}), Shape({1, 2})), 6);
  EXPECT_EQ(strided_extent(Shape({3, 2}), Shape({4, 1})), 10);  // padded rows
  EXPECT_EQ(strided_extent(Shape({4, 4}), Shape({0, 0})), 1);   // broadcast
  EXPECT_EQ(strided_extent(Shape({2, 0}), Shape({5, 1})), 0);
  EXPECT_EQ(strided_extent(Shape({2}), Shape({1, 1})), std::nullopt);
  EXPECT_EQ(strided_extent(Shape({-2}), Shape({1})), std::nullopt);
  EXPECT_EQ(strided_extent(Shape({2}), Shape({-1})), std::nullopt);
  EXPECT_EQ(strided_extent(Shape({3}), Shape({kMax})), std::nullopt);
  EXPECT_EQ(strided_extent(Shape({2}), Shape({kMax})), std::nullopt);  // last + 1 overflows
}

}  // namespace
}  // namespace tileops
