//===- TileOps.td - Operations of the tile dialect ---------*- tablegen -*-===//
//
// This file defines the operations of the `tile` dialect: the kernel, buffer
// allocation per memory scope, tile copies, fills and elementwise parallel
// loop nests with element loads and stores.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_IR_TILEOPS_TD
#define TESSERA_IR_TILEOPS_TD

include "ir/TileBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

class Tile_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tile_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// tile.kernel
//===----------------------------------------------------------------------===//

def Tile_KernelOp : Tile_Op<"kernel", [
    Symbol, IsolatedFromAbove, SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "A GPU kernel launched over a grid of thread blocks";
  let description = [{
    A kernel takes tensors in global memory (`!tile.tensor`) and scalars
    (integers, floats, index). It is launched over a grid of up to three
    dimensions whose extents are given by an affine map; the map's symbols
    are the dynamic dimensions of the tensor arguments, in argument order
    (e.g. `s0 ceildiv 1024` for the length of a dynamic 1-D tensor). Each
    block runs `threads` threads. The body's entry block takes the kernel
    arguments followed by one `index` block coordinate per grid dimension.

    `dim_groups` (optional) names dynamic dimensions that must be equal at
    launch, e.g. `{N = array<i64: 0, 1, 2>}` when A, B and C all have length
    N; `arg_names` (optional) keeps the author's argument names for the
    runtime's messages; `dim_divisibility` (optional, one entry per dynamic
    dimension) promises that each dynamic size is a multiple of its entry,
    which the compiler uses to prove vector alignment and the runtime checks
    at launch.

    `size_args` (optional) lists integer scalar arguments (i32 or i64, by
    argument number, increasing) that size the grid: they are the map's
    symbols after the tensor dimensions, in that order. A variable-length
    batch's kernel takes its longest sequence so: `grid(affine_map<()[s0, s1,
    s2] -> (s2 ceildiv 128, s0)>)` with `size_args = array<i64: 3>` for a
    max_seqlen argument #3. The runtime refuses a negative value.

    `pingpong` (optional) asks for the ping-pong schedule where the target's
    pipelining has one (warp specialization on sm_90a): each launched block
    runs two blocks of the grid adjacent along y, one per group of consumer
    warps, which take turns on the tensor cores so one's epilogue runs while
    the other's main loop does. The blocks' semantics are unchanged; targets
    without the schedule, or kernels that do not fit it (no warp-specialized
    pipelined loop), run the grid as written.

    `persistent` (optional) launches as many blocks as the device holds at
    once, each looping over the grid's blocks (x fastest); with a
    warp-specialized pipelined loop the producer then runs ahead into the
    next block's iterations while the consumers run the epilogue. Not
    combined with `pingpong`.

    `stream_k` (optional, with `persistent`) splits the grid's last partial
    wave of blocks along the pipelined loop's iterations over all launched
    blocks: a block adds its part of a block's accumulators into a workspace
    the runtime provides, and the block that computed the first iterations
    adds the others' parts before running the epilogue. It applies to a
    kernel whose one pipelined loop holds copies, gemms and arithmetic, whose
    accumulators are cleared before it, and whose iteration count does not
    depend on the block; elsewhere the kernel stays persistent (a remark).

    `multicast` (optional; not with `pingpong`) launches thread block
    clusters of n blocks along x (`multicast_blocks`: 2, 4 or 8, default 2)
    where the target has them and the first pipelined loop is
    warp-specialized: when all blocks of a cluster load the same tile of the
    loop's largest copy of at least n panels in every iteration (each block
    recomputes its neighbors' tiles to check), each loads 1/n of its panels
    and multicasts them to all, cutting that copy's traffic from L2 to 1/n;
    blocks whose neighbors load other tiles load alone. A persistent kernel
    decides per tile (tiles t ^ j, j < n, group up) and needs an iteration
    count that does not depend on the tile; with `stream_k` the whole tiles
    multicast so and the pieces of split tiles load alone. Elsewhere the
    kernel runs as written (a remark).

    `edge_loop` (optional) gives the cp.async pipelining strategy (sm_80) a
    third loop body for tiles on the M or N edge: while an iteration's
    copies lie inside their tensors along the dimensions the iteration moves
    (K), their byte counts along the others are computed once per tile
    instead of every iteration (edge iterations otherwise cost 1.15-1.5x an
    interior one, which a static stream-K schedule cannot balance). It
    changes interior tiles' code by nothing, but the larger kernel measured
    2-3% slower on shapes without edges: a tuning option. Other strategies ignore it.

    Example:

    ```mlir
    tile.kernel @scale(%X: !tile.tensor<?xf32>, %Y: !tile.tensor<?xf32>)
        grid(affine_map<()[s0, s1] -> (s0 ceildiv 512)>) threads(128)
        blocks(%bx) attributes {dim_groups = {N = array<i64: 0, 1>}} {
      ...
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, TypeAttrOf<FunctionType>:$function_type,
                       AffineMapAttr:$grid, I64Attr:$threads,
                       OptionalAttr<DictionaryAttr>:$dim_groups,
                       OptionalAttr<StrArrayAttr>:$arg_names,
                       OptionalAttr<DenseI64ArrayAttr>:$dim_divisibility,
                       OptionalAttr<DenseI64ArrayAttr>:$size_args,
                       UnitAttr:$pingpong, UnitAttr:$persistent, UnitAttr:$stream_k,
                       UnitAttr:$multicast, OptionalAttr<I64Attr>:$multicast_blocks,
                       UnitAttr:$edge_loop);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "::llvm::StringRef":$name, "::mlir::FunctionType":$type,
                   "::mlir::AffineMap":$grid, "int64_t":$threads)>
  ];
  let extraClassDeclaration = [{
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
    unsigned getNumKernelArguments() { return getFunctionType().getNumInputs(); }
    /// The kernel argument `i` as seen inside the body.
    ::mlir::BlockArgument getKernelArgument(unsigned i) { return getBodyBlock().getArgument(i); }
    /// The block coordinates (one per grid dimension).
    ::llvm::ArrayRef<::mlir::BlockArgument> getBlockIndices() {
      return getBodyBlock().getArguments().drop_front(getNumKernelArguments());
    }
    /// The total number of dynamic tensor dimensions (the grid map's first
    /// symbols).
    int64_t getNumDynamicDims();
    /// The grid map's symbols: the dynamic tensor dimensions, then the size
    /// arguments (`size_args`).
    int64_t getNumGridSymbols();
    /// The promised divisor of dynamic dimension `i` (1 if none).
    int64_t getDynamicDimDivisibility(int64_t i);
    /// The author's name for argument `i`, or "argI".
    std::string getArgumentName(unsigned i);
  }];
}

