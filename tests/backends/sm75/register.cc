//===- register.cc - Adds the test-only Turing backend when linked --------===//

#include "contract/Backend.h"
#include "tests/backends/sm75/TestSm75Backend.h"

namespace tessera::testing {
namespace {

/// Registers the backend with the global registry when this library is
/// linked in (alwayslink), as an out-of-tree plugin would.
const bool kRegistered = [] {
  BackendRegistry::global().add(makeTestSm75Backend());
  return true;
}();

} // namespace
} // namespace tessera::testing
