// Every verifier message of tile.view (ir/TileViewOp.cpp), one negative case
// each, and a precondition that would read a view's size at launch.
// RUN: %tessera-opt %s --split-input-file --verify-diagnostics

tile.kernel @view_of_i32(%P: !tile.tensor<?xi32>)
    grid(affine_map<()[s0] -> (1)>) threads(32) blocks(%bx) {
  // expected-error @+1 {{'tile.view' op reads an address from a tensor of 'i32'; addresses come from i64 tensors}}
  %A = tile.view %P[%bx] : !tile.tensor<?xi32> to !tile.tensor<4x4xf32>
}

// -----

tile.kernel @view_indices(%P: !tile.tensor<?x?xi64>)
    grid(affine_map<()[s0, s1] -> (1)>) threads(32) blocks(%bx) {
  // expected-error @+1 {{'tile.view' op a pointer tensor of rank 2 needs 2 indices, got 1}}
  %A = tile.view %P[%bx] : !tile.tensor<?x?xi64> to !tile.tensor<4x4xf32>
}

// -----

tile.kernel @view_sizes(%P: !tile.tensor<?xi64>)
    grid(affine_map<()[s0] -> (1)>) threads(32) blocks(%bx) {
  // expected-error @+1 {{'tile.view' op the result type has 2 dynamic dimensions but 1 sizes are given; give one per '?', in order}}
  %A = tile.view %P[%bx] sizes(%bx) : !tile.tensor<?xi64> to !tile.tensor<?x?xf32>
}

// -----

tile.kernel @view_strides(%P: !tile.tensor<?xi64>)
    grid(affine_map<()[s0] -> (1)>) threads(32) blocks(%bx) {
  // expected-error @+1 {{'tile.view' op a view of rank 3 takes 2 strides (every dimension but the innermost), got 1}}
  %A = tile.view %P[%bx] strides(%bx) : !tile.tensor<?xi64> to !tile.tensor<2x4x4xf32>
}

// -----

tile.kernel @view_align(%P: !tile.tensor<?xi64>)
    grid(affine_map<()[s0] -> (1)>) threads(32) blocks(%bx) {
  // expected-error @+1 {{'tile.view' op align must be a power of two from the element's 4 bytes to 16, got 2}}
  %A = tile.view %P[%bx] {align = 2} : !tile.tensor<?xi64> to !tile.tensor<4x4xf32>
}

// -----

tile.kernel @view_align_static(%P: !tile.tensor<?xi64>)
    grid(affine_map<()[s0] -> (1)>) threads(32) blocks(%bx) {
  // expected-error @+1 {{'tile.view' op promises rows of a multiple of 16 bytes, but its innermost dimension is 3 elements (12 bytes)}}
  %A = tile.view %P[%bx] {align = 16} : !tile.tensor<?xi64> to !tile.tensor<4x3xf32>
}

// -----

tile.kernel @view_in_parallel(%P: !tile.tensor<?xi64>)
    grid(affine_map<()[s0] -> (1)>) threads(32) blocks(%bx) {
  tile.parallel (%i) in [32] {
    // expected-error @+1 {{'tile.view' op reads a block-uniform address and is not valid inside tile.parallel; make the view before the loop}}
    %A = tile.view %P[%i] : !tile.tensor<?xi64> to !tile.tensor<4x4xf32>
  }
}

// -----

tile.kernel @view_in_pipelined(%P: !tile.tensor<?xi64>)
    grid(affine_map<()[s0] -> (1)>) threads(32) blocks(%bx) {
  %c4 = arith.constant 4 : index
  tile.pipelined %k = 0 to %c4 stages 2 {
    // expected-error @+1 {{'tile.view' op is not valid inside tile.pipelined (its copies run ahead of the iteration that would make the view); make it before the loop}}
    %A = tile.view %P[%k] : !tile.tensor<?xi64> to !tile.tensor<4x4xf32>
  }
}

// -----

tile.kernel @view_size_precondition(%P: !tile.tensor<?xi64>, %S: !tile.tensor<?xi32>)
    grid(affine_map<()[s0, s1] -> (1)>) threads(32) blocks(%bx) {
  %m = tile.read %S[%bx] : !tile.tensor<?xi32>
  %A = tile.view %P[%bx] sizes(%m) : !tile.tensor<?xi64> to !tile.tensor<?x4xf32>
  %n = tile.dim %A[0] : !tile.tensor<?x4xf32>
  %c0 = arith.constant 0 : index
  %ok = arith.cmpi sgt, %n, %c0 : index
  // expected-error @+1 {{'tile.require' op cannot evaluate 'tile.dim' at launch: its tensor is a tile.view, whose sizes come from data}}
  tile.require %ok
}
