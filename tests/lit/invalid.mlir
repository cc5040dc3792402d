// Every verifier message of the tile dialect (ir/TileDialect.cpp), one
// negative case each.
// RUN: %tessera-opt %s --split-input-file --verify-diagnostics

//===----------------------------------------------------------------------===//
// #tile.target
//===----------------------------------------------------------------------===//

// expected-error @+1 {{target 'foo' is not of the form sm_XY or sm_XYa (e.g. sm_80, sm_90a)}}
module attributes {tile.target = #tile.target<"foo">} {}

// -----

// expected-error @+1 {{target 'sm_' is not of the form sm_XY or sm_XYa}}
module attributes {tile.target = #tile.target<"sm_">} {}

// -----

// expected-error @+1 {{target 'sm_9x' is not of the form sm_XY or sm_XYa}}
module attributes {tile.target = #tile.target<"sm_9x">} {}

// -----

//===----------------------------------------------------------------------===//
// #tile.distribution
//===----------------------------------------------------------------------===//

tile.kernel @distribution_threads() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  // expected-error @+1 {{distribution threads must be in [1, 1024], got 0}}
  %a = tile.alloc_fragment {distribution = #tile.distribution<threads = 0, vector = 4>} : !tile.buffer<16xf32, fragment>
}

// -----

tile.kernel @distribution_vector() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  // expected-error @+1 {{distribution vector must be a positive power of two, got 3}}
  %a = tile.alloc_fragment {distribution = #tile.distribution<threads = 32, vector = 3>} : !tile.buffer<16xf32, fragment>
}

// -----

tile.kernel @distribution_vector_zero() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  tile.parallel (%i) in [16] attributes {
    // expected-error @+1 {{distribution vector must be a positive power of two, got 0}}
    distribution = #tile.distribution<threads = 32, vector = 0>} {
  }
}

// -----

// Kernel names become PTX entries: identifiers only.
// expected-error @+1 {{'tile.kernel' op name 'a b' is not an identifier}}
tile.kernel @"a b"() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
}

// -----

// expected-error @+1 {{'tile.kernel' op name '9lives' is not an identifier}}
tile.kernel @"9lives"() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
}

// -----

// expected-error @+1 {{'tile.kernel' op name 'a.b' is not an identifier}}
tile.kernel @"a.b"() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
}

// -----

//===----------------------------------------------------------------------===//
// #tile.mma_layout
//===----------------------------------------------------------------------===//

tile.kernel @mma_layout_tile() grid(affine_map<()[] -> (1)>) threads(128) blocks(%bx) {
  // expected-error @+1 {{mma_layout steps are powers of two up to 256, got m = 0, n = 0}}
  %a = tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 0, n = 0, warps_m = 4, warps_n = 1>} : !tile.buffer<64x64xf32, fragment>
}

// -----

tile.kernel @mma_layout_warps() grid(affine_map<()[] -> (1)>) threads(128) blocks(%bx) {
  // expected-error @+1 {{mma_layout warps must be positive and at most 32 in all, got warps_m = 4, warps_n = 0}}
  %a = tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 4, warps_n = 0>} : !tile.buffer<64x64xf32, fragment>
}

// -----

tile.kernel @mma_layout_bases_overlap() grid(affine_map<()[] -> (1)>) threads(128) blocks(%bx) {
  // expected-error @+1 {{mma_layout bases must place each element of its m16n8 step once (each row and column offset a distinct power of two below the step)}}
  %a = tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 4, warps_n = 1, lanes = [c2, c4, r1, r2, r2], registers = [c1, r8]>} : !tile.buffer<64x64xf32, fragment>
}

// -----

tile.kernel @mma_layout_bases_short() grid(affine_map<()[] -> (1)>) threads(128) blocks(%bx) {
  // expected-error @+1 {{mma_layout bases cover 8 x 8 elements of its m16n8 step}}
  %a = tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 4, warps_n = 1, lanes = [c2, c4, r1, r2, r4], registers = [c1]>} : !tile.buffer<64x64xf32, fragment>
}

// -----

tile.kernel @mma_layout_lane_bits() grid(affine_map<()[] -> (1)>) threads(128) blocks(%bx) {
  // expected-error @+1 {{mma_layout needs one basis per lane bit (5), got 4}}
  %a = tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 4, warps_n = 1, lanes = [c2, c4, r1, r2], registers = [c1, r8, r4]>} : !tile.buffer<64x64xf32, fragment>
}

// -----

tile.kernel @mma_layout_basis_word() grid(affine_map<()[] -> (1)>) threads(128) blocks(%bx) {
  // expected-error @+1 {{expected a basis: rN (N rows) or cN (N columns)}}
  %a = tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 4, warps_n = 1, lanes = [x2, c4, r1, r2, r4], registers = [c1, r8]>} : !tile.buffer<64x64xf32, fragment>
}

// -----

tile.kernel @mma_layout_rank() grid(affine_map<()[] -> (1)>) threads(128) blocks(%bx) {
  // expected-error @+1 {{'tile.alloc_fragment' op an mma_layout needs a 2-D fragment, got rank 1}}
  %a = tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 4, warps_n = 1>} : !tile.buffer<1024xf32, fragment>
}

// -----

