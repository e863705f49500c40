// The implementation table an instance installs at construction, with its contract checks
// (docs/seeds.md, construction-and-calls §4, "Installing the implementation table") and the
// selection rules (docs/framework.md, Kernel selection).
#pragma once

#include <string>
#include <vector>

#include "tileops/op/dispatch.hpp"
#include "tileops/op/kernel.hpp"
#include "tileops/op/op_class.hpp"

namespace tileops::detail {

struct InstalledInterface {
  const InterfaceDecl* decl = nullptr;
  std::vector<int> keys;  // indices into InstalledTable::types, installation order
};

struct InstalledTable {
  std::vector<KernelType> types;
  std::vector<std::vector<bool>> beats;  // beats[a][b]: a is preferred over b (transitive closure)
  std::vector<InstalledInterface> interfaces;

  // Merges the class's kernel types with those registered for the op and checks the contracts;
  // throws ContractError with the reference's messages.
  static InstalledTable install(const OpClass& cls, std::vector<KernelType> registered);

  // Selection over `interface` for `call` (docs/framework.md) on a device with `facts`. `force`:
  // TILEOPS_FORCE's key when it names a key of this interface, else empty.
  struct Choice {
    std::vector<ImplementationVerdict>
        verdicts;  // one per key of the interface, installation order
    DispatchOutcome outcome = DispatchOutcome::kNothingServes;
    int winner = -1;             // kSelected: index into types
    std::vector<int> ambiguous;  // kAmbiguous: indices into types
  };
  Choice choose(int interface, const void* call, const DeviceFacts& facts,
                const std::string& force) const;
};

}  // namespace tileops::detail
