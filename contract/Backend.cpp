//===- Backend.cpp - Compute capabilities and the backend registry -------===//
//
// This file implements ComputeCapability parsing and comparison, and the
// registry that maps a `tile.target` to the backend that serves it.
//
//===----------------------------------------------------------------------===//

#include "contract/Backend.h"

#include "ir/TileDialect.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

namespace tessera {

std::optional<ComputeCapability> ComputeCapability::parse(llvm::StringRef text) {
  text.consume_front("sm_");
  ComputeCapability cc;
  cc.archSpecific = text.consume_back("a");
  unsigned value = 0;
  if (text.size() < 2 || text.getAsInteger(10, value))
    return std::nullopt;
  cc.major = value / 10;
  cc.minor = value % 10;
  return cc;
}

std::string ComputeCapability::str() const {
  return "sm_" + std::to_string(value()) + (archSpecific ? "a" : "");
}

bool ComputeCapability::isAtLeast(const ComputeCapability &other) const {
  if (other.archSpecific)
    return *this == other;
  return value() >= other.value();
}

std::string whyIllegal(const MmaAtom &atom, llvm::StringRef inputType, int64_t m, int64_t n,
                       int64_t k, int64_t threads) {
  if (!llvm::is_contained(atom.inputTypes, inputType))
    return (atom.name + " does not take " + inputType + " inputs").str();
  if (threads % atom.threads != 0)
    return atom.name + " needs a multiple of " + std::to_string(atom.threads) + " threads";
  if (m % atom.m != 0 || n % atom.n != 0 || k % atom.k != 0)
    return atom.name + " needs M, N, K multiples of " + std::to_string(atom.m) + ", " +
           std::to_string(atom.n) + ", " + std::to_string(atom.k) + " (tile is " +
           std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + ")";
  return "";
}

bool Backend::serves(const ComputeCapability &cc) const {
  for (const ComputeCapability &served : getServedCapabilities())
    if (served == cc)
      return true;
  return false;
}

BackendRegistry &BackendRegistry::global() {
  static BackendRegistry *registry = [] {
    auto *r = new BackendRegistry();
    registerAllBackends(*r);
    return r;
  }();
  return *registry;
}

void BackendRegistry::add(std::unique_ptr<Backend> backend) {
  backends_.push_back(std::move(backend));
}

const Backend *BackendRegistry::lookup(const ComputeCapability &cc) const {
  for (auto it = backends_.rbegin(); it != backends_.rend(); ++it)
    if ((*it)->serves(cc))
      return it->get();
  return nullptr;
}

const Backend *BackendRegistry::lookup(llvm::StringRef target, std::string &error) const {
  std::optional<ComputeCapability> cc = ComputeCapability::parse(target);
  if (!cc) {
    error = ("unknown target '" + target + "' (expected sm_XY or sm_XYa, e.g. sm_80, sm_90a)").str();
    return nullptr;
  }
  if (const Backend *backend = lookup(*cc))
    return backend;
  std::string served;
  llvm::raw_string_ostream os(served);
  for (const auto &backend : backends_) {
    os << (served.empty() ? "" : "; ") << backend->getName() << ":";
    for (const ComputeCapability &c : backend->getServedCapabilities())
      os << " " << c.str();
  }
  error = ("no backend serves target '" + target + "' (served: " + served + ")").str();
  return nullptr;
}

const Backend *getBackendFor(mlir::Operation *op, ComputeCapability *cc) {
  tile::TargetAttr target = tile::getTargetAttr(op);
  if (!target) {
    op->emitError() << "no compilation target: add `attributes {tile.target = "
                       "#tile.target<\"sm_80\">}` to the module or pass --target";
    return nullptr;
  }
  std::string error;
  const Backend *backend = BackendRegistry::global().lookup(target.getName(), error);
  if (!backend) {
    op->emitError() << error;
    return nullptr;
  }
  if (cc)
    *cc = *ComputeCapability::parse(target.getName());
  return backend;
}

} // namespace tessera
