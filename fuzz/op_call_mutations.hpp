// The op-call harness's mutations (Note [Op-call fuzzing] in op_call_harness.cpp): a fuzz input's
// bytes read as changes to a workload case's construction params and to its inputs' geometries,
// and as the tensors of the geometries changed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
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

// An input as the harness makes it: its view, where it lives, and whether it is another input.
struct Geometry {
  DType dtype = DType::kFloat32;
  Shape shape;
  std::optional<Shape> strides;  // nullopt: contiguous
  std::int64_t offset_elems = 0;
  bool meta = false;
  bool host = false;  // on the CPU when the run's device is another
  bool read_only = false;
  int alias_of = -1;  // another input's index: this input is that tensor
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

}  // namespace tileops::fuzz
