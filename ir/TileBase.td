//===- TileBase.td - The tile dialect, its attributes and types -*- tablegen -*-===//
//
// This file declares the `tile` dialect: tile-level GPU kernel primitives in
// the vocabulary of TileLang (alloc_shared, alloc_fragment, copy, fill,
// parallel, ...), with global tensors, scoped on-chip buffers and the
// compilation target carried as a module attribute.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_IR_TILEBASE_TD
#define TESSERA_IR_TILEBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

def Tile_Dialect : Dialect {
  let name = "tile";
  let cppNamespace = "::tessera::tile";
  let summary = "Tile-level primitives for writing GPU kernels";
  let description = [{
    The `tile` dialect holds GPU kernels written with tile-level primitives:
    a `tile.kernel` launched over a grid of blocks, global tensors, buffers
    in shared memory or in registers (fragments), copies of tiles between
    them, fills, and elementwise `tile.parallel` loop nests. Nothing in the
    dialect names an architecture: the module attribute `tile.target`
    selects the backend that lowers it.

    Example:

    ```mlir
    module attributes {tile.target = #tile.target<"sm_90a">} {
      tile.kernel @copy(%A: !tile.tensor<?xf32>, %B: !tile.tensor<?xf32>)
          grid(affine_map<()[s0, s1] -> (s0 ceildiv 1024)>) threads(256)
          blocks(%bx) {
        %a = tile.alloc_fragment : !tile.buffer<1024xf32, fragment>
        %c1024 = arith.constant 1024 : index
        %off = arith.muli %bx, %c1024 : index
        tile.copy %A[%off] to %a : !tile.tensor<?xf32> to !tile.buffer<1024xf32, fragment>
        tile.copy %a to %B[%off] : !tile.buffer<1024xf32, fragment> to !tile.tensor<?xf32>
      }
    }
    ```
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect"];
  let extraClassDeclaration = [{
    /// The module attribute that names the compilation target.
    static constexpr ::llvm::StringLiteral kTargetAttrName = "tile.target";
  }];
}

//===----------------------------------------------------------------------===//
// Enums and attributes
//===----------------------------------------------------------------------===//

def Tile_MemoryScope : I32EnumAttr<"MemoryScope", "where a tile buffer lives", [
    I32EnumAttrCase<"shared", 0>,
    I32EnumAttrCase<"fragment", 1>,
  ]> {
  let cppNamespace = "::tessera::tile";
  let genSpecializedAttr = 0;
}

def Tile_AtomicKind : I32EnumAttr<"AtomicKind", "how tile.atomic combines an element", [
    I32EnumAttrCase<"add", 0>,
    I32EnumAttrCase<"max", 1>,
    I32EnumAttrCase<"min", 2>,
  ]> {
  let cppNamespace = "::tessera::tile";
}

def Tile_ReduceKind : I32EnumAttr<"ReduceKind", "how tile.reduce combines elements", [
    I32EnumAttrCase<"max", 0>,
    I32EnumAttrCase<"min", 1>,
    I32EnumAttrCase<"sum", 2>,
    I32EnumAttrCase<"abssum", 3>,
  ]> {
  let cppNamespace = "::tessera::tile";
}

def Tile_Precision : I32EnumAttr<"Precision", "how tile.gemm may round f32 operands", [
    I32EnumAttrCase<"ieee", 0>,
    I32EnumAttrCase<"tf32", 1>,
  ]> {
  let cppNamespace = "::tessera::tile";
}

class Tile_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Tile_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Tile_TargetAttr : Tile_Attr<"Target", "target"> {
  let summary = "The compilation target of a tile module";
  let description = [{
    Names the GPU architecture a module is compiled for, as `sm_XY` or with
    the architecture-specific suffix `sm_XYa` (e.g. `sm_90a`, required for
    warpgroup MMA). The backend registry maps it to a backend plugin; an
    unknown or unsupported target is reported by the compiler.

    Example: `module attributes {tile.target = #tile.target<"sm_80">}`
  }];
  let parameters = (ins StringRefParameter<"target name, e.g. sm_90a">:$name);
  let assemblyFormat = "`<` $name `>`";
  let genVerifyDecl = 1;
}

def Tile_DistributionAttr : Tile_Attr<"Distribution", "distribution"> {
  let summary = "How the elements of a fragment are spread over threads";
  let description = [{
    The register layout of a fragment or of a `tile.parallel` iteration
    space: elements in row-major order are taken `vector` at a time and
    dealt to the block's `threads` threads in turn. Element `L` (row-major
    linear index) lives in thread `(L / vector) mod threads`, at slot
    `(L / (vector * threads)) * vector + L mod vector`. Assigned by
    `tile-layout-inference`; `vector` is chosen so that a thread's elements
    move with the widest global access the target offers.

    Example: `#tile.distribution<threads = 256, vector = 4>`
  }];
  let parameters = (ins "int64_t":$threads, "int64_t":$vector);
  let assemblyFormat = "`<` `threads` `=` $threads `,` `vector` `=` $vector `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The number of register slots each thread holds for `numElements`.
    int64_t slotsPerThread(int64_t numElements) const;
  }];
}