def Tile_YieldOp : Tile_Op<"yield", [Pure, Terminator,
    ParentOneOf<["KernelOp", "ParallelOp", "PipelinedOp", "IfOp", "SerialOp"]>]> {
  let summary = "Ends the body of a tile region";
  let description = [{
    The terminator of `tile.kernel`, `tile.parallel`, `tile.pipelined`, `tile.if` and
    `tile.serial` bodies. It is implied
    in the custom syntax and takes no operands.

    Example: `tile.yield`
  }];
  let assemblyFormat = "attr-dict";
}

//===----------------------------------------------------------------------===//
// Tensors and buffers
//===----------------------------------------------------------------------===//

def Tile_DimOp : Tile_Op<"dim", [Pure]> {
  let summary = "The size of one dimension of a tensor";
  let description = [{
    Returns dimension `index` of a global tensor: the static size, or for a
    dynamic dimension the value passed at launch.

    Example: `%n = tile.dim %A[0] : !tile.tensor<?xf32>`
  }];
  let arguments = (ins Tile_AnyTensor:$tensor, I64Attr:$index);
  let results = (outs Index:$result);
  let assemblyFormat = "$tensor `[` $index `]` attr-dict `:` type($tensor)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tile_ReadOp : Tile_Op<"read", [MemoryEffects<[MemRead]>]> {
  let summary = "Reads one element of an integer tensor as an index";
  let description = [{
    Reads the element of an i32 or i64 tensor at `indices`, sign-extended
    to an index: a value that comes from data (a block table's page, a
    sequence's start in a packed batch, a group's offset) and that tile
    offsets, loop counts and comparisons may use. Every thread of the block
    reads the same element, so the value is block-uniform; it is therefore
    not valid inside tile.parallel. Indices outside the tensor (negative
    ones too) read 0. The value is used as it is: a tile offset past the
    end reads as zeros and is not written, as any copy's bounds are
    checked, but the copies check the upper bound only, so a negative value
    (a table's -1 for "no page") must not reach a tile offset.

    Example: `%page = tile.read %table[%b, %k] : !tile.tensor<?x?xi32>`
  }];
  let arguments = (ins Tile_AnyTensor:$tensor, Variadic<Index>:$indices);
  let results = (outs Index:$result);
  let assemblyFormat = "$tensor `[` $indices `]` attr-dict `:` type($tensor)";
  let hasVerifier = 1;
}

def Tile_ViewOp : Tile_Op<"view", [AttrSizedOperandSegments,
                                   MemoryEffects<[MemRead]>]> {
  let summary = "A tensor whose address is read from data (a pointer array)";
  let description = [{
    A global tensor at the address held in the i64 element `indices` of
    `pointers` (a device pointer a user wrote there: CUTLASS's and
    torch's pointer-array grouped GEMMs pass one per group), with the result
    type's element type and shape: `sizes` gives the dynamic dimensions in
    order. `strides` (optional) gives the element stride of every dimension
    but the innermost, whose elements are contiguous; without it the tensor
    is dense row-major. Every thread of the block reads the same pointer, so
    the view is block-uniform: it is valid in the kernel's body, a tile.if's
    or a tile.serial's, but not inside tile.parallel or tile.pipelined.
    Copies, tile.dim and tile.read take it as any tensor; copies check its
    bounds, so a view of size 0 (an empty group's, null pointer) is never
    dereferenced.

    `align` (bytes, a power of two up to 16, at least the element's size)
    promises that the address, every stride and the innermost size are
    multiples of it, which lets copies move 16-byte vectors; the kernel
    checks the promise and stops with a trap (the launch fails) where it is
    broken. Without it, elements move one at a time. Bulk tensor copies
    (TMA) need a tensor map the host builds from a known address, so a view
    takes the cp.async or plain load path; the remarks say so.

    Example:

    ```mlir
    %A = tile.view %ptrs[%g] sizes(%m, %k) {align = 16} : !tile.tensor<?xi64> to !tile.tensor<?x?xf16>
    %B = tile.view %ptrs[%g] sizes(%k) strides(%ld) : !tile.tensor<?xi64> to !tile.tensor<?x128xf16>
    ```
  }];
  let arguments = (ins Tile_AnyTensor:$pointers, Variadic<Index>:$indices,
                       Variadic<Index>:$sizes, Variadic<Index>:$strides,
                       OptionalAttr<I64Attr>:$align);
  let results = (outs Tile_AnyTensor:$result);
  let assemblyFormat = [{
    $pointers `[` $indices `]` (`sizes` `(` $sizes^ `)`)? (`strides` `(` $strides^ `)`)?
    attr-dict `:` type($pointers) `to` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_AllocSharedOp : Tile_Op<"alloc_shared"> {
  let summary = "Allocates a tile in shared memory";
  let description = [{
    One buffer per thread block in shared memory (PTX ISA §5.1.5, the
    `.shared` state space). `tile-plan-shared-memory` gives it an offset in
    the block's dynamic shared memory and checks the total against the
    backend's per-block limit. `name` is used in diagnostics. `swizzled`
    (set by `tile-layout-inference` for buffers that ldmatrix reads) XORs
    each row's 16-byte chunks with the row number, so that the eight rows an
    ldmatrix reads fall in distinct banks. `stages` (set by
    `tile-plan-shared-memory` when the backend pipelines a loop with
    asynchronous copies) keeps that many copies of the buffer, one per
    iteration in flight.

    Example: `%As = tile.alloc_shared {name = "As"} : !tile.buffer<128x32xf16, shared>`
  }];
  let arguments = (ins OptionalAttr<StrAttr>:$name, OptionalAttr<I64Attr>:$offset,
                       UnitAttr:$swizzled, OptionalAttr<I64Attr>:$stages);
  let results = (outs Tile_AnyBuffer:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tile_AllocFragmentOp : Tile_Op<"alloc_fragment"> {
  let summary = "Allocates a tile spread over the block's registers";
  let description = [{
    A tile whose elements live in the registers of the block's threads
    (PTX ISA §5.1.1, the `.reg` state space), distributed as its
    `#tile.distribution` says (assigned by `tile-layout-inference`).

    A 1-D fragment of R elements with `row_slice` and an `mma_layout` holds
    per-row values of an R-row accumulator of that layout: each thread keeps
    only the rows it owns there (m16n8: rows g and g + 8 of each 16-row atom
    tile of its warp, g = lane / 4, PTX ISA §9.7.14.5.8), so a reduction
    over the accumulator's columns ends with shuffles within the lanes
    sharing a row, and a `tile.parallel` over the accumulator reads a row's
    value from the thread's own registers.

    Example:

    ```mlir
    %acc = tile.alloc_fragment {name = "acc"} : !tile.buffer<128x128xf32, fragment>
    %m = tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 4, warps_n = 1>, row_slice}
        : !tile.buffer<128xf32, fragment>
    ```
  }];
  let arguments = (ins OptionalAttr<StrAttr>:$name,
                       OptionalAttr<Tile_DistributionAttr>:$distribution,
                       OptionalAttr<Tile_MmaLayoutAttr>:$mma_layout,
                       UnitAttr:$replicated,
                       UnitAttr:$row_slice);
  let results = (outs Tile_AnyBuffer:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tile_CopyOp : Tile_Op<"copy", [AttrSizedOperandSegments]> {
  let summary = "Copies a tile between global memory, shared memory and registers";
  let description = [{
    Copies a tile of the buffer's shape. A tensor operand takes one offset
    per dimension: the tile's origin in the tensor (e.g. a block's offset).
    Elements of the tile that fall outside the tensor are not read (they
    read as zero) and not written, so tails need no code from the author.
    Element types may differ: floats convert to floats (rounding to nearest
    even; into FP8 saturating to its finite range), integers to floats
    (rounding to nearest even) and integers to integers (sign-extending a
    signed source, zero-extending ui8, and saturating to the destination's
    range: an i32 accumulator copied to i8 clamps to [-128, 127]). A float
    does not convert into an integer: tile.cast it in a tile.parallel body.

    `tensor_dims` (optional) makes the tile a slice of a tensor of higher
    rank: it names, in increasing order, the tensor dimensions the tile's
    axes span (one per axis, the innermost dimension always among them, so
    the tile's rows stay contiguous); the tensor's other dimensions are fixed
    at their offsets. Bounds are those of the slice: rows past the spanned
    dimension's size read as zero and are not written, and a fixed offset
    outside its dimension makes the whole tile so. A [rows, dim] tile of a
    [batch, seq, heads, dim] tensor at (b, r, h, 0) spans dimensions 1 and 3.

    `until` (optional) ends one axis of the tile early, `until_axis` (0,
    the first, by default): along the tensor dimension that axis spans,
    elements at or past `until` read as zero and are not written, as if
    the tensor ended there (a sequence's end in a packed batch: rows of the
    next sequence are neither read nor overwritten). Bulk tensor copies
    (TMA) do not take it.

    With `atomic_add` the copy adds the buffer into the tensor tile instead
    of overwriting it: each element is one atomic read-modify-write of global
    memory (`atom`/`red.global.add`, PTX ISA §9.7.13.5), so blocks that add
    into the same tile (split-K's partial products) need no other
    synchronization; the sum is exact up to the order of the additions. The
    destination is a tensor of f32, f64, f16, bf16, i32 or i64 (f16 and bf16
    where the target lacks their atomics, and f64 on sm_60 too, take a
    compare-and-swap loop).

    Example:

    ```mlir
    tile.copy %acc to %C[%row, %col] {atomic_add} : !tile.buffer<128x128xf32, fragment> to !tile.tensor<?x?xf32>
    tile.copy %A[%row, %col] to %As : !tile.tensor<?x?xf16> to !tile.buffer<128x32xf16, shared>
    tile.copy %acc to %C[%row, %col] : !tile.buffer<128x128xf32, fragment> to !tile.tensor<?x?xf16>
    tile.copy %Q[%b, %row, %h, %c0] to %Qs {tensor_dims = array<i64: 1, 3>}
        : !tile.tensor<?x?x16x128xf16> to !tile.buffer<128x128xf16, shared>
    ```
  }];
  let arguments = (ins Tile_TensorOrBuffer:$src, Variadic<Index>:$src_offsets,
                       Tile_TensorOrBuffer:$dst, Variadic<Index>:$dst_offsets,
                       Optional<Index>:$until, OptionalAttr<I64Attr>:$until_axis,
                       OptionalAttr<DenseI64ArrayAttr>:$tensor_dims, UnitAttr:$atomic_add);
  let assemblyFormat = [{
    $src (`[` $src_offsets^ `]`)? `to` $dst (`[` $dst_offsets^ `]`)? (`until` $until^)?
    attr-dict `:` type($src) `to` type($dst)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The buffer whose shape is the tile (the destination if both are buffers).
    BufferType getTileType();
    /// The offsets of the tile's axes in its tensor: all the tensor's
    /// offsets, or with `tensor_dims` those of the spanned dimensions.
    ::llvm::SmallVector<::mlir::Value> getTileOffsets();
  }];
}

def Tile_FillOp : Tile_Op<"fill"> {
  let summary = "Sets every element of a buffer to a value";
  let description = [{
    The value has the buffer's element type; a ui8 buffer takes its bits
    as an i8 (arith has no unsigned integers).

    Example: `tile.fill %acc, %zero : !tile.buffer<128x128xf32, fragment>, f32`
  }];
  let arguments = (ins Tile_AnyBuffer:$buffer, AnyType:$value);
  let assemblyFormat = "$buffer `,` $value attr-dict `:` type($buffer) `,` type($value)";
  let hasVerifier = 1;
}

def Tile_ClearOp : Tile_Op<"clear"> {
  let summary = "Sets every element of a buffer to zero";
  let description = [{
    Shorthand for `tile.fill` with the element type's zero.

    Example: `tile.clear %acc : !tile.buffer<128x128xf32, fragment>`
  }];
  let arguments = (ins Tile_AnyBuffer:$buffer);
  let assemblyFormat = "$buffer attr-dict `:` type($buffer)";
}

//===----------------------------------------------------------------------===//
// Elementwise computation
//===----------------------------------------------------------------------===//

def Tile_ParallelOp : Tile_Op<"parallel", [SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "An elementwise loop nest over a tile, spread over the block's threads";
  let description = [{
    Runs its body once for every index in `[0, extents)`, the iterations
    spread over the block's threads as its `#tile.distribution` says. The
    body reads and writes buffer elements with `tile.load` / `tile.store`
    and computes with `arith` and `math` operations. A fragment indexed by
    exactly the loop's indices, with the loop's shape, is accessed in
    registers; shared buffers may be indexed freely.

    Example:

    ```mlir
    tile.parallel (%i) in [1024] {
      %x = tile.load %a[%i] : !tile.buffer<1024xf32, fragment>
      %y = tile.load %b[%i] : !tile.buffer<1024xf32, fragment>
      %s = arith.addf %x, %y : f32
      tile.store %s, %a[%i] : !tile.buffer<1024xf32, fragment>
    }
    ```
  }];
  let arguments = (ins DenseI64ArrayAttr:$extents,
                       OptionalAttr<Tile_DistributionAttr>:$distribution,
                       OptionalAttr<Tile_MmaLayoutAttr>:$mma_layout);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasRegionVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [OpBuilder<(ins "::llvm::ArrayRef<int64_t>":$extents)>];
  let extraClassDeclaration = [{
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
    ::mlir::Block::BlockArgListType getInductionVars() { return getBodyBlock().getArguments(); }
    int64_t getNumIterations();
  }];
}

def Tile_LoadOp : Tile_Op<"load", [
    TypesMatchWith<"result type is the buffer's element type", "buffer", "result",
                   "::llvm::cast<::tessera::tile::BufferType>($_self).getElementType()">]> {
  let summary = "Reads one element of a buffer";
  let description = [{
    Example: `%x = tile.load %a[%i, %j] : !tile.buffer<64x64xf32, fragment>`
  }];
  let arguments = (ins Tile_AnyBuffer:$buffer, Variadic<Index>:$indices);
  let results = (outs AnyType:$result);
  let assemblyFormat = "$buffer `[` $indices `]` attr-dict `:` type($buffer)";
  let hasVerifier = 1;
}

def Tile_StoreOp : Tile_Op<"store", [
    TypesMatchWith<"value type is the buffer's element type", "buffer", "value",
                   "::llvm::cast<::tessera::tile::BufferType>($_self).getElementType()">]> {
  let summary = "Writes one element of a buffer";
  let description = [{
    Example: `tile.store %x, %a[%i, %j] : !tile.buffer<64x64xf32, fragment>`
  }];
  let arguments = (ins AnyType:$value, Tile_AnyBuffer:$buffer, Variadic<Index>:$indices);
  let assemblyFormat = "$value `,` $buffer `[` $indices `]` attr-dict `:` type($buffer)";
  let hasVerifier = 1;
}

def Tile_AtomicOp : Tile_Op<"atomic", [AllTypesMatch<["value", "result"]>]> {
  let summary = "Atomically combines a value into one element of a global tensor";
  let description = [{
    Inside a tile.parallel body: reads the element of `tensor` at `indices`,
    combines it with `value` (`add`, `max` or `min`) and writes the result,
    as one atomic operation (relaxed, device scope; `atom`, or `red` when
    the old value is unused, PTX ISA §9.7.13.5); returns the old value.
    Each of the loop's elements is its own atomic, so any number of threads
    and blocks may combine into one element (a histogram, a scatter-add).
    Indices outside the tensor do nothing and return 0. Types: add takes
    f32, f64, f16, bf16, i32 and i64; max and min take i32, i64 and f32
    (a compare-and-swap loop where the target has no instruction).

    Example: `%old = tile.atomic add %v, %H[%bin] : i32, !tile.tensor<?xi32>`
  }];
  let arguments = (ins Tile_AtomicKind:$kind, AnyType:$value, Tile_AnyTensor:$tensor,
                       Variadic<Index>:$indices);
  let results = (outs AnyType:$result);
  let assemblyFormat = [{
    $kind $value `,` $tensor `[` $indices `]` attr-dict `:` type($value) `,` type($tensor)
  }];
  let hasVerifier = 1;
}

def Tile_CastOp : Tile_Op<"cast", [Pure]> {
  let summary = "Converts one element between tile element types";
  let description = [{
    Converts a scalar inside a `tile.parallel` body between any two element
    types the dialect holds, including the storage types `arith` does not
    compute with: FP8 (f8E4M3FN, f8E5M2; exact to wider floats, rounded to
    nearest even from them) and ui8 (zero-extended). With `saturate`, values
    beyond the destination's finite range (infinities included) become its
    largest finite value of the same sign (PTX's `.satfinite`, PTX ISA
    §9.7.9.21); NaN stays NaN (0 for an integer destination). Without it an
    FP8 overflow is NaN (e4m3, which has no infinity) or infinity (e5m2),
    and float to integer conversion of values out of range is undefined.

    Example: `%q = tile.cast %x {saturate} : f32 to f8E4M3FN`
  }];
  let arguments = (ins AnyType:$input, UnitAttr:$saturate);
  let results = (outs AnyType:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
}

def Tile_ReduceOp : Tile_Op<"reduce"> {
  let summary = "Reduces a fragment along its innermost axis";
  let description = [{
    Combines the elements of `src` along its last axis with `kind` (max,
    min, sum, or abssum: the sum of absolute values) into `dst`, a fragment
    of `src`'s shape without that axis. With `clear` the result replaces
    `dst` (the reduction starts from the identity: -inf for max, +inf for
    min, 0 for the sums); without it the result is combined with `dst`'s
    current values. Each thread first reduces its own elements, then a warp
    combines with shuffles (`shfl.sync.bfly`, PTX ISA §9.7.8.6), then warps
    combine through shared memory; every thread ends with the whole result
    (`dst` is replicated), so `tile.parallel` bodies may read it anywhere.

    Example:

    ```mlir
    tile.reduce max %x into %m {clear} : !tile.buffer<4x2048xf32, fragment>, !tile.buffer<4xf32, fragment>
    ```
  }];
  let arguments = (ins Tile_ReduceKind:$kind, Tile_AnyBuffer:$src, Tile_AnyBuffer:$dst,
                       UnitAttr:$clear, Optional<Tile_AnyBuffer>:$scratch);
  let assemblyFormat = [{
    $kind $src `into` $dst (`scratch` $scratch^)? attr-dict `:` type($src) `,` type($dst)
    (`,` type($scratch)^)?
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Matrix multiplication and pipelined loops
//===----------------------------------------------------------------------===//

def Tile_GemmOp : Tile_Op<"gemm"> {
  let summary = "Accumulates a tile matrix product: C += A * B";
  let description = [{
    Multiplies the tiles A (M x K, or K x M with `transpose_a`) and B (K x N,
    or N x K with `transpose_b`), held in shared memory or fragments, and
    adds the product to the fragment accumulator C (M x N). A and B share
    their element type; C's type follows it:

    | A and B                     | C              |
    |-----------------------------|----------------|
    | f16                         | f32 or f16     |
    | f8E4M3FN, f8E5M2 (FP8)      | f32 or f16     |
    | bf16, f32                   | f32            |
    | f64                         | f64            |
    | i8, ui8                     | i32 (wrapping) |

    FP8, i8 and ui8 are storage types: tensor cores read them as stored,
    CUDA cores convert them exactly. `precision = tf32` lets an f32 gemm
    round A and B to TF32 (10 explicit mantissa bits) on tensor cores
    (mma.sync m16n8k8, wgmma k8); without it f32 gemms are exact f32 FMAs.

    The backend chooses the instruction atoms (an ordered preference list
    with legality checks): FMA on CUDA cores (sm_60), mma.sync.m8n8k4
    (PTX ISA §9.7.14.5.1, sm_70), mma.sync.m16n8k16 with ldmatrix
    (§9.7.14.5.8, sm_80; m16n8k32 for i8/ui8, m16n8k8 for TF32, m8n8k4 for
    f64), wgmma.mma_async (§9.7.15, sm_90a; k32 for FP8 and i8/ui8, k8 for
    TF32). `atom` forces one by name; an atom that is illegal for the
    operands or the target is an error.

    Example:

    ```mlir
    tile.gemm %As, %Bs, %acc : !tile.buffer<128x32xf16, shared>,
        !tile.buffer<32x128xf16, shared>, !tile.buffer<128x128xf32, fragment>
    tile.gemm %Xs, %Ws, %acc precision(tf32) {transpose_b} : !tile.buffer<128x32xf32, shared>,
        !tile.buffer<128x32xf32, shared>, !tile.buffer<128x128xf32, fragment>
    ```
  }];
  let arguments = (ins Tile_AnyBuffer:$a, Tile_AnyBuffer:$b, Tile_AnyBuffer:$c,
                       UnitAttr:$transpose_a, UnitAttr:$transpose_b,
                       OptionalAttr<StrAttr>:$atom,
                       OptionalAttr<Tile_Precision>:$precision);
  let assemblyFormat = [{
    $a `,` $b `,` $c (`precision` `(` $precision^ `)`)? attr-dict `:` type($a) `,` type($b)
    `,` type($c)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getM() { return llvm::cast<BufferType>(getC().getType()).getShape()[0]; }
    int64_t getN() { return llvm::cast<BufferType>(getC().getType()).getShape()[1]; }
    int64_t getK() {
      auto a = llvm::cast<BufferType>(getA().getType());
      return a.getShape()[getTransposeA() ? 0 : 1];
    }
  }];
}

def Tile_PipelinedOp : Tile_Op<"pipelined", [SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "A loop whose copies the backend may overlap with its compute";
  let description = [{
    Runs its body for `%k` in `[0, count)`. `stages` is the number of
    iterations whose copies may be in flight at once; how they overlap is
    the backend's pipelining strategy (register double-buffering on sm_70,
    cp.async multi-stage on sm_80, TMA with mbarriers on sm_90). A backend
    without a strategy runs the loop in order, which is always correct.

    Example:

    ```mlir
    tile.pipelined %k = 0 to %count stages 3 {
      ...
    }
    ```
  }];
  let arguments = (ins Index:$count, I64Attr:$stages);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [OpBuilder<(ins "::mlir::Value":$count, "int64_t":$stages)>];
  let extraClassDeclaration = [{
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
    ::mlir::BlockArgument getInductionVar() { return getBodyBlock().getArgument(0); }
  }];
}

//===----------------------------------------------------------------------===//
// Block-uniform control flow
//===----------------------------------------------------------------------===//

def Tile_IfOp : Tile_Op<"if", [NoRegionArguments,
    SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "Runs a region when a block-uniform condition holds";
  let description = [{
    Runs `then` when `condition` holds, else `else` (optional). The
    condition is the block's: built from block indices, loop indices of
    tile.pipelined and tile.serial, dimensions, kernel scalars and values
    read from tensors (tile.read), never from a tile.parallel's indices, so
    every thread of the block takes the same branch and barriers inside
    either branch are reached by all. Per-element conditions inside
    tile.parallel are `arith.select`s. Buffers are allocated outside (they
    live across the branch); the regions hold copies, gemms, reductions,
    parallel loops, tile.pipelined, tile.serial and tile.if.

    Example (FlashAttention's mask, only on key blocks that cross the
    diagonal):

    ```mlir
    tile.if %crosses {
      tile.parallel (%i, %k) in [128, 64] { ... }
    }
    ```
  }];
  let arguments = (ins I1:$condition);
  let regions = (region SizedRegion<1>:$then_region, MaxSizedRegion<1>:$else_region);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [OpBuilder<(ins "::mlir::Value":$condition, "bool":$withElse)>];
  let extraClassDeclaration = [{
    ::mlir::Block &getThenBlock() { return getThenRegion().front(); }
    bool hasElse() { return !getElseRegion().empty(); }
    ::mlir::Block &getElseBlock() { return getElseRegion().front(); }
  }];
}

def Tile_SerialOp : Tile_Op<"serial", [SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "A loop whose iterations run one after another";
  let description = [{
    Runs its body for `%i` in `[0, count)`, in order, with the whole block:
    a running offset, a loop over chunks, a loop nest around tile.pipelined.
    The count is block-uniform (as tile.if's condition). With `unroll` and
    a constant count the body is unrolled (each iteration's code emitted on
    its own, so indices in it are constants). Buffers are allocated outside.

    Example:

    ```mlir
    tile.serial %i = 0 to %n {
      ...
    }
    tile.serial %i = 0 to %c4 {unroll} {
      ...
    }
    ```
  }];
  let arguments = (ins Index:$count, UnitAttr:$unroll);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [OpBuilder<(ins "::mlir::Value":$count, "bool":$unroll)>];
  let extraClassDeclaration = [{
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
    ::mlir::BlockArgument getInductionVar() { return getBodyBlock().getArgument(0); }
  }];
}

//===----------------------------------------------------------------------===//
// Block-uniform variables and preconditions
//===----------------------------------------------------------------------===//

def Tile_VarOp : Tile_Op<"var", [MemoryEffects<[MemAlloc, MemWrite]>,
    TypesMatchWith<"the initial value has the variable's type", "result", "init",
                   "::llvm::cast<::tessera::tile::VarType>($_self).getValueType()">]> {
  let summary = "Declares a block-uniform variable with its initial value";
  let description = [{
    A variable every thread of the block holds with the same value: every
    thread runs each `tile.var_set` (they are not valid inside
    tile.parallel), so the value stays block-uniform and may be a tile
    offset, a loop count or a condition, as tile.read's may. `name` is used
    in diagnostics. Not inside tile.parallel.

    Example: `%row = tile.var %c0 {name = "row"} : !tile.var<index>`
  }];
  let arguments = (ins AnyType:$init, OptionalAttr<StrAttr>:$name);
  let results = (outs Tile_AnyVar:$result);
  let assemblyFormat = "$init attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tile_VarGetOp : Tile_Op<"var_get", [MemoryEffects<[MemRead]>,
    TypesMatchWith<"the result has the variable's type", "var", "result",
                   "::llvm::cast<::tessera::tile::VarType>($_self).getValueType()">]> {
  let summary = "Reads a block-uniform variable";
  let description = [{
    The variable's value after the last tile.var_set before this point.
    Not inside tile.parallel (read the variable before the loop: no thread
    assigns it while the loop runs).

    Example: `%r = tile.var_get %row : !tile.var<index>`
  }];
  let arguments = (ins Tile_AnyVar:$var);
  let results = (outs AnyType:$result);
  let assemblyFormat = "$var attr-dict `:` type($var)";
  let hasVerifier = 1;
}

def Tile_VarSetOp : Tile_Op<"var_set", [MemoryEffects<[MemWrite]>,
    TypesMatchWith<"the value has the variable's type", "var", "value",
                   "::llvm::cast<::tessera::tile::VarType>($_self).getValueType()">]> {
  let summary = "Assigns a block-uniform variable";
  let description = [{
    Gives the variable `value`, which must be block-uniform. Valid in the
    kernel's body, tile.if and tile.serial; not inside tile.parallel (each
    thread would assign its own) nor tile.pipelined, whose copies are
    issued iterations ahead of the body that would assign what they read.

    Example: `tile.var_set %row, %next : !tile.var<index>`
  }];
  let arguments = (ins Tile_AnyVar:$var, AnyType:$value);
  let assemblyFormat = "$var `,` $value attr-dict `:` type($var)";
  let hasVerifier = 1;
}

def Tile_RequireOp : Tile_Op<"require"> {
  let summary = "A condition on dimensions and scalars checked at launch";
  let description = [{
    A precondition of the kernel: `condition`, built only from tensor
    dimensions (tile.dim), the kernel's integer scalar arguments, constants
    and integer arithmetic and comparisons of them, must hold at launch.
    The compiler records it in the compiled kernel with the op's location,
    and the runtime refuses a launch for which it does not hold, naming the
    values ("K is a multiple of 128", "Hkv divides H"). The runtime
    evaluates it in signed 64-bit integers. Only at the top level of the
    kernel's body. It generates no code.

    Example: `tile.require %k_multiple_of_128`
  }];
  let arguments = (ins I1:$condition);
  let assemblyFormat = "$condition attr-dict";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Overlapping a kernel's start with the previous kernel's end
//===----------------------------------------------------------------------===//

def Tile_WaitPriorKernelsOp : Tile_Op<"wait_prior_kernels"> {
  let summary = "Wait for the kernels launched before this one on its stream";
  let description = [{
    Marks a kernel that may start while the kernel before it on the stream
    is still running: every thread waits here until the kernels launched
    before it have finished and their writes are visible. On targets with
    grid dependency control (sm_90a: `griddepcontrol.wait`) the runtime then
    launches the kernel with programmatic stream serialization, so its
    launch, block scheduling and setup overlap the previous kernel's tail;
    elsewhere it generates no code and the kernel starts after the previous
    one, as any other.

    Only at the top level of the kernel's body, once, and before every
    access to global memory: no operation before it may use a
    `!tile.tensor` except `tile.dim` (a tensor's dimensions are launch
    arguments).

    Example: `tile.wait_prior_kernels`
  }];
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

def Tile_LaunchDependentsOp : Tile_Op<"launch_dependents"> {
  let summary = "Let the next kernel on the stream start its launch";
  let description = [{
    Tells the GPU that a kernel launched after this one with
    `tile.wait_prior_kernels` may be launched as soon as every block of this
    kernel has passed this point (or exited); the next kernel still waits
    for this one's end before it touches memory. Placed early, it hides the
    next kernel's launch behind this one's main loop. On targets without
    grid dependency control (sm_90a: `griddepcontrol.launch_dependents`) it
    generates no code. Only at the top level of the kernel's body.

    Example: `tile.launch_dependents`
  }];
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

#endif // TESSERA_IR_TILEOPS_TD