tile.kernel @mma_layout_split() grid(affine_map<()[] -> (1)>) threads(128) blocks(%bx) {
  // expected-error @+1 {{'tile.parallel' op the iteration space (64 x 60) does not split into 2 x 2 warps of m16n8 steps (its extents must be multiples of 32 and 16)}}
  tile.parallel (%i, %j) in [64, 60] attributes {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 2, warps_n = 2>} {
  }
}

// -----

//===----------------------------------------------------------------------===//
// !tile.tensor
//===----------------------------------------------------------------------===//

// expected-error @+1 {{a tile tensor needs at least one dimension}}
tile.kernel @no_dims(%A: !tile.tensor<f32>) grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {}

// -----

// expected-error @+1 {{tensor dimensions must be positive or '?', got 0}}
tile.kernel @zero_dim(%A: !tile.tensor<0xf32>) grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {}

// -----

// expected-error @+1 {{unsupported tensor element type 'i16' (expected f16, bf16, f32, f64, f8E4M3FN, f8E5M2, i8, ui8, i32 or i64)}}
tile.kernel @i16(%A: !tile.tensor<4xi16>) grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {}

// -----

// expected-error @+1 {{unsupported tensor element type 'f8E4M3B11FNUZ'}}
tile.kernel @fp8(%A: !tile.tensor<4xf8E4M3B11FNUZ>) grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {}

// -----

//===----------------------------------------------------------------------===//
// !tile.buffer
//===----------------------------------------------------------------------===//

tile.kernel @buffer_no_dims() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  // expected-error @+1 {{a tile buffer needs at least one dimension}}
  %a = tile.alloc_fragment : !tile.buffer<f32, fragment>
}

// -----

tile.kernel @buffer_zero_dim() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  // expected-error @+1 {{buffer dimensions must be positive, got 0}}
  %a = tile.alloc_fragment : !tile.buffer<16x0xf32, fragment>
}

// -----

tile.kernel @buffer_too_large() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  // expected-error @+1 {{a tile buffer holds at most 2^31 elements}}
  %a = tile.alloc_shared : !tile.buffer<65536x65536xf16, shared>
}

// -----

tile.kernel @buffer_dynamic_dim() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  // expected-error @+1 {{expected static shape}}
  %a = tile.alloc_fragment : !tile.buffer<?xf32, fragment>
}

// -----

tile.kernel @buffer_element_type() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  // expected-error @+1 {{unsupported buffer element type 'i1' (expected f16, bf16, f32, f64, f8E4M3FN, f8E5M2, i8, ui8, i32 or i64)}}
  %a = tile.alloc_fragment : !tile.buffer<16xi1, fragment>
}

// -----

tile.kernel @buffer_scope() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  // expected-error @+1 {{unknown buffer scope 'local' (expected 'shared' or 'fragment')}}
  %a = tile.alloc_fragment : !tile.buffer<16xf32, local>
}

// -----

//===----------------------------------------------------------------------===//
// tile.kernel
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'tile.kernel' op argument #1 has type 'vector<4xf32>'; kernel arguments are !tile.tensor values or scalars}}
tile.kernel @vector_arg(%A: !tile.tensor<4xf32>, %v: vector<4xf32>)
    grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {}

// -----

// expected-error @+1 {{'tile.kernel' op argument #0 has type 'i16'; kernel arguments are !tile.tensor values or scalars}}
tile.kernel @i16_scalar(%s: i16) grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {}

// -----

// expected-error @+1 {{'tile.kernel' op grid map must use symbols only (the dynamic tensor dimensions), not dimensions: affine_map<(d0)[s0] -> (s0 ceildiv 256)>}}
tile.kernel @grid_dims(%A: !tile.tensor<?xf32>)
    grid(affine_map<(d0)[s0] -> (s0 ceildiv 256)>) threads(256) blocks(%bx) {}

// -----

// expected-error @+1 {{'tile.kernel' op grid map has 1 symbols but the tensor arguments have 3 dynamic dimensions; the map's symbols are those dimensions in argument order}}
tile.kernel @grid_symbols(%A: !tile.tensor<?x?xf32>, %B: !tile.tensor<?xf32>)
    grid(affine_map<()[s0] -> (s0 ceildiv 256)>) threads(256) blocks(%bx) {}

// -----

// expected-error @+1 {{'tile.kernel' op grid map has 1 symbols but the tensor arguments have 0 dynamic dimensions}}
tile.kernel @grid_symbols_static(%A: !tile.tensor<1024xf32>)
    grid(affine_map<()[s0] -> (s0 ceildiv 256)>) threads(256) blocks(%bx) {}

// -----

// expected-error @+1 {{'tile.kernel' op grid map has 1 symbols but the tensor arguments have 1 dynamic dimensions and size_args names 1 arguments}}
tile.kernel @size_args_symbols(%A: !tile.tensor<?xf32>, %n: i32)
    grid(affine_map<()[s0] -> (s0 ceildiv 256)>) threads(256) blocks(%bx)
    attributes {size_args = array<i64: 1>} {}

// -----

// expected-error @+1 {{'tile.kernel' op size_args names argument #1 of type 'f32'; a size argument is an i32 or i64 scalar}}
tile.kernel @size_args_float(%A: !tile.tensor<?xf32>, %n: f32)
    grid(affine_map<()[s0, s1] -> (s1 ceildiv 256)>) threads(256) blocks(%bx)
    attributes {size_args = array<i64: 1>} {}

