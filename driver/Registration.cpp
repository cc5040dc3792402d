//===- Registration.cpp - The one list of built-in backends --------------===//
//
// This file is the registration list: adding a backend adds its folder and
// one declaration and one call here (and its library to driver/BUILD).
//
//===----------------------------------------------------------------------===//

#include "contract/Backend.h"

namespace tessera {

void registerSm60Backend(BackendRegistry &registry);
void registerSm70Backend(BackendRegistry &registry);
void registerSm80Backend(BackendRegistry &registry);
void registerSm90Backend(BackendRegistry &registry);
void registerSm100Backend(BackendRegistry &registry);

void registerAllBackends(BackendRegistry &registry) {
  registerSm60Backend(registry);
  registerSm70Backend(registry);
  registerSm80Backend(registry);
  registerSm90Backend(registry);
  registerSm100Backend(registry);
}

} // namespace tessera