def Tile_MmaLayoutAttr : Tile_Attr<"MmaLayout", "mma_layout"> {
  let summary = "The register layout of an MMA accumulator fragment";
  let description = [{
    A fragment laid out as the accumulators of an MMA atom: the block's
    warps tile the fragment `warps_m` x `warps_n`; each warp covers its
    sub-tile with steps of `m` x `n` elements, and within a step lane bit b
    of a thread moves its elements by `lanes[b]` and bit b of a register's
    index within the step by `registers[b]`, each `rN` (N rows) or `cN` (N
    columns). A thread's registers hold its steps one after the other, row
    steps outermost. The atom that computes the accumulator decides the
    layout (`tile-layout-inference` asks it); what reads or writes the
    fragment (copies, reductions, `tile.parallel`) follows the bases.

    Without `lanes` and `registers`, the layout is mma.sync m16n8's (PTX ISA
    §9.7.14.5.8): lane = 4 g + t holds rows g and g + 8, columns 2t and
    2t + 1 of each step, i.e. `lanes = [c2, c4, r1, r2, r4], registers =
    [c1, r8]`.

    Examples:
    `#tile.mma_layout<m = 16, n = 8, warps_m = 2, warps_n = 4>`,
    `#tile.mma_layout<m = 32, n = 4, warps_m = 4, warps_n = 1,
      lanes = [r1, r2, r4, r8, r16], registers = [c1, c2]>` (a row per lane).
  }];
  let parameters = (ins "int64_t":$m, "int64_t":$n, "int64_t":$warpsM, "int64_t":$warpsN,
                        ArrayRefParameter<"int64_t", "lane bases">:$lanes,
                        ArrayRefParameter<"int64_t", "register bases">:$registers);
  let builders = [
    AttrBuilder<(ins "int64_t":$m, "int64_t":$n, "int64_t":$warpsM, "int64_t":$warpsN), [{
      return $_get($_ctxt, m, n, warpsM, warpsN, ::llvm::ArrayRef(::tessera::tile::kM16N8Lanes),
                   ::llvm::ArrayRef(::tessera::tile::kM16N8Registers));
    }]>
  ];
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Whether a 2-D tile of `shape` splits evenly over the warps and steps;
    /// else an error naming `what` through `emitError`.
    ::mlir::LogicalResult verifyShape(::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError,
                                      ::llvm::ArrayRef<int64_t> shape,
                                      ::llvm::StringRef what) const;
    /// Registers of one step per thread.
    int64_t registersPerStep() const { return int64_t(1) << getRegisters().size(); }
    /// Whether this is mma.sync m16n8's layout (the default bases).
    bool isM16N8() const;
  }];
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

class Tile_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Tile_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Tile_TensorType : Tile_Type<"TileTensor", "tensor"> {
  let summary = "A dense row-major tensor in global memory";
  let description = [{
    A kernel argument in global memory. Dimensions are static or dynamic
    (`?`, known only at launch; the kernel receives each dynamic size as an
    extra i64 parameter). Rows are contiguous (row-major, no padding). A
    tile.view's result is a tensor too, at an address and sizes read from
    data, and may have strides.

    Example: `!tile.tensor<?x4096xf16>`
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape, "::mlir::Type":$elementType);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getRank() const { return getShape().size(); }
    /// The number of dynamic dimensions.
    int64_t getNumDynamicDims() const;
  }];
}

def Tile_BufferType : Tile_Type<"Buffer", "buffer"> {
  let summary = "A statically shaped tile in shared memory or in registers";
  let description = [{
    An on-chip buffer created by `tile.alloc_shared` (scope `shared`, one copy
    per block) or `tile.alloc_fragment` (scope `fragment`, spread over the
    block's threads' registers by a `#tile.distribution`).

    Example: `!tile.buffer<128x32xf16, shared>`
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape, "::mlir::Type":$elementType,
                        "::tessera::tile::MemoryScope":$scope);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getRank() const { return getShape().size(); }
    int64_t getNumElements() const;
    bool isShared() const { return getScope() == MemoryScope::shared; }
    bool isFragment() const { return getScope() == MemoryScope::fragment; }
  }];
}

def Tile_VarType : Tile_Type<"Var", "var"> {
  let summary = "A block-uniform variable";
  let description = [{
    A value the whole block holds and may assign (`tile.var`, read with
    `tile.var_get`, assigned with `tile.var_set`): a running offset, a
    counter, a page index. The value type is `index`, a signless integer of
    8, 32 or 64 bits, `f32` or `f64`.

    Example: `!tile.var<index>`
  }];
  let parameters = (ins "::mlir::Type":$valueType);
  let assemblyFormat = "`<` $valueType `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Whether a variable may hold values of `type`.
    static bool holds(::mlir::Type type);
  }];
}

def Tile_AnyTensor : Type<CPred<"::llvm::isa<::tessera::tile::TileTensorType>($_self)">,
                          "tile tensor", "::tessera::tile::TileTensorType">;
def Tile_AnyBuffer : Type<CPred<"::llvm::isa<::tessera::tile::BufferType>($_self)">,
                          "tile buffer", "::tessera::tile::BufferType">;
def Tile_AnyVar : Type<CPred<"::llvm::isa<::tessera::tile::VarType>($_self)">,
                       "tile variable", "::tessera::tile::VarType">;
def Tile_TensorOrBuffer : AnyTypeOf<[Tile_AnyTensor, Tile_AnyBuffer]>;

#endif // TESSERA_IR_TILEBASE_TD
