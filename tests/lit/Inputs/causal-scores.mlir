// Causal attention scores of one query block against the key blocks up to
// its diagonal: Q and K are [batch, seq, heads, 64] tensors whose tiles are
// [rows, 64] slices (tensor_dims), the loop's count depends on the block
// index (causal early exit), and the parallel body masks keys past the
// query's row with comparisons of global indices and a select.
module {
  tile.kernel @causal_scores(%Q: !tile.tensor<?x?x?x64xf16>, %K: !tile.tensor<?x?x?x64xf16>, %O: !tile.tensor<?x?x?x64xf32>)
      grid(affine_map<()[s0, s1, s2, s3, s4, s5, s6, s7, s8] -> (s1 ceildiv 64, s2, s0)>) threads(128) blocks(%bx, %h, %b)
      attributes {dim_groups = {B = array<i64: 0, 3, 6>, S = array<i64: 1, 4, 7>, H = array<i64: 2, 5, 8>}} {
    %qs = tile.alloc_shared {name = "Qs"} : !tile.buffer<64x64xf16, shared>
    %ks = tile.alloc_shared {name = "Ks"} : !tile.buffer<64x64xf16, shared>
    %s = tile.alloc_fragment {name = "s"} : !tile.buffer<64x64xf32, fragment>
    %acc = tile.alloc_fragment {name = "acc"} : !tile.buffer<64x64xf32, fragment>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %row0 = arith.muli %bx, %c64 : index
    tile.copy %Q[%b, %row0, %h, %c0] to %qs {tensor_dims = array<i64: 1, 3>} : !tile.tensor<?x?x?x64xf16> to !tile.buffer<64x64xf16, shared>
    tile.clear %acc : !tile.buffer<64x64xf32, fragment>
    %seq = tile.dim %K[1] : !tile.tensor<?x?x?x64xf16>
    %blocks = arith.ceildivui %seq, %c64 : index
    %next = arith.addi %bx, %c1 : index
    %count = arith.minui %next, %blocks : index
    tile.pipelined %k = 0 to %count stages 2 {
      %col0 = arith.muli %k, %c64 : index
      tile.copy %K[%b, %col0, %h, %c0] to %ks {tensor_dims = array<i64: 1, 3>} : !tile.tensor<?x?x?x64xf16> to !tile.buffer<64x64xf16, shared>
      tile.clear %s : !tile.buffer<64x64xf32, fragment>
      tile.gemm %qs, %ks, %s {transpose_b} : !tile.buffer<64x64xf16, shared>, !tile.buffer<64x64xf16, shared>, !tile.buffer<64x64xf32, fragment>
      tile.parallel (%i, %j) in [64, 64] {
        %row = arith.addi %row0, %i : index
        %col = arith.addi %col0, %j : index
        %masked = arith.cmpi sgt, %col, %row : index
        %x = tile.load %s[%i, %j] : !tile.buffer<64x64xf32, fragment>
        %pos = arith.index_cast %row : index to i32
        %scale = arith.sitofp %pos : i32 to f32
        %y = arith.mulf %x, %scale : f32
        %ninf = arith.constant 0xFF800000 : f32
        %v = arith.select %masked, %ninf, %y : f32
        %big = arith.cmpf ogt, %v, %x : f32
        %w = arith.select %big, %v, %x : f32
        %a = tile.load %acc[%i, %j] : !tile.buffer<64x64xf32, fragment>
        %sum = arith.addf %a, %w : f32
        tile.store %sum, %acc[%i, %j] : !tile.buffer<64x64xf32, fragment>
      }
    }
    tile.copy %acc to %O[%b, %row0, %h, %c0] {tensor_dims = array<i64: 1, 3>} : !tile.buffer<64x64xf32, fragment> to !tile.tensor<?x?x?x64xf32>
  }
}
