// RopeFwdOp on the CPU (manifest/rope.yaml, docs/manifest.md §4.5) against a float64 oracle
// written here: both pairings, partial rotary with the columns past R unchanged bit for bit, int32
// and int64 positions out of order and repeated, every dtype on one instance, Hq != Hk, strided
// query and key; the call spec's keys; the bad inputs and aliasings the signature refuses. What
// every op gets (dtypes, out=, strides, empty and meta calls) is the generic suite's
// (tests/ops/generic/). Tolerances: Note [CPU kernel tolerances] in cpu_numerics.hpp.
#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ops_testing.hpp"
#include "tileops/ops/rope.hpp"

namespace tileops::test_ops {
namespace {

// The float64 oracle: each rotated pair (x1, x2) of a head is the complex number x1 + i x2
// multiplied by cos + i sin, the rotation by the angle the cache row stores. `x` is [N, H, D]
// row-major, `cache` [P, R]. `scale` receives |x1 cos| + |x2 sin| (|x2 cos| + |x1 sin|) for the
// rotated elements, the magnitude their float32 error scales with when the result cancels.
struct Rotated {
  std::vector<double> values, scale;
};

Rotated oracle(const std::vector<double>& x, std::int64_t heads, std::int64_t d,
               const std::vector<std::int64_t>& positions, const std::vector<double>& cache,
               std::int64_t r, bool is_neox) {
  Rotated out{x, std::vector<double>(x.size(), 0.0)};
  const std::int64_t half = r / 2;
  for (std::size_t n = 0; n < positions.size(); ++n) {
    const std::int64_t row = positions[n] * r;
    for (std::int64_t h = 0; h < heads; ++h) {
      const std::int64_t head = (static_cast<std::int64_t>(n) * heads + h) * d;
      for (std::int64_t i = 0; i < half; ++i) {
        const auto a = static_cast<std::size_t>(head + (is_neox ? i : 2 * i));
        const auto b = static_cast<std::size_t>(head + (is_neox ? half + i : 2 * i + 1));
        const std::complex<double> angle(cache[static_cast<std::size_t>(row + i)],
                                         cache[static_cast<std::size_t>(row + half + i)]);
        const std::complex<double> z = std::complex<double>(x[a], x[b]) * angle;
        out.values[a] = z.real();
        out.values[b] = z.imag();
        out.scale[a] = std::abs(x[a] * angle.real()) + std::abs(x[b] * angle.imag());
        out.scale[b] = std::abs(x[b] * angle.real()) + std::abs(x[a] * angle.imag());
      }
    }
  }
  return out;
}

Tensor positions_tensor(const std::vector<std::int64_t>& positions, DType dtype) {
  Tensor t = Tensor::empty({static_cast<std::int64_t>(positions.size())}, dtype);
  write(t, std::vector<double>(positions.begin(), positions.end()));
  return t;
}

// The bytes of columns [from, D) of every head of x [N, H, D] (any strides).
std::vector<unsigned char> columns_bytes(const Tensor& x, std::int64_t from) {
  std::vector<unsigned char> bytes;
  const auto* base = static_cast<const unsigned char*>(x.data_ptr());
  const auto item = static_cast<std::int64_t>(x.itemsize());
  for (std::int64_t n = 0; n < x.shape()[0]; ++n)
    for (std::int64_t h = 0; h < x.shape()[1]; ++h)
      for (std::int64_t c = from; c < x.shape()[2]; ++c) {
        const std::int64_t off =
            (n * x.strides()[0] + h * x.strides()[1] + c * x.strides()[2]) * item;
        bytes.insert(bytes.end(), base + off, base + off + item);
      }
  return bytes;
}

// One call's tensors and what the oracle expects of query and key.
struct RopeCase {
  std::int64_t q_heads = 4, k_heads = 2, d = 16, r = 16, p = 9;
  std::vector<std::int64_t> positions = {5, 0, 5, 3, 8, 1, 3};  // out of order, repeated
  DType dtype = DType::kBFloat16;
  DType index_dtype = DType::kInt64;
};

// Runs `op` on fresh random inputs of `c` (query and key given as `query_view` and `key_view`
// when set) and checks query and key against the oracle and their columns R..D-1 bit for bit.
void check_rope(RopeFwdOp& op, const RopeCase& c, std::uint32_t seed,
                const std::optional<Tensor>& query_view = std::nullopt,
                const std::optional<Tensor>& key_view = std::nullopt) {
  const auto n = static_cast<std::int64_t>(c.positions.size());
  SCOPED_TRACE(std::string(dtype_name(c.dtype)) + " positions " +
               std::string(dtype_name(c.index_dtype)) + (op.is_neox() ? " neox" : " interleaved") +
               " Hq=" + std::to_string(c.q_heads) + " Hk=" + std::to_string(c.k_heads) +
               " D=" + std::to_string(c.d) + " R=" + std::to_string(c.r));
  Tensor query = query_view ? *query_view : random_tensor({n, c.q_heads, c.d}, c.dtype, seed);
  Tensor key = key_view ? *key_view : random_tensor({n, c.k_heads, c.d}, c.dtype, seed + 1);
  const Tensor cache = random_tensor({c.p, c.r}, c.dtype, seed + 2);
  const Tensor positions = positions_tensor(c.positions, c.index_dtype);
  const std::vector<double> q0 = read(query), k0 = read(key), cache0 = read(cache);
  const std::vector<unsigned char> q_tail = columns_bytes(query, c.r);
  const std::vector<unsigned char> k_tail = columns_bytes(key, c.r);

  op(positions, query, key, cache);

  const test_cpu::Tolerance tol = tolerance_for(c.dtype);
  for (const auto& [name, got, before, heads, tail] :
       {std::tuple("query", &query, &q0, c.q_heads, &q_tail),
        std::tuple("key", &key, &k0, c.k_heads, &k_tail)}) {
    const Rotated want = oracle(*before, heads, c.d, c.positions, cache0, c.r, op.is_neox());
    std::vector<double> extra(want.scale.size());
    for (std::size_t i = 0; i < extra.size(); ++i) extra[i] = tol.rtol * want.scale[i];
    EXPECT_TRUE(all_close(read(*got), want.values, tol, extra)) << name;
    EXPECT_TRUE(columns_bytes(*got, c.r) == *tail) << name << ": columns R..D-1 changed";
  }
  EXPECT_EQ(read(cache), cache0) << "the cache is only read";
  EXPECT_EQ(read(positions), std::vector<double>(c.positions.begin(), c.positions.end()));
}

TEST(RopeCpu, EveryDTypeAndIndexDTypeOnOneInstance) {
  std::uint32_t seed = 1;
  for (bool is_neox : {true, false}) {
    RopeFwdOp op(is_neox);
    for (DType dtype : kFloatDTypes)
      for (DType index_dtype : {DType::kInt32, DType::kInt64}) {
        RopeCase c;
        c.dtype = dtype;
        c.index_dtype = index_dtype;
        check_rope(op, c, seed += 3);
      }
  }
}

TEST(RopeCpu, DefaultIsNeox) {
  RopeFwdOp op;
  EXPECT_TRUE(op.is_neox());
  check_rope(op, RopeCase{}, 40);
}

TEST(RopeCpu, PartialRotaryLeavesTheOtherColumnsBitForBit) {
  std::uint32_t seed = 100;
  // (D, R): R < D, R == 2, an odd number of pairs, no rotation at all (R = 0), one head of key.
  const std::pair<std::int64_t, std::int64_t> sizes[] = {{24, 8}, {10, 2}, {16, 6}, {8, 0}};
  for (bool is_neox : {true, false}) {
    RopeFwdOp op(is_neox);
    for (const auto& [d, r] : sizes)
      for (DType dtype : kFloatDTypes) {
        RopeCase c;
        c.d = d;
        c.r = r;
        c.k_heads = 1;
        c.dtype = dtype;
        c.index_dtype = r % 4 == 0 ? DType::kInt32 : DType::kInt64;
        check_rope(op, c, seed += 3);
      }
  }
}

TEST(RopeCpu, ManyTokensAndHeads) {
  // Enough work for the parallel loop over tokens; positions out of order, then 56 repeated.
  RopeCase c;
  c.q_heads = 32;
  c.k_heads = 8;
  c.d = 128;
  c.r = 64;
  c.p = 300;
  c.positions.clear();
  for (std::int64_t t = 0; t < 200; ++t) c.positions.push_back(299 - 3 * t % 300);
  for (std::int64_t t = 0; t < 56; ++t) c.positions.push_back(c.positions[t]);
  for (bool is_neox : {true, false}) {
    RopeFwdOp op(is_neox);
    check_rope(op, c, is_neox ? 200 : 210);
  }
}

TEST(RopeCpu, StridedQueryAndKeyAreWrittenThroughTheirViews) {
  // query: every other head of a [N, 2 Hq, D] tensor; key: heads transposed ([N, Hk, D] over a
  // [Hk, N, D] storage). Neither shares storage with the other inputs.
  RopeCase c;
  c.r = 10;
  const auto n = static_cast<std::int64_t>(c.positions.size());
  for (bool is_neox : {true, false}) {
    RopeFwdOp op(is_neox);
    const Tensor q_base = random_tensor({n, 2 * c.q_heads, c.d}, c.dtype, is_neox ? 300 : 310);
    const Tensor k_base = random_tensor({c.k_heads, n, c.d}, c.dtype, is_neox ? 301 : 311);
    const Tensor query =
        q_base.as_strided({n, c.q_heads, c.d}, {2 * c.q_heads * c.d, 2 * c.d, 1}, 0);
    const Tensor key = k_base.as_strided({n, c.k_heads, c.d}, {c.d, n * c.d, 1}, 0);
    ASSERT_FALSE(query.is_contiguous());
    ASSERT_FALSE(key.is_contiguous());
    const Tensor q_others =
        q_base.as_strided({n, c.q_heads, c.d}, {2 * c.q_heads * c.d, 2 * c.d, 1},
                          c.d * static_cast<std::int64_t>(q_base.itemsize()));
    const std::vector<double> others = read(q_others);
    check_rope(op, c, is_neox ? 302 : 312, query, key);
    EXPECT_EQ(read(q_others), others) << "the heads between the query view's heads changed";
  }
}

TEST(RopeCpu, FusedQkvHeadRangesAreRotatedInPlace) {
  // query and key as the head ranges of one [N, Hq + 2 Hk, D] tensor, as a fused qkv projection
  // leaves them: their byte ranges interleave, no element is shared (Note [Disjoint bands]), and
  // the value heads between them keep their bytes.
  RopeCase c;
  c.r = 10;
  const auto n = static_cast<std::int64_t>(c.positions.size());
  const std::int64_t heads = c.q_heads + 2 * c.k_heads, row = heads * c.d;
  const auto item = static_cast<std::int64_t>(dtype_size(c.dtype));
  for (bool is_neox : {true, false}) {
    RopeFwdOp op(is_neox);
    const Tensor qkv = random_tensor({n, heads, c.d}, c.dtype, is_neox ? 320 : 330);
    const Tensor query = qkv.as_strided({n, c.q_heads, c.d}, {row, c.d, 1}, 0);
    const Tensor key = qkv.as_strided({n, c.k_heads, c.d}, {row, c.d, 1}, c.q_heads * c.d * item);
    const Tensor value =
        qkv.as_strided({n, c.k_heads, c.d}, {row, c.d, 1}, (c.q_heads + c.k_heads) * c.d * item);
    const std::vector<double> values = read(value);
    check_rope(op, c, is_neox ? 321 : 331, query, key);
    EXPECT_EQ(read(value), values) << "the value heads changed";
  }
}

TEST(RopeCpu, EmptyHeadsOfOneTensor) {
  // Hq = 0: only key is rotated.
  RopeCase c;
  c.q_heads = 0;
  RopeFwdOp op;
  check_rope(op, c, 400);
}

TEST(RopeCpu, CallSpecKeysOnDTypesPairingAndHeadGeometryOnly) {
  RopeFwdOp op(false);
  std::uint32_t seed = 500;
  auto call = [&](std::int64_t tokens, std::int64_t q_heads, std::int64_t k_heads, std::int64_t d,
                  std::int64_t r, std::int64_t p, DType dtype, DType index_dtype) {
    Tensor query = random_tensor({tokens, q_heads, d}, dtype, seed++);
    Tensor key = random_tensor({tokens, k_heads, d}, dtype, seed++);
    std::vector<std::int64_t> positions;
    for (std::int64_t t = 0; t < tokens; ++t) positions.push_back(t % p);
    op(positions_tensor(positions, index_dtype), query, key, random_tensor({p, r}, dtype, seed++));
  };
  call(3, 4, 2, 16, 16, 8, DType::kBFloat16, DType::kInt64);
  // Other token counts, head counts and cache lengths reuse the entry.
  call(5, 4, 2, 16, 16, 8, DType::kBFloat16, DType::kInt64);
  call(7, 8, 1, 16, 16, 20, DType::kBFloat16, DType::kInt64);
  ASSERT_EQ(op.built_entries("rope").size(), 1u);
  EXPECT_EQ(op.built_entries("rope")[0].key, "rope_cpu");
  EXPECT_EQ(op.cached_call_specs("rope"), 1u);
  // R, D, the dtype and the positions' dtype each key an entry of their own.
  call(3, 4, 2, 16, 8, 8, DType::kBFloat16, DType::kInt64);
  call(3, 4, 2, 32, 8, 8, DType::kBFloat16, DType::kInt64);
  call(3, 4, 2, 32, 8, 8, DType::kFloat32, DType::kInt64);
  call(3, 4, 2, 32, 8, 8, DType::kFloat32, DType::kInt32);
  EXPECT_EQ(op.cached_call_specs("rope"), 5u);
  EXPECT_EQ(op.built_entries("rope").size(), 5u);
}

TEST(RopeCpu, Roofline) {
  RopeFwdOp op;
  Tensor query = random_tensor({6, 4, 16}, DType::kBFloat16, 600);
  Tensor key = random_tensor({6, 2, 16}, DType::kBFloat16, 601);
  const Tensor cache = random_tensor({9, 8}, DType::kBFloat16, 602);
  op(positions_tensor({0, 1, 2, 3, 4, 5}, DType::kInt32), query, key, cache);
  // 3 flops per rotated element; the rotated columns of query and key read and written, the
  // positions read, and min(N, P) = 6 cache rows read.
  EXPECT_EQ(op.eval_roofline().flops, 3 * 6 * (4 + 2) * 8);
  EXPECT_EQ(op.eval_roofline().bytes, 6 * 4 + 2 * (6 * 4 * 8 + 6 * 2 * 8) * 2 + 6 * 8 * 2);
}

// ---- Refused calls ------------------------------------------------------------------------------

// Calls `op` on the tensors, expecting CheckError with exactly `message`, and that neither query
// nor key changed.
void expect_refused(RopeFwdOp& op, const Tensor& positions, const Tensor& query, const Tensor& key,
                    const Tensor& cache, const std::string& message) {
  const std::vector<double> q0 = read(query), k0 = read(key);
  EXPECT_TRUE(throws_with<CheckError>([&] { op(positions, query, key, cache); }, message));
  EXPECT_EQ(read(query), q0) << message;
  EXPECT_EQ(read(key), k0) << message;
}

TEST(RopeCpu, BadInputsNameTheTensorAndTheRule) {
  RopeFwdOp op;
  const DType bf16 = DType::kBFloat16;
  const Tensor positions = positions_tensor({0, 2, 1}, DType::kInt64);
  const Tensor query = random_tensor({3, 4, 16}, bf16, 700);
  const Tensor key = random_tensor({3, 2, 16}, bf16, 701);
  const Tensor cache = random_tensor({4, 16}, bf16, 702);
  // R = cos_sin_cache's second axis: odd, and longer than a head.
  expect_refused(op, positions, query, key, random_tensor({4, 7}, bf16, 703),
                 "RopeFwdOp: shape_rules[0]: R % 2 == 0");
  expect_refused(op, positions, query, key, random_tensor({4, 18}, bf16, 704),
                 "RopeFwdOp: shape_rules[1]: R <= D");
  expect_refused(op, positions_tensor({0, 2, 1}, DType::kFloat32), query, key, cache,
                 "RopeFwdOp: positions dtype is outside [int32, int64]; got float32");
  expect_refused(op, positions_tensor({0, 2, 1}, DType::kInt16), query, key, cache,
                 "RopeFwdOp: positions dtype is outside [int32, int64]; got int16");
  expect_refused(op, positions, query, random_tensor({3, 2, 16}, DType::kFloat16, 705), cache,
                 "RopeFwdOp: key dtype differs from T (bfloat16); got float16");
  expect_refused(op, positions, query, key, random_tensor({4, 16}, DType::kFloat32, 706),
                 "RopeFwdOp: cos_sin_cache dtype differs from T (bfloat16); got float32");
  // Query and key disagree on the token count and on the head size.
  expect_refused(op, positions, query, random_tensor({4, 2, 16}, bf16, 707), cache,
                 "RopeFwdOp: key shape does not match N: axis 0 is 4, expected 3");
  expect_refused(op, positions, query, random_tensor({3, 2, 8}, bf16, 708), cache,
                 "RopeFwdOp: key shape does not match D: axis 2 is 8, expected 16");
  // A position past the cache (P = 4) or negative: checked on the CPU before anything is written.
  expect_refused(op, positions_tensor({0, 4, 1}, DType::kInt64), query, key, cache,
                 "RopeFwdOp: positions[1] = 4 is outside the rows of cos_sin_cache, [0, 4)");
  expect_refused(op, positions_tensor({0, 1, -1}, DType::kInt32), query, key, cache,
                 "RopeFwdOp: positions[2] = -1 is outside the rows of cos_sin_cache, [0, 4)");
  // The instance still serves a good call.
  check_rope(op, RopeCase{}, 709);
}

// The signature check refuses a written input whose memory overlaps another input's
// (Tensor::shares_storage_with, as for every op).
TEST(RopeCpu, QueryAndKeySharingMemoryAreRefused) {
  RopeFwdOp op;
  const DType bf16 = DType::kBFloat16;
  const Tensor positions = positions_tensor({0, 2, 1}, DType::kInt64);
  const Tensor cache = random_tensor({4, 16}, bf16, 800);
  // One tensor passed as both.
  const Tensor qk = random_tensor({3, 2, 16}, bf16, 801);
  expect_refused(op, positions, qk, qk, cache,
                 "RopeFwdOp: query is written and shares storage with input key");
  // Head ranges of one fused qkv tensor [N, Hq + Hk, D] that overlap (query's last head is key's
  // first); those that do not are taken (FusedQkvHeadRangesAreRotatedInPlace).
  const Tensor qkv = random_tensor({3, 6, 16}, bf16, 802);
  const Tensor q = qkv.as_strided({3, 4, 16}, {96, 16, 1}, 0);
  const Tensor k = qkv.as_strided({3, 2, 16}, {96, 16, 1}, 3 * 16 * 2);
  expect_refused(op, positions, q, k, cache,
                 "RopeFwdOp: query is written and shares storage with input key");
  // A cache that overlaps key.
  const Tensor k_and_cache = random_tensor({3 * 2 * 16 + 4 * 16}, bf16, 803);
  const Tensor k2 = k_and_cache.as_strided({3, 2, 16}, {32, 16, 1}, 0);
  const Tensor cache2 = k_and_cache.as_strided({4, 16}, {16, 1}, 80 * 2);
  expect_refused(op, positions, random_tensor({3, 4, 16}, bf16, 804), k2, cache2,
                 "RopeFwdOp: key is written and shares storage with input cos_sin_cache");
  // A query whose heads are one memory location (stride 0) would be written in no defined order.
  const Tensor one_head = random_tensor({3, 1, 16}, bf16, 805);
  const Tensor expanded = one_head.as_strided({3, 4, 16}, {16, 0, 1}, 0);
  expect_refused(op, positions, expanded, random_tensor({3, 2, 16}, bf16, 806), cache,
                 "RopeFwdOp: query: unsupported operation: more than one element of the "
                 "written-to tensor refers to a single memory location; pass a copy "
                 "(Tensor::contiguous())");
  // Query and key back to back in one storage overlap nowhere: served.
  RopeCase c;
  const auto n = static_cast<std::int64_t>(c.positions.size());
  const Tensor block = random_tensor({n * (c.q_heads + c.k_heads) * c.d}, c.dtype, 807);
  const Tensor q3 = block.as_strided({n, c.q_heads, c.d}, {c.q_heads * c.d, c.d, 1}, 0);
  const Tensor k3 =
      block.as_strided({n, c.k_heads, c.d}, {c.k_heads * c.d, c.d, 1}, n * c.q_heads * c.d * 2);
  check_rope(op, c, 808, q3, k3);
}

}  // namespace
}  // namespace tileops::test_ops
