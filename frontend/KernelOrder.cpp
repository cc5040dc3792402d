//===- KernelOrder.cpp - A kernel's start overlapping the previous end ---===//
//
// KernelBuilder::WaitForPriorKernels (tile.wait_prior_kernels) and
// KernelBuilder::LaunchDependents (tile.launch_dependents): on targets with
// grid dependency control, a kernel that waits may be launched while the
// kernel before it on the stream is still running.
//
//===----------------------------------------------------------------------===//

#include "frontend/internal/BuilderState.h"

namespace tessera {

using namespace detail;

namespace {

/// The state in which `what` may emit its op at the top level of the Launch
/// body, or null after an error.
BuilderState *topLevel(BuilderState &s, const char *what, mlir::Location at) {
  if (BuilderState::current != &s) {
    s.error(std::string(what) + " is only valid inside KernelBuilder::Launch's body", at);
    return nullptr;
  }
  if (!mlir::isa<tile::KernelOp>(s.b().getInsertionBlock()->getParentOp())) {
    s.error(std::string(what) +
                " inside a loop or branch; call it in Launch's body, outside them (every "
                "thread of every block runs it)",
            at);
    return nullptr;
  }
  return &s;
}

} // namespace

void KernelBuilder::WaitForPriorKernels(SourceLoc loc) {
  mlir::Location at = state_->loc(loc);
  if (BuilderState *s = topLevel(*state_, "WaitForPriorKernels", at)) {
    auto statement = s->enter(loc);
    tile::WaitPriorKernelsOp::create(s->b(), at);
  }
}

void KernelBuilder::LaunchDependents(SourceLoc loc) {
  mlir::Location at = state_->loc(loc);
  if (BuilderState *s = topLevel(*state_, "LaunchDependents", at)) {
    auto statement = s->enter(loc);
    tile::LaunchDependentsOp::create(s->b(), at);
  }
}

} // namespace tessera
