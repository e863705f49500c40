// The pieces of a kernel_for hit: the call-spec hash and the lock-free entry table (Note
// [Lock-free entry table] in src/op/entry_table.hpp); test_concurrency.cpp races them.
#include <gtest/gtest.h>

#include <set>

#include "op/entry_table.hpp"
#include "tileops/op/hash.hpp"
#include "toy_ops.hpp"

namespace tileops::optest {
namespace {

TEST(CallSpecHash, EqualFieldsHashAlike) {
  EXPECT_EQ(hash_fields(0.0), hash_fields(-0.0));  // +0.0 == -0.0
  EXPECT_EQ(hash_fields(0.0f), hash_fields(-0.0f));
  EXPECT_EQ(hash_fields(Device::cpu(), std::int64_t{4096}, 1e-6, 3, true),
            hash_fields(Device::cpu(), std::int64_t{4096}, 1e-6, 3, true));
}

TEST(CallSpecHash, DifferentFieldsHashApart) {
  // Not a guarantee of a hash, but what a cheap one must still do for typical specs: every field
  // and the order of the fields count.
  std::set<std::size_t> seen;
  for (std::int64_t n = 0; n < 64; ++n)
    for (double eps : {0.0, 1e-6, 1e-5})
      for (bool flag : {false, true}) seen.insert(hash_fields(Device::cpu(), n, eps, flag));
  EXPECT_EQ(seen.size(), 64u * 3u * 2u);
  EXPECT_NE(hash_fields(1, 2), hash_fields(2, 1));
  EXPECT_NE(hash_fields(1.0), hash_fields(2.0));
}

TEST(EntryTable, FindsEveryInsertedSpecAcrossGrowth) {
  const CallSpecOps& ops = CallSpecOps::of<ScalingCall>();
  detail::EntryTable table(&ops);
  const ScalingCall absent = scaling(-1);
  EXPECT_EQ(table.find(ops.hash(&absent), &absent), nullptr);  // empty: nothing allocated yet
  std::vector<std::shared_ptr<KernelInterface>> entries;
  for (std::int64_t n = 0; n < 1000; ++n) {
    const ScalingCall c = scaling(n);
    entries.push_back(std::make_shared<GeneralKernel>(c));
    table.insert(ops.hash(&c), ops.copy(&c), entries.back());
  }
  EXPECT_EQ(table.size(), 1000u);
  for (std::int64_t n = 0; n < 1000; ++n) {
    const ScalingCall c = scaling(n);
    const std::shared_ptr<KernelInterface>* found = table.find(ops.hash(&c), &c);
    ASSERT_NE(found, nullptr) << n;
    EXPECT_EQ(*found, entries[n]);
  }
  EXPECT_EQ(table.find(ops.hash(&absent), &absent), nullptr);
  // Equal hashes, different specs: the table compares the specs.
  const ScalingCall five = scaling(5);
  const ScalingCall other_device = scaling(5, Device::meta());
  EXPECT_EQ(table.find(ops.hash(&five), &other_device), nullptr);
}

}  // namespace
}  // namespace tileops::optest
