// The online softmax of attention over a 64-row query block on eight warps
// (MLA decode's shape: 64 heads, a value four times the key's width): S =
// Q K^T [64 x 64] and O [64 x 256]. Alone, S takes 2 x 4 warps and O 1 x 8
// (its squarest warp tiles); as row partners they share 2 x 4, so m, mx
// and l hold just each thread's rows.
module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @attention(%Q: !tile.tensor<?x64xf16>, %K: !tile.tensor<?x64xf16>, %V: !tile.tensor<?x256xf16>, %O: !tile.tensor<?x256xf16>)
      grid(affine_map<()[s0, s1, s2, s3] -> (s0 ceildiv 64)>) threads(256) blocks(%bx)
      attributes {dim_divisibility = array<i64: 1, 1, 1, 1>} {
    %Qs = tile.alloc_shared {name = "Qs"} : !tile.buffer<64x64xf16, shared>
    %Ks = tile.alloc_shared {name = "Ks"} : !tile.buffer<64x64xf16, shared>
    %Vs = tile.alloc_shared {name = "Vs"} : !tile.buffer<64x256xf16, shared>
    %s = tile.alloc_fragment {name = "s"} : !tile.buffer<64x64xf32, fragment>
    %p = tile.alloc_fragment {name = "p"} : !tile.buffer<64x64xf16, fragment>
    %o = tile.alloc_fragment {name = "o"} : !tile.buffer<64x256xf32, fragment>
    %m = tile.alloc_fragment {name = "m"} : !tile.buffer<64xf32, fragment>
    %mx = tile.alloc_fragment {name = "mx"} : !tile.buffer<64xf32, fragment>
    %l = tile.alloc_fragment {name = "l"} : !tile.buffer<64xf32, fragment>
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 64 : index
    %ninf = arith.constant 0xFF800000 : f32
    %row = arith.muli %bx, %c128 : index
    %n = tile.dim %K[0] : !tile.tensor<?x64xf16>
    %count = arith.ceildivui %n, %c64 : index
    tile.copy %Q[%row, %c0] to %Qs : !tile.tensor<?x64xf16> to !tile.buffer<64x64xf16, shared>
    tile.clear %o : !tile.buffer<64x256xf32, fragment>
    tile.clear %l : !tile.buffer<64xf32, fragment>
    tile.fill %m, %ninf : !tile.buffer<64xf32, fragment>, f32
    tile.pipelined %j = 0 to %count stages 2 {
      %kv = arith.muli %j, %c64 : index
      tile.copy %K[%kv, %c0] to %Ks : !tile.tensor<?x64xf16> to !tile.buffer<64x64xf16, shared>
      tile.copy %V[%kv, %c0] to %Vs : !tile.tensor<?x256xf16> to !tile.buffer<64x256xf16, shared>
      tile.clear %s : !tile.buffer<64x64xf32, fragment>
      tile.gemm %Qs, %Ks, %s {transpose_b} : !tile.buffer<64x64xf16, shared>, !tile.buffer<64x64xf16, shared>, !tile.buffer<64x64xf32, fragment>
      tile.reduce max %s into %mx {clear} : !tile.buffer<64x64xf32, fragment>, !tile.buffer<64xf32, fragment>
      tile.parallel (%i) in [64] {
        %old = tile.load %m[%i] : !tile.buffer<64xf32, fragment>
        %cur = tile.load %mx[%i] : !tile.buffer<64xf32, fragment>
        %top = arith.maximumf %old, %cur : f32
        %d = arith.subf %old, %top : f32
        %alpha = math.exp2 %d : f32
        %sum = tile.load %l[%i] : !tile.buffer<64xf32, fragment>
        %scaled = arith.mulf %sum, %alpha : f32
        tile.store %scaled, %l[%i] : !tile.buffer<64xf32, fragment>
        tile.store %alpha, %mx[%i] : !tile.buffer<64xf32, fragment>
        tile.store %top, %m[%i] : !tile.buffer<64xf32, fragment>
      }
      tile.parallel (%i, %k) in [64, 256] {
        %x = tile.load %o[%i, %k] : !tile.buffer<64x256xf32, fragment>
        %a = tile.load %mx[%i] : !tile.buffer<64xf32, fragment>
        %y = arith.mulf %x, %a : f32
        tile.store %y, %o[%i, %k] : !tile.buffer<64x256xf32, fragment>
      }
      tile.parallel (%i, %k) in [64, 64] {
        %x = tile.load %s[%i, %k] : !tile.buffer<64x64xf32, fragment>
        %top = tile.load %m[%i] : !tile.buffer<64xf32, fragment>
        %d = arith.subf %x, %top : f32
        %e = math.exp2 %d : f32
        tile.store %e, %s[%i, %k] : !tile.buffer<64x64xf32, fragment>
        %h = arith.truncf %e : f32 to f16
        tile.store %h, %p[%i, %k] : !tile.buffer<64x64xf16, fragment>
      }
      tile.reduce sum %s into %l : !tile.buffer<64x64xf32, fragment>, !tile.buffer<64xf32, fragment>
      tile.gemm %p, %Vs, %o : !tile.buffer<64x64xf16, fragment>, !tile.buffer<64x256xf16, shared>, !tile.buffer<64x256xf32, fragment>
    }
    tile.parallel (%i, %k) in [64, 256] {
      %x = tile.load %o[%i, %k] : !tile.buffer<64x256xf32, fragment>
      %sum = tile.load %l[%i] : !tile.buffer<64xf32, fragment>
      %y = arith.divf %x, %sum : f32
      tile.store %y, %o[%i, %k] : !tile.buffer<64x256xf32, fragment>
    }
    tile.copy %o to %O[%row, %c0] : !tile.buffer<64x256xf32, fragment> to !tile.tensor<?x256xf16>
  }
}