// -----

// expected-error @+1 {{'tile.kernel' op size_args names argument #2, but the kernel has 2}}
tile.kernel @size_args_range(%A: !tile.tensor<?xf32>, %n: i32)
    grid(affine_map<()[s0, s1] -> (s1 ceildiv 256)>) threads(256) blocks(%bx)
    attributes {size_args = array<i64: 2>} {}

// -----

// expected-error @+1 {{'tile.kernel' op size_args must be increasing argument numbers}}
tile.kernel @size_args_order(%A: !tile.tensor<?xf32>, %n: i32, %m: i64)
    grid(affine_map<()[s0, s1, s2] -> (s1 ceildiv 256, s2)>) threads(256) blocks(%bx, %by)
    attributes {size_args = array<i64: 2, 1>} {}

// -----

// expected-error @+1 {{'tile.kernel' op grid must have 1 to 3 extents, got 4}}
tile.kernel @grid_four(%A: !tile.tensor<4xf32>)
    grid(affine_map<()[] -> (1, 1, 1, 1)>) threads(32) blocks(%a, %b, %c, %d) {}

// -----

// expected-error @+1 {{'tile.kernel' op grid must have 1 to 3 extents, got 0}}
tile.kernel @grid_none(%A: !tile.tensor<4xf32>)
    grid(affine_map<()[] -> ()>) threads(32) blocks() {}

// -----

// expected-error @+1 {{'tile.kernel' op threads per block must be in [1, 1024], got 0}}
tile.kernel @no_threads(%A: !tile.tensor<4xf32>) grid(affine_map<()[] -> (1)>) threads(0) blocks(%bx) {}

// -----

// expected-error @+1 {{'tile.kernel' op threads per block must be in [1, 1024], got 2048}}
tile.kernel @too_many_threads(%A: !tile.tensor<4xf32>) grid(affine_map<()[] -> (1)>) threads(2048) blocks(%bx) {}

// -----

// expected-error @+1 {{'tile.kernel' op multicast_blocks must be 2, 4 or 8 (a cluster's blocks), got 3}}
tile.kernel @multicast_three(%A: !tile.tensor<4xf32>) grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) attributes {multicast, multicast_blocks = 3 : i64} {}

// -----

// expected-error @+1 {{'tile.kernel' op multicast_blocks needs multicast}}
tile.kernel @multicast_blocks_alone(%A: !tile.tensor<4xf32>) grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) attributes {multicast_blocks = 4 : i64} {}

// -----

// expected-error @+1 {{'tile.kernel' op multicast cannot be combined with pingpong}}
tile.kernel @multicast_pingpong(%A: !tile.tensor<4xf32>) grid(affine_map<()[] -> (1, 1)>) threads(32) blocks(%bx, %by) attributes {multicast, pingpong} {}

// -----

// expected-error @+1 {{'tile.kernel' op threads per block must be in [1, 1024], got -1}}
tile.kernel @negative_threads(%A: !tile.tensor<4xf32>) grid(affine_map<()[] -> (1)>) threads(-1) blocks(%bx) {}

// -----

// expected-error @+1 {{'tile.kernel' op threads per block must be in [1, 1024], got -9223372036854775808}}
tile.kernel @min_threads(%A: !tile.tensor<4xf32>) grid(affine_map<()[] -> (1)>) threads(-9223372036854775808) blocks(%bx) {}

// -----

// expected-error @+1 {{'tile.kernel' op grid extents must be in [1, 2^31 - 1], got 0}}
tile.kernel @zero_grid() grid(affine_map<()[] -> (4, 0)>) threads(32) blocks(%bx, %by) {}

// -----

// expected-error @+1 {{'tile.kernel' op grid extents must be in [1, 2^31 - 1], got -2}}
tile.kernel @negative_grid() grid(affine_map<()[] -> (-2)>) threads(32) blocks(%bx) {}

// -----

// expected-error @+1 {{'tile.kernel' op grid extents must be in [1, 2^31 - 1], got 2147483648}}
tile.kernel @huge_grid() grid(affine_map<()[] -> (2147483648)>) threads(32) blocks(%bx) {}

// -----

// expected-error @+1 {{'tile.kernel' op multicast_blocks must be 2, 4 or 8 (a cluster's blocks), got -2}}
tile.kernel @negative_multicast() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) attributes {multicast, multicast_blocks = -2} {}

// -----

// expected-error @+1 {{'tile.kernel' op arg_names has 1 names for 2 arguments}}
tile.kernel @arg_names(%A: !tile.tensor<4xf32>, %B: !tile.tensor<4xf32>)
    grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) attributes {arg_names = ["A"]} {}

// -----

// expected-error @+1 {{'tile.kernel' op dim_groups entry 'N' must be an array<i64> of dynamic dimension numbers}}
tile.kernel @dim_groups_type(%A: !tile.tensor<?xf32>, %B: !tile.tensor<?xf32>)
    grid(affine_map<()[s0, s1] -> (s0 ceildiv 256)>) threads(256) blocks(%bx)
    attributes {dim_groups = {N = [0, 1]}} {}

