//===- TestSm75Backend.h - A backend that lives outside backends/ -*- C++ -*-===//
//
// A test-only Turing (sm_75) backend with an MMA atom family and lowering of
// its own (TestSm75Backend.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_TESTS_BACKENDS_SM75_TESTSM75BACKEND_H
#define TESSERA_TESTS_BACKENDS_SM75_TESTSM75BACKEND_H

#include <memory>

#include "contract/Backend.h"

namespace tessera::testing {

/// A new instance of the test-only Turing backend ("test-sm75"): 64 KiB of
/// shared memory per block, ldmatrix, no cp.async; atoms
/// TEST_SM75_SIMT_1x1x2_F32 then the SIMT FMA atom.
std::unique_ptr<Backend> makeTestSm75Backend();

} // namespace tessera::testing

#endif // TESSERA_TESTS_BACKENDS_SM75_TESTSM75BACKEND_H
