// Effect branches, operator names and roofline evaluation (docs/manifest.md §7).
#include <fmt/format.h>

#include <cctype>

#include "manifest/plan_exec.hpp"
#include "manifest/plan_internal.hpp"
#include "tileops/core/error.hpp"

namespace tileops::manifest {

using detail::PlanData;

EffectBranch SignaturePlan::effect_branch(const ConstructionState& state,
                                          std::uint32_t presence) const {
  if (presence >= state.point->branches.size())
    throw CheckError(
        fmt::format("{}: presence key {} is outside the signature", data_->op_name, presence));
  return state.point->branches[presence];
}

std::uint32_t SignaturePlan::presence_of(std::span<const std::optional<Tensor>> inputs,
                                         bool has_out) const {
  const PlanData& d = *data_;
  std::uint32_t presence = has_out ? 1u << d.out_bit : 0u;
  for (int i = 0; i < d.num_inputs && i < static_cast<int>(inputs.size()); ++i) {
    const int bit = d.input(i).optional_bit;
    if (bit >= 0 && inputs[i] && inputs[i]->defined()) presence |= 1u << bit;
  }
  return presence;
}

RooflineResult SignaturePlan::eval_roofline(const SignatureCall& call) const {
  const PlanData& d = *data_;
  std::vector<Value> frame(call.frame().begin(), call.frame().end());
  auto records = call.tensors();
  for (std::size_t i = 0; i < d.tensors.size(); ++i) {
    frame[d.tensors[i].slot] =
        records[i].present ? Value(Tensor::meta(records[i].shape, records[i].dtype)) : Value();
  }
  frame[d.out_slot] = call.has_out() ? Value(true) : Value();
  RooflineResult r;
  auto eval_int = [&](const expr::Program& p, const char* field) {
    Value v = detail::eval_checked(d, p, frame, {"", field});
    if (!v.is_int())
      throw EvalError(fmt::format("{}: {} yields {}, not an int", d.op_name, field, v.repr()));
    return v.as_int();
  };
  if (d.flops) r.flops = eval_int(*d.flops, "roofline.flops");
  r.bytes = d.bytes ? eval_int(*d.bytes, "roofline.bytes") : call.derived_bytes();
  return r;
}

namespace {

// Abbreviations that stay one word in operator names (docs/manifest.md §7).
constexpr const char* kAbbreviations[] = {"W4A16", "W4A8", "W8A8", "FP8", "INT8", "INT4", "C2C",
                                          "TopK",  "TopP", "MinP", "MoE", "RoPE", "YaRN", "MLP",
                                          "FFT",   "RMS",  "NSA",  "MLA", "GQA",  "SSD",  "MHC"};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::string SignaturePlan::operator_stem(const std::string& family, const std::string& op) {
  std::string name = op;
  if (name.size() > 2 && name.compare(name.size() - 2, 2, "Op") == 0) name.resize(name.size() - 2);
  std::vector<std::string> words;
  std::size_t i = 0;
  while (i < name.size()) {
    bool matched = false;
    for (const char* abbr : kAbbreviations) {
      std::string a(abbr);
      if (name.compare(i, a.size(), a) == 0) {
        std::size_t next = i + a.size();
        if (next == name.size() || !std::islower(static_cast<unsigned char>(name[next]))) {
          words.push_back(lower(a));
          i = next;
          matched = true;
          break;
        }
      }
    }
    if (matched) continue;
    std::size_t j = i + 1;
    if (std::isupper(static_cast<unsigned char>(name[i]))) {
      // An acronym run ("ALiBi" aside) stays together up to the capital that starts the next word.
      while (j < name.size() && std::isupper(static_cast<unsigned char>(name[j])) &&
             (j + 1 >= name.size() || !std::islower(static_cast<unsigned char>(name[j + 1]))))
        ++j;
    }
    while (j < name.size() && !std::isupper(static_cast<unsigned char>(name[j]))) ++j;
    words.push_back(lower(name.substr(i, j - i)));
    i = j;
  }
  std::string stem;
  for (const auto& w : words) stem += (stem.empty() ? "" : "_") + w;
  if (stem.rfind(family, 0) == 0 && (stem.size() == family.size() || stem[family.size()] == '_'))
    return stem;
  return family + "_" + stem;
}

}  // namespace tileops::manifest