// -----

// expected-error @+1 {{'tile.kernel' op dim_groups entry 'N' names dynamic dimension 2, but there are 2}}
tile.kernel @dim_groups_range(%A: !tile.tensor<?xf32>, %B: !tile.tensor<?xf32>)
    grid(affine_map<()[s0, s1] -> (s0 ceildiv 256)>) threads(256) blocks(%bx)
    attributes {dim_groups = {N = array<i64: 0, 2>}} {}

// -----

// expected-error @+1 {{'tile.kernel' op dim_groups entry 'M' names dynamic dimension -1, but there are 1}}
tile.kernel @dim_groups_negative(%A: !tile.tensor<?xf32>)
    grid(affine_map<()[s0] -> (s0 ceildiv 256)>) threads(256) blocks(%bx)
    attributes {dim_groups = {M = array<i64: -1>}} {}

// -----

// expected-error @+1 {{'tile.kernel' op body takes 3 arguments; expected the 1 kernel arguments and 1 block indices}}
tile.kernel @too_many_block_indices(%A: !tile.tensor<4xf32>)
    grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx, %by) {}

// -----

// expected-error @+1 {{'tile.kernel' op body argument #0 has type 'f32', expected '!tile.tensor<4xf32>'}}
"tile.kernel"() <{sym_name = "body_type", function_type = (!tile.tensor<4xf32>) -> (),
                  grid = affine_map<()[] -> (1)>, threads = 32 : i64}> ({
^bb0(%A: f32, %bx: index):
  "tile.yield"() : () -> ()
}) : () -> ()

// -----

// expected-error @+1 {{'tile.kernel' op block indices must be of type index}}
"tile.kernel"() <{sym_name = "block_index_type", function_type = (!tile.tensor<4xf32>) -> (),
                  grid = affine_map<()[] -> (1)>, threads = 32 : i64}> ({
^bb0(%A: !tile.tensor<4xf32>, %bx: i32):
  "tile.yield"() : () -> ()
}) : () -> ()

// -----

// expected-error @+1 {{'tile.yield' op expects parent op to be one of 'tile.kernel, tile.parallel, tile.pipelined, tile.if, tile.serial'}}
tile.yield

// -----

//===----------------------------------------------------------------------===//
// tile.dim
//===----------------------------------------------------------------------===//

tile.kernel @dim_range(%A: !tile.tensor<?x4xf32>)
    grid(affine_map<()[s0] -> (s0)>) threads(32) blocks(%bx) {
  // expected-error @+1 {{'tile.dim' op dimension 2 is out of range for a tensor of rank 2}}
  %n = tile.dim %A[2] : !tile.tensor<?x4xf32>
}

// -----

tile.kernel @dim_negative(%A: !tile.tensor<?x4xf32>)
    grid(affine_map<()[s0] -> (s0)>) threads(32) blocks(%bx) {
  // expected-error @+1 {{'tile.dim' op dimension -1 is out of range for a tensor of rank 2}}
  %n = tile.dim %A[-1] : !tile.tensor<?x4xf32>
}

// -----

//===----------------------------------------------------------------------===//
// tile.alloc_shared / tile.alloc_fragment
//===----------------------------------------------------------------------===//

tile.kernel @alloc_shared_scope() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  // expected-error @+1 {{'tile.alloc_shared' op allocates shared memory, but the result type '!tile.buffer<16xf32, fragment>' is not in scope 'shared'}}
  %a = tile.alloc_shared : !tile.buffer<16xf32, fragment>
}

// -----

tile.kernel @alloc_shared_offset() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  // expected-error @+1 {{'tile.alloc_shared' op offset must be in [0, 2^31 - 1], got -128}}
  %a = tile.alloc_shared {offset = -128} : !tile.buffer<16xf32, shared>
}

// -----

tile.kernel @alloc_shared_offset_large() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  // expected-error @+1 {{'tile.alloc_shared' op offset must be in [0, 2^31 - 1], got 2147483648}}
  %a = tile.alloc_shared {offset = 2147483648} : !tile.buffer<16xf32, shared>
}

// -----

tile.kernel @alloc_shared_stages() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  // expected-error @+1 {{'tile.alloc_shared' op stages must be in [1, 2^31 - 1], got -1}}
  %a = tile.alloc_shared {stages = -1} : !tile.buffer<16xf32, shared>
}

// -----

tile.kernel @alloc_shared_stages_zero() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  // expected-error @+1 {{'tile.alloc_shared' op stages must be in [1, 2^31 - 1], got 0}}
  %a = tile.alloc_shared {stages = 0} : !tile.buffer<16xf32, shared>
}

// -----

tile.kernel @alloc_shared_stages_large() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  // expected-error @+1 {{'tile.alloc_shared' op stages must be in [1, 2^31 - 1], got 9223372036854775807}}
  %a = tile.alloc_shared {stages = 9223372036854775807} : !tile.buffer<16xf32, shared>
}

// -----

tile.kernel @alloc_shared_staged_bytes() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  // expected-error @+1 {{'tile.alloc_shared' op 33554432 stages of 64 bytes exceed 2^31 - 1 bytes of shared memory}}
  %a = tile.alloc_shared {stages = 33554432} : !tile.buffer<16xf32, shared>
}

