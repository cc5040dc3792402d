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
  // expected-error @+1 {{'tile.require' op cannot evaluate 'tile.read' at launch: a precondition is built from dimensions, integer scalar arguments, constants and integer arithmetic and comparisons}}
  tile.require %positive
}

// -----

tile.kernel @require_float(%x: f32) grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  %zero = arith.constant 0.0 : f32
  %positive = arith.cmpf ogt, %x, %zero : f32
  // expected-error @+1 {{'tile.require' op cannot evaluate 'arith.cmpf' at launch}}
  tile.require %positive
}

// -----

tile.kernel @require_unsigned(%A: !tile.tensor<?xf32>)
    grid(affine_map<()[s0] -> (1)>) threads(32) blocks(%bx) {
  %n = tile.dim %A[0] : !tile.tensor<?xf32>
  %c8 = arith.constant 8 : index
  %small = arith.cmpi ult, %n, %c8 : index
  // expected-error @+1 {{'tile.require' op cannot evaluate 'arith.cmpi' at launch: comparisons are signed (or == and !=)}}
  tile.require %small
}

// -----

tile.kernel @require_narrow(%h: i32) grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  %c2 = arith.constant 2 : i32
  %twice = arith.muli %h, %c2 : i32
  %c0 = arith.constant 0 : i32
  %positive = arith.cmpi sgt, %twice, %c0 : i32
  // expected-error @+1 {{'tile.require' op cannot evaluate 'arith.muli' at launch: arithmetic on 32-bit values may wrap; convert them to indices first}}
  tile.require %positive
}

// -----

tile.kernel @require_huge(%A: !tile.tensor<?xf32>)
    grid(affine_map<()[s0] -> (1)>) threads(32) blocks(%bx) {
  %d0 = tile.dim %A[0] : !tile.tensor<?xf32>
  %d1 = arith.addi %d0, %d0 : index
  %d2 = arith.addi %d1, %d1 : index
  %d3 = arith.addi %d2, %d2 : index
  %d4 = arith.addi %d3, %d3 : index
  %d5 = arith.addi %d4, %d4 : index
  %d6 = arith.addi %d5, %d5 : index
  %d7 = arith.addi %d6, %d6 : index
  %d8 = arith.addi %d7, %d7 : index
  %d9 = arith.addi %d8, %d8 : index
  %d10 = arith.addi %d9, %d9 : index
  %d11 = arith.addi %d10, %d10 : index
  %d12 = arith.addi %d11, %d11 : index
  %d13 = arith.addi %d12, %d12 : index
  %d14 = arith.addi %d13, %d13 : index
  %d15 = arith.addi %d14, %d14 : index
  %d16 = arith.addi %d15, %d15 : index
  %d17 = arith.addi %d16, %d16 : index
  %d18 = arith.addi %d17, %d17 : index
  %d19 = arith.addi %d18, %d18 : index
  %d20 = arith.addi %d19, %d19 : index
  %d21 = arith.addi %d20, %d20 : index
  %d22 = arith.addi %d21, %d21 : index
  %d23 = arith.addi %d22, %d22 : index
  %d24 = arith.addi %d23, %d23 : index
  %d25 = arith.addi %d24, %d24 : index
  %d26 = arith.addi %d25, %d25 : index
  %d27 = arith.addi %d26, %d26 : index
  %d28 = arith.addi %d27, %d27 : index
  %d29 = arith.addi %d28, %d28 : index
  %d30 = arith.addi %d29, %d29 : index
  %d31 = arith.addi %d30, %d30 : index
  %d32 = arith.addi %d31, %d31 : index
  %d33 = arith.addi %d32, %d32 : index
  %d34 = arith.addi %d33, %d33 : index
  %d35 = arith.addi %d34, %d34 : index
  %d36 = arith.addi %d35, %d35 : index
  %d37 = arith.addi %d36, %d36 : index
  %d38 = arith.addi %d37, %d37 : index
  %d39 = arith.addi %d38, %d38 : index
  %d40 = arith.addi %d39, %d39 : index
  %c0 = arith.constant 0 : index
  %positive = arith.cmpi sge, %d40, %c0 : index
  // expected-error @+1 {{'tile.require' op has more than 256 terms or 32 levels of nesting; state it as several preconditions}}
  tile.require %positive
}

// -----

// A use before its definition (a cycle, which the dominance check reports
// only after the ops' own verifiers) stops at the depth limit.
tile.kernel @require_cycle(%A: !tile.tensor<?xf32>)
    grid(affine_map<()[s0] -> (1)>) threads(32) blocks(%bx) {
  %d0 = tile.dim %A[0] : !tile.tensor<?xf32>
  %a = arith.addi %b, %d0 : index
  %b = arith.addi %a, %d0 : index
  %c0 = arith.constant 0 : index
  %positive = arith.cmpi sge, %b, %c0 : index
  // expected-error @+1 {{'tile.require' op has more than 256 terms or 32 levels of nesting}}
  tile.require %positive
}
