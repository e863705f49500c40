// The op-call harness's mutations (Note [Op-call fuzzing] in op_call_harness.cpp): a fuzz input's
// bytes read as changes to a workload case's construction params and to its inputs' geometries,
// and as the tensors of the geometries changed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "byte_reader.hpp"
#include "op_call_harness.hpp"
#include "tileops/core/device.hpp"
#include "tileops/core/tensor.hpp"
#include "tileops/core/value.hpp"
#include "tileops/manifest/model.hpp"

namespace tileops::fuzz {

// Any dtype the library has.
DType any_dtype(ByteReader& in);

// `given` with up to two params set to values of any kind (NaN, INT64_MIN, lists, unknown names)
// or omitted, and now and then a param no op declares: the construction check must refuse what
// does not fit.
ParamMap mutate_params(ByteReader& in, const ParamMap& given,
                       const std::vector<tileops::manifest::ParamDecl>& decls);

// How an input shares memory with the input Geometry::alias_of names.
enum class Sharing {
  kSame,         // it is that tensor
  kOverlapping,  // a view of its own, starting inside that tensor's bytes
  kAfter,        // a view of its own in the same memory, right after that tensor's bytes
  kBefore,       // right before them
};

// An input as the harness makes it: its view, where it lives, and whether it shares another
// input's memory.
struct Geometry {
  DType dtype = DType::kFloat32;
  Shape shape;
  std::optional<Shape> strides;  // nullopt: contiguous
  std::int64_t offset_elems = 0;
  bool meta = false;
  bool host = false;  // on the CPU when the run's device is another
  bool read_only = false;
  int alias_of = -1;  // another input's index, whose memory this input shares
  Sharing sharing = Sharing::kSame;
};

Geometry geometry_of(DType dtype, Shape shape = {});

// One change to `g`: its dtype, one length (0, 2^40, INT64_MAX...), an axis more or fewer, off
// the call's device, strided, misaligned, read-only, an alias of one of the call's `inputs`
// inputs, or a shape of its own.
void mutate_geometry(ByteReader& in, Geometry& g, std::size_t inputs);

// A meta tensor (`meta`, or past `sizes`' budget), or a tensor on `device` (the CPU for a `host`
// one) over a storage of exactly the bytes the view spans, filled with bytes from the input (then
// a counter, when it runs out). nullopt for a geometry no tensor has (a negative length, more
// bytes than int64 counts): the library refuses to make one (a CheckError), so no op ever sees it.
std::optional<Tensor> make_tensor(ByteReader& in, const Geometry& g, Device device,
                                  const OpCallSizes& sizes);

// The bytes of `t`'s storage (the bytes its view spans), copied to the host (a device's once its
// queued work is done); empty for a meta tensor.
std::vector<std::byte> storage_bytes(const Tensor& t);

// `first` and `second` made again as views of one memory, each with its own geometry and bytes:
// `second` starts inside `first`'s bytes (`overlapping`, at an element the input picks) or right
// after them. A kernel that writes past one view's end (or before its start) writes into the
// other, where the rule that unwritten inputs keep their bytes sees it. nullopt where either has
// no memory (meta, empty) or they are on different devices.
std::optional<std::pair<Tensor, Tensor>> in_one_storage(ByteReader& in, const Tensor& first,
                                                        const Tensor& second, bool overlapping);

}  // namespace tileops::fuzz
