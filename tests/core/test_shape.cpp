// Shape: the small vector (inline up to rank 6, heap beyond), printing, strides and extents.
#include <gtest/gtest.h>

#include <algorithm>
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

TEST(Shape, ElementsOverlap) {
  EXPECT_FALSE(elements_overlap(Shape({3, 4}), Shape({4, 1})));  // dense
  EXPECT_FALSE(elements_overlap(Shape({3, 4}), Shape({1, 3})));  // transposed
  EXPECT_FALSE(elements_overlap(Shape({3, 4}), Shape({8, 1})));  // padded rows
  EXPECT_FALSE(elements_overlap(Shape({1, 4}), Shape({0, 1})));  // a unit axis's stride is moot
  EXPECT_FALSE(elements_overlap(Shape({0, 4}), Shape({0, 0})));  // no elements
  EXPECT_FALSE(elements_overlap(Shape(), Shape()));
  EXPECT_TRUE(elements_overlap(Shape({2, 4}), Shape({0, 1})));   // expanded
  EXPECT_TRUE(elements_overlap(Shape({3, 3}), Shape({1, 1})));   // pigeonhole
  EXPECT_TRUE(elements_overlap(Shape({3, 4}), Shape({3, 2})));   // found by the search
  EXPECT_FALSE(elements_overlap(Shape({3, 2}), Shape({2, 3})));  // interleaved, all distinct
}

// Every view of rank <= 3 with lengths 1..4 and strides 0..3 against its enumerated offsets.
TEST(Shape, ElementsOverlapAgreesWithEnumeration) {
  int views = 0;
  for (int rank = 1; rank <= 3; ++rank) {
    const int combos = 1 << (4 * rank);  // per axis: 2 bits of length - 1, 2 bits of stride
    for (int code = 0; code < combos; ++code) {
      Shape shape, strides;
      for (int k = 0; k < rank; ++k) {
        shape.push_back(((code >> (4 * k)) & 3) + 1);
        strides.push_back((code >> (4 * k + 2)) & 3);
      }
      std::vector<std::int64_t> offsets;
      for (std::int64_t i = 0; i < shape.numel(); ++i) {
        std::int64_t rest = i, offset = 0;
        for (std::size_t k = shape.size(); k-- > 0;) {
          offset += rest % shape[k] * strides[k];
          rest /= shape[k];
        }
        offsets.push_back(offset);
      }
      std::sort(offsets.begin(), offsets.end());
      const bool repeats = std::adjacent_find(offsets.begin(), offsets.end()) != offsets.end();
      EXPECT_EQ(elements_overlap(shape, strides), repeats) << shape.str() << " " << strides.str();
      ++views;
    }
  }
  EXPECT_EQ(views, 16 + 256 + 4096);
}

}  // namespace
}  // namespace tileops
