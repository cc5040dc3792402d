// The verifier messages of tile.wait_prior_kernels and
// tile.launch_dependents (ir/TileStateOps.cpp): where they may stand, and
// that the wait precedes every access to global memory.
// RUN: %tessera-opt %s --split-input-file --verify-diagnostics

tile.kernel @wait_after_copy(%P: !tile.tensor<?x64xf32>)
    grid(affine_map<()[s0] -> (s0)>) threads(64) blocks(%bx) {
  %s = tile.alloc_shared : !tile.buffer<1x64xf32, shared>
  %c0 = arith.constant 0 : index
  // expected-note @+1 {{the access}}
  tile.copy %P[%bx, %c0] to %s : !tile.tensor<?x64xf32> to !tile.buffer<1x64xf32, shared>
  // expected-error @+1 {{'tile.wait_prior_kernels' op follows an access to global memory ('tile.copy'): the kernels before this one may still be writing it; wait before the first access}}
  tile.wait_prior_kernels
}

// -----

tile.kernel @wait_after_nested_read(%P: !tile.tensor<?xi32>)
    grid(affine_map<()[s0] -> (1)>) threads(32) blocks(%bx) {
  %n = tile.dim %P[0] : !tile.tensor<?xi32>
  tile.serial %i = 0 to %n {
    // expected-note @+1 {{the access}}
    %v = tile.read %P[%i] : !tile.tensor<?xi32>
  }
  // expected-error @+1 {{follows an access to global memory ('tile.read')}}
  tile.wait_prior_kernels
}

// -----

tile.kernel @wait_twice() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  tile.wait_prior_kernels
  // expected-error @+1 {{'tile.wait_prior_kernels' op appears twice in one kernel}}
  tile.wait_prior_kernels
}

// -----

tile.kernel @wait_in_loop(%P: !tile.tensor<?xf32>)
    grid(affine_map<()[s0] -> (1)>) threads(32) blocks(%bx) {
  %n = tile.dim %P[0] : !tile.tensor<?xf32>
  tile.serial %i = 0 to %n {
    // expected-error @+1 {{'tile.wait_prior_kernels' op is only valid at the top level of the kernel's body (outside loops and branches): every thread waits before the kernel's first access to global memory}}
    tile.wait_prior_kernels
  }
}

// -----

tile.kernel @launch_in_loop(%P: !tile.tensor<?xf32>)
    grid(affine_map<()[s0] -> (1)>) threads(32) blocks(%bx) {
  %n = tile.dim %P[0] : !tile.tensor<?xf32>
  tile.serial %i = 0 to %n {
    // expected-error @+1 {{'tile.launch_dependents' op is only valid at the top level of the kernel's body (outside loops and branches)}}
    tile.launch_dependents
  }
}
