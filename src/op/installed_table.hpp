// The implementation table an instance installs at construction (seeds: construction-and-calls
// §4 "Installing the implementation table"), with the contract checks and the selection rules
// of reference §3.2-§3.3.
#pragma once

#include <string>
#include <vector>

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

  // Selection over `interface` for `call` (reference §3.3). `force`: TILEOPS_FORCE's key, if any.
  // Appends "<key> (<Class>: <reason>)" for each refusal to `rejected`.
  struct Choice {
    int winner = -1;                    // index into types, or -1
    std::vector<int> ambiguous;         // several winners
    std::vector<std::string> rejected;  // refusals, installation order
    bool device_listed = false;         // some key lists the call's device type
  };
  Choice choose(int interface, const void* call, const DeviceFacts& facts,
                const std::string& force) const;
};

}  // namespace tileops::detail
