// OpClass: the static description of an op class — its manifest entry, kernel interfaces,
// implementation table and, for a composite, its stages. Each op class builds one, once, in a
// function-local static (Note [Explicit registration]: no static initialisers).
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <typeindex>
#include <vector>

#include "tileops/core/value.hpp"
#include "tileops/manifest/manifest.hpp"
#include "tileops/manifest/signature_plan.hpp"
#include "tileops/op/kernel.hpp"
#include "tileops/op/target.hpp"

namespace tileops {

class Op;

// Type-erased operations on one interface's call spec, so that caches hold any spec.
struct CallSpecOps {
  std::size_t (*hash)(const void*) = nullptr;
  bool (*equals)(const void*, const void*) = nullptr;
  std::shared_ptr<const void> (*copy)(const void*) = nullptr;
  std::string (*str)(const void*) = nullptr;
  const CallSpecBase& (*base)(const void*) = nullptr;
  // A copy placed on `device` with stated `facts` (Op::explain_call).
  std::shared_ptr<const void> (*placed)(const void*, const Device&, const DeviceFacts&) = nullptr;

  template <CallSpec C>
  static const CallSpecOps& of() {
    static const CallSpecOps ops{
        [](const void* c) { return static_cast<const C*>(c)->hash(); },
        [](const void* a, const void* b) {
          return *static_cast<const C*>(a) == *static_cast<const C*>(b);
        },
        [](const void* c) -> std::shared_ptr<const void> {
          return std::make_shared<const C>(*static_cast<const C*>(c));
        },
        [](const void* c) { return static_cast<const C*>(c)->str(); },
        [](const void* c) -> const CallSpecBase& { return *static_cast<const C*>(c); },
        [](const void* c, const Device& device,
           const DeviceFacts& facts) -> std::shared_ptr<const void> {
          auto on_device = std::make_shared<C>(*static_cast<const C*>(c));
          on_device->device = device;
          on_device->stated_facts = facts;
          return on_device;
        }};
    return ops;
  }
};

struct InterfaceDecl {
  std::string name;
  std::type_index interface_type = typeid(void);
  std::type_index call_type = typeid(void);
  const CallSpecOps* call_ops = nullptr;

  template <class I>
  static InterfaceDecl of(std::string name) {
    static_assert(std::derived_from<I, KernelInterface>);
    return {std::move(name), typeid(I), typeid(typename I::Call),
            &CallSpecOps::of<typename I::Call>()};
  }
};

// A stage of a composite op: the sub-op class it holds and how to build one.
struct StageDecl {
  std::string name;
  std::string op_name;
  std::type_index op_type = typeid(void);
  std::function<std::shared_ptr<Op>(const ParamMap&, const std::optional<Target>&)> make;
};

class OpClass {
 public:
  explicit OpClass(std::string name, const manifest::Manifest* manifest = nullptr);

  template <class I>
  OpClass& interface(std::string name) {
    interfaces_.push_back(InterfaceDecl::of<I>(std::move(name)));
    return *this;
  }
  OpClass& interface_decl(InterfaceDecl decl) {
    interfaces_.push_back(std::move(decl));
    return *this;
  }
  template <KernelImplementation Impl>
  OpClass& kernel(std::string key) {
    kernel_types_.push_back(KernelType::of<Impl>(std::move(key)));
    return *this;
  }
  OpClass& kernel_type(KernelType type) {
    kernel_types_.push_back(std::move(type));
    return *this;
  }
  // A stage holding `Sub` ops; Sub has `Sub(ParamMap, std::optional<Target>)` and op_class().
  template <class Sub>
  OpClass& stage(std::string name) {
    stages_.push_back(
        {std::move(name), Sub::op_class().name(), typeid(Sub),
         [](const ParamMap& p, const std::optional<Target>& t) -> std::shared_ptr<Op> {
           return std::make_shared<Sub>(p, t);
         }});
    return *this;
  }
  // Constructor arguments beyond the manifest params and the target (the validator's allowlist).
  OpClass& injected_parameters(std::vector<std::string> names) {
    injected_ = std::move(names);
    return *this;
  }

  const std::string& name() const noexcept { return name_; }
  const std::vector<InterfaceDecl>& interfaces() const noexcept { return interfaces_; }
  const std::vector<KernelType>& kernel_types() const noexcept { return kernel_types_; }
  const std::vector<StageDecl>& stages() const noexcept { return stages_; }
  const std::vector<std::string>& injected() const noexcept { return injected_; }
  bool is_composite() const noexcept { return !stages_.empty(); }

  const manifest::Manifest& manifest() const;
  const manifest::Entry& entry() const;
  // Checks the stages against the entry's composition (Note [Stages and the composition] in
  // op_class.cpp); ContractError naming the entry and the stage. Run when the class is registered
  // and whenever an Op is constructed from it.
  void check_composition() const;
  // The class's signature plan, compiled on first use (thread-safe) and shared by its instances.
  const std::shared_ptr<const manifest::SignaturePlan>& plan() const;

 private:
  std::string name_;
  const manifest::Manifest* manifest_;
  std::vector<InterfaceDecl> interfaces_;
  std::vector<KernelType> kernel_types_;
  std::vector<StageDecl> stages_;
  std::vector<std::string> injected_;
  // Compiled on first use; held by pointer so that an OpClass can be built by value.
  struct PlanCache {
    std::once_flag once;
    std::shared_ptr<const manifest::SignaturePlan> plan;
  };
  std::shared_ptr<PlanCache> plan_cache_ = std::make_shared<PlanCache>();
};

}  // namespace tileops