// -----

tile.kernel @alloc_fragment_scope() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  // expected-error @+1 {{'tile.alloc_fragment' op allocates a fragment, but the result type '!tile.buffer<16xf32, shared>' is not in scope 'fragment'}}
  %a = tile.alloc_fragment : !tile.buffer<16xf32, shared>
}

// -----

//===----------------------------------------------------------------------===//
// tile.copy
//===----------------------------------------------------------------------===//

tile.kernel @copy_tensor_to_tensor(%A: !tile.tensor<16xf32>, %B: !tile.tensor<16xf32>)
    grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'tile.copy' op copies between two global tensors are not supported; stage the tile through a shared buffer or a fragment}}
  tile.copy %A[%c0] to %B[%c0] : !tile.tensor<16xf32> to !tile.tensor<16xf32>
}

// -----

tile.kernel @copy_source_offsets(%A: !tile.tensor<?x64xf32>)
    grid(affine_map<()[s0] -> (s0 ceildiv 16)>) threads(128) blocks(%bx) {
  %a = tile.alloc_fragment : !tile.buffer<16x64xf32, fragment>
  // expected-error @+1 {{'tile.copy' op source tensor of rank 2 needs 2 offsets, got 1}}
  tile.copy %A[%bx] to %a : !tile.tensor<?x64xf32> to !tile.buffer<16x64xf32, fragment>
}

// -----

tile.kernel @copy_destination_offsets(%A: !tile.tensor<?xf32>)
    grid(affine_map<()[s0] -> (s0 ceildiv 16)>) threads(128) blocks(%bx) {
  %a = tile.alloc_fragment : !tile.buffer<16xf32, fragment>
  // expected-error @+1 {{'tile.copy' op destination tensor of rank 1 needs 1 offsets, got 2}}
  tile.copy %a to %A[%bx, %bx] : !tile.buffer<16xf32, fragment> to !tile.tensor<?xf32>
}

// -----

tile.kernel @copy_rank(%A: !tile.tensor<?xf32>)
    grid(affine_map<()[s0] -> (s0 ceildiv 16)>) threads(128) blocks(%bx) {
  %a = tile.alloc_fragment : !tile.buffer<4x4xf32, fragment>
  // expected-error @+1 {{'tile.copy' op tile '!tile.buffer<4x4xf32, fragment>' has rank 2 but the source tensor has rank 1; tensor_dims names the dimensions a slice spans}}
  tile.copy %A[%bx] to %a : !tile.tensor<?xf32> to !tile.buffer<4x4xf32, fragment>
}

// -----

tile.kernel @copy_slice_count(%Q: !tile.tensor<?x?x4x64xf16>)
    grid(affine_map<()[s0, s1] -> (1)>) threads(128) blocks(%bx) {
  %qs = tile.alloc_shared : !tile.buffer<64x64xf16, shared>
  // expected-error @+1 {{'tile.copy' op tensor_dims names 3 dimensions for a tile of rank 2}}
  tile.copy %Q[%bx, %bx, %bx, %bx] to %qs {tensor_dims = array<i64: 0, 1, 3>} : !tile.tensor<?x?x4x64xf16> to !tile.buffer<64x64xf16, shared>
}

// -----

tile.kernel @copy_slice_order(%Q: !tile.tensor<?x?x4x64xf16>)
    grid(affine_map<()[s0, s1] -> (1)>) threads(128) blocks(%bx) {
  %qs = tile.alloc_shared : !tile.buffer<64x64xf16, shared>
  // expected-error @+1 {{'tile.copy' op tensor_dims must be increasing dimensions of the source tensor of rank 4}}
  tile.copy %Q[%bx, %bx, %bx, %bx] to %qs {tensor_dims = array<i64: 3, 1>} : !tile.tensor<?x?x4x64xf16> to !tile.buffer<64x64xf16, shared>
}

// -----

tile.kernel @copy_slice_range(%O: !tile.tensor<?x?x4x64xf16>)
    grid(affine_map<()[s0, s1] -> (1)>) threads(128) blocks(%bx) {
  %o = tile.alloc_fragment : !tile.buffer<64x64xf16, fragment>
  // expected-error @+1 {{'tile.copy' op tensor_dims must be increasing dimensions of the destination tensor of rank 4}}
  tile.copy %o to %O[%bx, %bx, %bx, %bx] {tensor_dims = array<i64: 1, 4>} : !tile.buffer<64x64xf16, fragment> to !tile.tensor<?x?x4x64xf16>
}

// -----

tile.kernel @copy_slice_innermost(%Q: !tile.tensor<?x?x4x64xf16>)
    grid(affine_map<()[s0, s1] -> (1)>) threads(128) blocks(%bx) {
  %qs = tile.alloc_shared : !tile.buffer<64x4xf16, shared>
  // expected-error @+1 {{'tile.copy' op tensor_dims must span the source tensor's innermost dimension (the tile's rows are contiguous)}}
  tile.copy %Q[%bx, %bx, %bx, %bx] to %qs {tensor_dims = array<i64: 1, 2>} : !tile.tensor<?x?x4x64xf16> to !tile.buffer<64x4xf16, shared>
}

// -----

