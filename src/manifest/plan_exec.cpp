#include "manifest/plan_exec.hpp"

#include <fmt/format.h>

#include "tileops/core/error.hpp"

namespace tileops::manifest::detail {
namespace {

std::string dtype_list(const std::vector<DType>& ds) {
  std::string s;
  for (DType dt : ds) s += (s.empty() ? "" : ", ") + std::string(dtype_name(dt));
  return "[" + s + "]";
}

[[noreturn]] void fail(const PlanData& d, const std::string& what) {
  throw CheckError(fmt::format("{}: {}", d.op_name, what));
}

void align(const PlanData& d, const Step& step, std::vector<Value>& frame, const TensorRecord& rec,
           std::int64_t* pos) {
  const PlanTensor& t = d.tensors[step.tensor];
  const std::string& name = t.decl->name;
  const std::size_t rank = rec.shape.size();
  // Lengths of the known splices, evaluated once.
  Shape spliced[8];
  std::vector<Shape> spliced_heap;
  auto splice_value = [&](std::size_t k) -> Shape& {
    return k < 8 ? spliced[k] : spliced_heap[k - 8];
  };
  if (t.axes.size() > 8) spliced_heap.resize(t.axes.size() - 8);
  std::size_t fixed = 0;
  for (std::size_t k = 0; k < t.axes.size(); ++k) {
    if (!t.decl->shape.axes[k].splice) {
      ++fixed;
    } else if (static_cast<int>(k) != step.term) {
      Value v = eval_checked(d, t.axes[k], frame, name + ".shape");
      splice_value(k) = v.as_int_list();
      fixed += splice_value(k).size();
    }
  }
  std::size_t unknown_len = 0;
  if (step.term >= 0) {
    if (rank < fixed) fail(d, fmt::format("{} needs rank >= {}; got rank {}", name, fixed, rank));
    unknown_len = rank - fixed;
  } else if (rank != fixed) {
    fail(d, fmt::format("{} needs rank == {}; got rank {}", name, fixed, rank));
  }
  std::size_t p = 0;
  for (std::size_t k = 0; k < t.axes.size(); ++k) {
    const AxisTerm& term = t.decl->shape.axes[k];
    if (!term.splice) {
      pos[t.term_offset + k] = static_cast<std::int64_t>(p++);
    } else if (static_cast<int>(k) == step.term) {
      frame[step.slot] = Value(Shape(std::span<const std::int64_t>(rec.shape.data() + p, unknown_len)));
      p += unknown_len;
    } else {
      const Shape& want = splice_value(k);
      for (std::size_t j = 0; j < want.size(); ++j) {
        if (rec.shape[p + j] != want[j]) {
          Shape got(std::span<const std::int64_t>(rec.shape.data() + p, want.size()));
          fail(d, fmt::format("{} shape does not match *{}: axes {}..{} of {} are {}, expected {}", name,
                              term.expr.source, p, p + want.size() - 1, rec.shape.str(), got.str(), want.str()));
        }
      }
      p += want.size();
    }
  }
}

}  // namespace

Value eval_checked(const PlanData& d, const expr::Program& p, const std::vector<Value>& frame,
                   const std::string& where) {
  try {
    return p.eval(frame);
  } catch (const CheckError&) {
    throw;
  } catch (const Error& err) {
    throw CheckError(fmt::format("{}: {}: {}", d.op_name, where, err.what()));
  }
}

void run_schedule(const PlanData& d, const Schedule& s, std::vector<Value>& frame,
                  const std::vector<TensorRecord>& records, CallScratch& scratch) {
  std::int64_t* pos = scratch.pos();
  for (const Step& step : s.steps) {
    switch (step.kind) {
      case Step::Kind::kDTypeBind: {
        const PlanTensor& t = d.tensors[step.tensor];
        DType dt = records[step.tensor].dtype;
        const IndexDecl& idx = *d.slot_index[step.slot];
        bool allowed = false;
        for (DType a : idx.dtypes) allowed = allowed || a == dt;
        if (!allowed)
          fail(d, fmt::format("{} dtype is outside {}; got {}", t.decl->name, dtype_list(idx.dtypes), dtype_name(dt)));
        frame[step.slot] = Value(dt);
        break;
      }
      case Step::Kind::kDTypeCheck: {
        const PlanTensor& t = d.tensors[step.tensor];
        DType dt = records[step.tensor].dtype;
        DType want = eval_checked(d, *step.prog, frame, t.decl->name + ".dtype").as_dtype();
        if (dt != want) {
          if (t.dtype_index_slot >= 0)
            fail(d, fmt::format("{} dtype differs from {} ({}); got {}", t.decl->name, t.decl->dtype.source,
                                dtype_name(want), dtype_name(dt)));
          // The value is spelled out only when the declaration is an expression, not a dtype name.
          const std::string& src = t.decl->dtype.source;
          std::string decl = src == dtype_name(want) ? src : fmt::format("{} ({})", src, dtype_name(want));
          fail(d, fmt::format("{} dtype is not {}; got {}", t.decl->name, decl, dtype_name(dt)));
        }
        break;
      }
      case Step::Kind::kAlign:
        align(d, step, frame, records[step.tensor], pos);
        break;
      case Step::Kind::kBind: {
        const PlanTensor& t = d.tensors[step.tensor];
        frame[step.slot] = Value(records[step.tensor].shape[pos[t.term_offset + step.term]]);
        break;
      }
      case Step::Kind::kAffine: {
        const PlanTensor& t = d.tensors[step.tensor];
        std::int64_t axis = pos[t.term_offset + step.term];
        std::int64_t size = records[step.tensor].shape[axis];
        std::int64_t e = step.prog ? eval_checked(d, *step.prog, frame, t.decl->name + ".shape").as_int() : 0;
        std::int64_t num = size - step.sign * e;
        if (num < 0 || num % step.coeff != 0)
          fail(d, fmt::format("{} axis {} is not {}; got {}", t.decl->name, axis,
                              t.decl->shape.axes[step.term].expr.source, size));
        frame[step.slot] = Value(num / step.coeff);
        break;
      }
      case Step::Kind::kAxisCheck: {
        const PlanTensor& t = d.tensors[step.tensor];
        std::int64_t axis = pos[t.term_offset + step.term];
        std::int64_t size = records[step.tensor].shape[axis];
        std::int64_t want = eval_checked(d, *step.prog, frame, t.decl->name + ".shape").as_int();
        if (size != want)
          fail(d, fmt::format("{} shape does not match {}: axis {} is {}, expected {}", t.decl->name,
                              t.decl->shape.axes[step.term].expr.source, axis, size, want));
        break;
      }
      case Step::Kind::kLet:
        frame[step.slot] = eval_checked(d, *step.prog, frame, "let " + d.entry->lets[step.index].name);
        break;
      case Step::Kind::kRule: {
        std::string where = fmt::format("shape_rules[{}]", step.index);
        if (!eval_checked(d, *step.prog, frame, where).as_bool())
          fail(d, fmt::format("{}: {}", where, d.entry->shape_rules[step.index].source));
        break;
      }
    }
  }
}

}  // namespace tileops::manifest::detail
