//===- decode_parts_test.cc - The split count of decode steps --------------===//
//
// DecodeParts picks the parts that fill whole waves of the device: at 132
// resident blocks (an H100, one decode block an SM), 32 blocks a part take
// 4 parts (128 blocks, one wave) rather than 5 (160, a second wave 21%
// full), and 128 blocks a part take no split at all. The caps (parts of at
// least minKeys keys, at most maxParts) and degenerate inputs hold.
//
//===----------------------------------------------------------------------===//

#include "examples/decode_parts.h"

#include "gtest/gtest.h"

namespace tessera::examples {
namespace {

TEST(DecodePartsTest, FillsWholeWaves) {
  // Sequences x 8 key heads at the flash-decoding benchmark's lengths.
  EXPECT_EQ(DecodeParts(1 * 8, 8192, 132, 64), 16);
  EXPECT_EQ(DecodeParts(4 * 8, 8192, 132, 64), 4);
  EXPECT_EQ(DecodeParts(4 * 8, 32768, 132, 64), 4);
  EXPECT_EQ(DecodeParts(16 * 8, 4096, 132, 64), 1);
  EXPECT_EQ(DecodeParts(64 * 8, 1024, 132, 64), 1);
  // Two blocks an SM: twice the parts.
  EXPECT_EQ(DecodeParts(4 * 8, 32768, 264, 64), 8);
  EXPECT_EQ(DecodeParts(16 * 8, 4096, 264, 64), 2);
}

TEST(DecodePartsTest, KeepsItsCaps) {
  EXPECT_EQ(DecodeParts(1, 1000, 132, 64), 3);   // Parts of 256 keys at least.
  EXPECT_EQ(DecodeParts(1, 1 << 20, 132, 32), 32);  // The combine's most.
  EXPECT_EQ(DecodeParts(1, 100, 132, 64), 1);
  EXPECT_EQ(DecodeParts(1, 0, 132, 64), 1);
  EXPECT_EQ(DecodeParts(0, 8192, 0, 0), 1);
  EXPECT_EQ(DecodeParts(-5, 8192, -1, 64, 0), 1);
}

}  // namespace
}  // namespace tessera::examples