tile.kernel @copy_slice_of_buffers(%Q: !tile.tensor<?x64xf16>)
    grid(affine_map<()[s0] -> (1)>) threads(128) blocks(%bx) {
  %qs = tile.alloc_shared : !tile.buffer<64x64xf16, shared>
  %q = tile.alloc_fragment : !tile.buffer<64x64xf16, fragment>
  // expected-error @+1 {{'tile.copy' op tensor_dims needs a tensor operand}}
  tile.copy %qs to %q {tensor_dims = array<i64: 0, 1>} : !tile.buffer<64x64xf16, shared> to !tile.buffer<64x64xf16, fragment>
}

// -----

tile.kernel @copy_buffer_offsets() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  %a = tile.alloc_fragment : !tile.buffer<16xf32, fragment>
  %s = tile.alloc_shared : !tile.buffer<16xf32, shared>
  // expected-error @+1 {{'tile.copy' op source buffer takes no offsets; the whole buffer is the tile}}
  tile.copy %s[%bx] to %a : !tile.buffer<16xf32, shared> to !tile.buffer<16xf32, fragment>
}

// -----

tile.kernel @copy_shape() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  %a = tile.alloc_fragment : !tile.buffer<16x8xf32, fragment>
  %s = tile.alloc_shared : !tile.buffer<8x16xf32, shared>
  // expected-error @+1 {{'tile.copy' op source '!tile.buffer<8x16xf32, shared>' and destination '!tile.buffer<16x8xf32, fragment>' have different shapes}}
  tile.copy %s to %a : !tile.buffer<8x16xf32, shared> to !tile.buffer<16x8xf32, fragment>
}

// -----

tile.kernel @copy_float_to_int(%A: !tile.tensor<?xf32>)
    grid(affine_map<()[s0] -> (s0 ceildiv 16)>) threads(32) blocks(%bx) {
  %a = tile.alloc_fragment : !tile.buffer<16xi32, fragment>
  // expected-error @+1 {{'tile.copy' op cannot convert 'f32' to 'i32'; a copy converts between float types, between integer types and from integers to floats (tile.cast a float into an integer in a tile.parallel body)}}
  tile.copy %A[%bx] to %a : !tile.tensor<?xf32> to !tile.buffer<16xi32, fragment>
}

// -----

//===----------------------------------------------------------------------===//
// tile.fill
//===----------------------------------------------------------------------===//

tile.kernel @fill_type() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  %a = tile.alloc_fragment : !tile.buffer<16xf32, fragment>
  %v = arith.constant 1.0 : f16
  // expected-error @+1 {{'tile.fill' op fill value has type 'f16' but the buffer holds 'f32'}}
  tile.fill %a, %v : !tile.buffer<16xf32, fragment>, f16
}

// -----

//===----------------------------------------------------------------------===//
// tile.parallel
//===----------------------------------------------------------------------===//

tile.kernel @parallel_no_extents() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  // expected-error @+1 {{'tile.parallel' op needs at least one extent}}
  tile.parallel () in [] {
  }
}

// -----

tile.kernel @parallel_zero_extent() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  // expected-error @+1 {{'tile.parallel' op extents must be positive, got 0}}
  tile.parallel (%i, %j) in [4, 0] {
  }
}

// -----

tile.kernel @parallel_negative() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  // expected-error @+1 {{'tile.parallel' op extents must be positive, got -1}}
  tile.parallel (%i) in [-1] {
  }
}

// -----

tile.kernel @parallel_huge() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  // expected-error @+1 {{'tile.parallel' op iteration space exceeds 2^31 - 1 iterations}}
  tile.parallel (%i, %j) in [65536, 32768] {
  }
}

// -----

tile.kernel @parallel_ivs() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  // expected-error @+1 {{'tile.parallel' op has 1 extents but 2 induction variables}}
  tile.parallel (%i, %j) in [16] {
  }
}

// -----

tile.kernel @parallel_iv_type() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  // expected-error @+1 {{'tile.parallel' op induction variables must be of type index}}
  "tile.parallel"() <{extents = array<i64: 16>}> ({
  ^bb0(%i: i32):
    "tile.yield"() : () -> ()
  }) : () -> ()
}

// -----

tile.kernel @parallel_copy() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  %a = tile.alloc_fragment : !tile.buffer<16xf32, fragment>
  %s = tile.alloc_shared : !tile.buffer<16xf32, shared>
  tile.parallel (%i) in [16] {
    // expected-error @+1 {{'tile.copy' op is not allowed inside tile.parallel; the body computes one element at a time}}
    tile.copy %s to %a : !tile.buffer<16xf32, shared> to !tile.buffer<16xf32, fragment>
  }
}

// -----

tile.kernel @parallel_alloc_fragment() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  tile.parallel (%i) in [16] {
    // expected-error @+1 {{'tile.alloc_fragment' op is not allowed inside tile.parallel}}
    %a = tile.alloc_fragment : !tile.buffer<16xf32, fragment>
  }
}

// -----

tile.kernel @parallel_alloc_shared() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  tile.parallel (%i) in [16] {
    // expected-error @+1 {{'tile.alloc_shared' op is not allowed inside tile.parallel}}
    %a = tile.alloc_shared : !tile.buffer<16xf32, shared>
  }
}

// -----

