// The verifier messages of block variables (tile.var, tile.var_get,
// tile.var_set, !tile.var) and of preconditions (tile.require), one
// negative case each (ir/TileStateOps.cpp).
// RUN: %tessera-opt %s --split-input-file --verify-diagnostics

// expected-error @+1 {{a variable holds index, i8, i32, i64, f32 or f64, not 'f16'}}
func.func private @half_var(!tile.var<f16>)

// -----

tile.kernel @var_in_parallel() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  %c0 = arith.constant 0 : index
  tile.parallel (%i) in [32] {
    // expected-error @+1 {{'tile.var' op is not valid inside tile.parallel: a variable is the block's; declare it before the loop}}
    %v = tile.var %c0 : !tile.var<index>
  }
}

// -----

tile.kernel @get_in_parallel() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  %c0 = arith.constant 0 : index
  %v = tile.var %c0 : !tile.var<index>
  tile.parallel (%i) in [32] {
    // expected-error @+1 {{'tile.var_get' op is not valid inside tile.parallel: read the variable before the loop}}
    %r = tile.var_get %v : !tile.var<index>
  }
}

// -----

tile.kernel @set_in_parallel() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  %c0 = arith.constant 0 : index
  %v = tile.var %c0 {name = "count"} : !tile.var<index>
  tile.parallel (%i) in [32] {
    // expected-error @+1 {{'tile.var_set' op is not valid inside tile.parallel: each thread would assign its own value to variable 'count'}}
    tile.var_set %v, %i : !tile.var<index>
  }
}

// -----

tile.kernel @set_in_pipelined() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %v = tile.var %c0 : !tile.var<index>
  tile.pipelined %k = 0 to %c4 stages 2 {
    // expected-error @+1 {{'tile.var_set' op assigns variable inside tile.pipelined, whose copies are issued iterations ahead of the body}}
    tile.var_set %v, %k : !tile.var<index>
  }
}

// -----

tile.kernel @require_nested(%A: !tile.tensor<?xf32>)
    grid(affine_map<()[s0] -> (1)>) threads(32) blocks(%bx) {
  %n = tile.dim %A[0] : !tile.tensor<?xf32>
  %c0 = arith.constant 0 : index
  %some = arith.cmpi ne, %n, %c0 : index
  tile.serial %i = 0 to %n {
    // expected-error @+1 {{'tile.require' op is a precondition of the kernel and only valid at the top level of its body (outside loops and branches)}}
    tile.require %some
  }
}

// -----

tile.kernel @require_block_index(%A: !tile.tensor<?xf32>)
    grid(affine_map<()[s0] -> (1)>) threads(32) blocks(%bx) {
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %bx, %c0 : index
  // expected-error @+1 {{'tile.require' op uses a value that is not an integer kernel argument; a precondition is built from dimensions, integer scalar arguments and constants}}
  tile.require %first
}

// -----

tile.kernel @require_read(%T: !tile.tensor<?xi32>)
    grid(affine_map<()[s0] -> (1)>) threads(32) blocks(%bx) {
  %c0 = arith.constant 0 : index
  %t = tile.read %T[%c0] : !tile.tensor<?xi32>
  %positive = arith.cmpi sgt, %t, %c0 : index
  // expected-error @+1 {{'tile.require' op cannot evaluate 'tile.read' at launch; a precondition is built from dimensions, integer scalar arguments, constants and integer arithmetic and comparisons}}
  tile.require %positive
}

// -----

tile.kernel @require_float(%x: f32) grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  %zero = arith.constant 0.0 : f32
  %positive = arith.cmpf ogt, %x, %zero : f32
  // expected-error @+1 {{'tile.require' op cannot evaluate 'arith.cmpf' at launch}}
  tile.require %positive
}