tile.kernel @parallel_fill() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  %a = tile.alloc_fragment : !tile.buffer<16xf32, fragment>
  %v = arith.constant 0.0 : f32
  tile.parallel (%i) in [16] {
    // expected-error @+1 {{'tile.fill' op is not allowed inside tile.parallel}}
    tile.fill %a, %v : !tile.buffer<16xf32, fragment>, f32
  }
}

// -----

tile.kernel @parallel_clear() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  %a = tile.alloc_fragment : !tile.buffer<16xf32, fragment>
  tile.parallel (%i) in [16] {
    // expected-error @+1 {{'tile.clear' op is not allowed inside tile.parallel}}
    tile.clear %a : !tile.buffer<16xf32, fragment>
  }
}

// -----

tile.kernel @parallel_nested() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  tile.parallel (%i) in [16] {
    // expected-error @+1 {{'tile.parallel' op is not allowed inside tile.parallel}}
    tile.parallel (%j) in [16] {
    }
  }
}

// -----

//===----------------------------------------------------------------------===//
// tile.load / tile.store
//===----------------------------------------------------------------------===//

tile.kernel @load_indices() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  %a = tile.alloc_fragment : !tile.buffer<4x8xf32, fragment>
  tile.parallel (%i, %j) in [4, 8] {
    // expected-error @+1 {{'tile.load' op buffer '!tile.buffer<4x8xf32, fragment>' of rank 2 needs 2 indices, got 1}}
    %x = tile.load %a[%i] : !tile.buffer<4x8xf32, fragment>
  }
}

// -----

tile.kernel @store_indices() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  %a = tile.alloc_fragment : !tile.buffer<8xf32, fragment>
  %v = arith.constant 0.0 : f32
  tile.parallel (%i) in [8] {
    // expected-error @+1 {{'tile.store' op buffer '!tile.buffer<8xf32, fragment>' of rank 1 needs 1 indices, got 2}}
    tile.store %v, %a[%i, %i] : !tile.buffer<8xf32, fragment>
  }
}

// -----

tile.kernel @load_past_extent() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  %a = tile.alloc_fragment : !tile.buffer<4x8xf32, fragment>
  tile.parallel (%i, %j) in [4, 16] {
    // expected-error @+1 {{'tile.load' op index of dimension 1 is tile.parallel's induction variable 1, which runs to 16, past buffer '!tile.buffer<4x8xf32, fragment>' (size 8)}}
    %x = tile.load %a[%i, %j] : !tile.buffer<4x8xf32, fragment>
  }
}

// -----

tile.kernel @store_constant_index() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  %a = tile.alloc_shared : !tile.buffer<1x8xf32, shared>
  %v = arith.constant 0.0 : f32
  %c1 = arith.constant 1 : index
  tile.parallel (%j) in [8] {
    // expected-error @+1 {{'tile.store' op index 1 of dimension 0 is outside buffer '!tile.buffer<1x8xf32, shared>' (size 1)}}
    tile.store %v, %a[%c1, %j] : !tile.buffer<1x8xf32, shared>
  }
}

// -----

tile.kernel @load_result_type() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  %a = tile.alloc_fragment : !tile.buffer<8xf32, fragment>
  tile.parallel (%i) in [8] {
    // expected-error @+1 {{'tile.load' op failed to verify that result type is the buffer's element type}}
    %x = "tile.load"(%a, %i) : (!tile.buffer<8xf32, fragment>, index) -> f16
  }
}

// -----

tile.kernel @store_value_type() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  %a = tile.alloc_fragment : !tile.buffer<8xf32, fragment>
  %v = arith.constant 0 : i32
  tile.parallel (%i) in [8] {
    // expected-error @+1 {{'tile.store' op failed to verify that value type is the buffer's element type}}
    "tile.store"(%v, %a, %i) : (i32, !tile.buffer<8xf32, fragment>, index) -> ()
  }
}

// -----

tile.kernel @atomic_into_buffer() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  %a = tile.alloc_fragment : !tile.buffer<16xf32, fragment>
  %s = tile.alloc_shared : !tile.buffer<16xf32, shared>
  // expected-error @+1 {{'tile.copy' op atomic_add adds into a tensor tile; the destination is '!tile.buffer<16xf32, shared>'}}
  tile.copy %a to %s {atomic_add} : !tile.buffer<16xf32, fragment> to !tile.buffer<16xf32, shared>
}

// -----

tile.kernel @atomic_into_i8(%A: !tile.tensor<?xi8>)
    grid(affine_map<()[s0] -> (1)>) threads(32) blocks(%bx) {
  %a = tile.alloc_fragment : !tile.buffer<16xi32, fragment>
  // expected-error @+1 {{'tile.copy' op atomic_add into a tensor of 'i8'; atomics add f32, f64, f16, bf16, i32 or i64}}
  tile.copy %a to %A[%bx] {atomic_add} : !tile.buffer<16xi32, fragment> to !tile.tensor<?xi8>
}

// -----

tile.kernel @read_float(%A: !tile.tensor<?xf32>)
    grid(affine_map<()[s0] -> (1)>) threads(32) blocks(%bx) {
  // expected-error @+1 {{'tile.read' op reads an index from a tensor of 'f32'; indices come from i32 or i64 tensors}}
  %x = tile.read %A[%bx] : !tile.tensor<?xf32>
}

// -----

tile.kernel @read_rank(%A: !tile.tensor<?x?xi32>)
    grid(affine_map<()[s0, s1] -> (1)>) threads(32) blocks(%bx) {
  // expected-error @+1 {{'tile.read' op a tensor of rank 2 needs 2 indices, got 1}}
  %x = tile.read %A[%bx] : !tile.tensor<?x?xi32>
}

// -----

tile.kernel @read_in_parallel(%A: !tile.tensor<?xi32>)
    grid(affine_map<()[s0] -> (1)>) threads(32) blocks(%bx) {
  tile.parallel (%i) in [32] {
    // expected-error @+1 {{'tile.read' op reads a block-uniform index and is not valid inside tile.parallel; read it before the loop}}
    %x = tile.read %A[%i] : !tile.tensor<?xi32>
  }
}

// -----

tile.kernel @if_in_parallel() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  tile.parallel (%i) in [32] {
    %c = arith.cmpi eq, %i, %bx : index
    // expected-error @+1 {{'tile.if' op is block-uniform control flow and not valid inside tile.parallel; use arith.select for per-element choices}}
    tile.if %c {
    }
  }
}

// -----

tile.kernel @alloc_in_if() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  %c0 = arith.constant 0 : index
  %c = arith.cmpi eq, %bx, %c0 : index
  tile.if %c {
    // expected-error @+1 {{'tile.alloc_fragment' op allocates a buffer inside tile.if; allocate it before (buffers live across branches and loops)}}
    %a = tile.alloc_fragment : !tile.buffer<32xf32, fragment>
  }
}

// -----

tile.kernel @unroll_dynamic(%A: !tile.tensor<?xf32>)
    grid(affine_map<()[s0] -> (1)>) threads(32) blocks(%bx) {
  %n = tile.dim %A[0] : !tile.tensor<?xf32>
  // expected-error @+1 {{'tile.serial' op unrolls only a constant iteration count}}
  tile.serial %i = 0 to %n attributes {unroll} {
  }
}

// -----

tile.kernel @unroll_many() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  %c65 = arith.constant 65 : index
  // expected-error @+1 {{'tile.serial' op unrolls 65 iterations, over the limit of 64 (each is emitted on its own)}}
  tile.serial %i = 0 to %c65 attributes {unroll} {
  }
}

// -----

tile.kernel @serial_negative() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  %m1 = arith.constant -1 : index
  // expected-error @+1 {{'tile.serial' op iteration count must be non-negative, got -1}}
  tile.serial %i = 0 to %m1 {
  }
}

// -----

tile.kernel @serial_from_one() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{tile.serial loops start at 0}}
  tile.serial %i = 1 to %c4 {
  }
}

// -----

tile.kernel @until_axis_range(%A: !tile.tensor<?xf32>)
    grid(affine_map<()[s0] -> (1)>) threads(32) blocks(%bx) {
  %a = tile.alloc_fragment : !tile.buffer<16xf32, fragment>
  // expected-error @+1 {{'tile.copy' op until_axis 1 is not an axis of the tile of rank 1}}
  tile.copy %A[%bx] to %a until %bx {until_axis = 1 : i64} : !tile.tensor<?xf32> to !tile.buffer<16xf32, fragment>
}

// -----

tile.kernel @until_buffers() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  %a = tile.alloc_fragment : !tile.buffer<16xf32, fragment>
  %b = tile.alloc_fragment : !tile.buffer<16xf32, fragment>
  // expected-error @+1 {{'tile.copy' op until bounds a tensor's tile and needs a tensor operand}}
  tile.copy %a to %b until %bx : !tile.buffer<16xf32, fragment> to !tile.buffer<16xf32, fragment>
}

// -----

tile.kernel @atomic_outside_parallel(%H: !tile.tensor<?xi32>)
    grid(affine_map<()[s0] -> (1)>) threads(32) blocks(%bx) {
  %one = arith.constant 1 : i32
  // expected-error @+1 {{'tile.atomic' op combines one element per iteration and belongs in a tile.parallel body; a whole tile is added by tile.copy {atomic_add}}}
  %old = tile.atomic add %one, %H[%bx] : i32, !tile.tensor<?xi32>
}

// -----

tile.kernel @atomic_type(%H: !tile.tensor<?xi32>)
    grid(affine_map<()[s0] -> (1)>) threads(32) blocks(%bx) {
  tile.parallel (%i) in [32] {
    %one = arith.constant 1.0 : f32
    // expected-error @+1 {{'tile.atomic' op combines a value of type 'f32' into a tensor of 'i32'; the types must match}}
    %old = tile.atomic add %one, %H[%i] : f32, !tile.tensor<?xi32>
  }
}

// -----

tile.kernel @atomic_max_f16(%H: !tile.tensor<?xf16>)
    grid(affine_map<()[s0] -> (1)>) threads(32) blocks(%bx) {
  tile.parallel (%i) in [32] {
    %one = arith.constant 1.0 : f16
    // expected-error @+1 {{'tile.atomic' op atomic max of 'f16'; add takes f32, f64, f16, bf16, i32 and i64, max and min i32, i64 and f32}}
    %old = tile.atomic max %one, %H[%i] : f16, !tile.tensor<?xf16>
  }
}
