//===- grouped_gemm.cc - The grouped GEMMs' workloads ---------------------===//
//
// The workloads of examples/grouped_gemm.cc (bf16): groups of uneven sizes,
// empty groups, one group with all rows, padding row blocks (contiguous)
// and counts of 0, odd and the maximum (masked); N and K off the tiles. C
// is poisoned before the run; every written element is checked against a
// float64 reference (conformance sizes) or a random sample (benchmark
// sizes), and in the masked layout every row past a group's count must
// still hold the poison.
//
//===----------------------------------------------------------------------===//

#include <array>
#include <cmath>
#include <cstring>
#include <numeric>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "examples/workloads/internal.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/launch.h"

namespace tessera::workloads::internal {

using runtime::DeviceBuffer;
using runtime::KernelArg;
using runtime::LoadedKernel;
using runtime::ScalarArg;
using runtime::TensorArg;

namespace {

/// The rows of a contiguous layout's row block: the kernel's block
/// (examples/grouped_gemm.cc, GroupedConfig).
constexpr int64_t kBlockRows = 128;

/// A grouped problem: per group its rows (contiguous: whole row blocks;
/// masked: its count), the masked layout's row capacity, N and K.
struct GroupedProblem {
  std::vector<int64_t> rows;
  /// Contiguous: padding row blocks appended after the groups' blocks.
  int64_t paddingBlocks = 0;
  int64_t maxRows = 0;
  int64_t n = 0, k = 0;
};

/// The element bound of a bf16 output with f32 accumulation over k.
double Bound(double ref, int64_t k) { return 1e-2 * std::fabs(ref) + 1e-5 * std::sqrt(double(k)); }

/// C[row] = A[aRow] B[g]^T for the rows `rows` of A (row-major, k wide)
/// against group g of B ([G, N, K]), checked on `columns` of each.
void CheckRows(Report& report, const std::vector<float>& a, const std::vector<float>& b,
               const std::vector<uint8_t>& c, const std::vector<std::pair<int64_t, int64_t>>& rows,
               const std::vector<int64_t>& columns, int64_t n, int64_t k, double& errSq,
               double& refSq) {
  for (auto [row, g] : rows) {
    for (int64_t j : columns) {
      double ref = 0;
      const float* aRow = &a[row * k];
      const float* bRow = &b[(g * n + j) * k];
      for (int64_t p = 0; p < k; ++p) ref += double(aRow[p]) * double(bRow[p]);
      double got = DecodeElement(runtime::DTYPE_BF16, &c[(row * n + j) * 2]);
      double err = CheckElement(report, row, j, got, ref, Bound(ref, k));
      errSq += err * err;
      refSq += ref * ref;
    }
  }
}

/// The columns a check visits: all, or a sample with both ends.
std::vector<int64_t> CheckedColumns(int64_t n, bool full, Random& pick) {
  std::vector<int64_t> columns;
  if (full) {
    columns.resize(n);
    std::iota(columns.begin(), columns.end(), 0);
    return columns;
  }
  for (int s = 0; s < 32; ++s) columns.push_back(pick.Index(n));
  columns.push_back(0);
  columns.push_back(n - 1);
  return columns;
}

/// Checks `rows` (row, group) of C against the float64 reference, sets the
/// report's error, correctness, FLOPs (the groups' valid rows) and `bytes`,
/// and times the kernel where asked.
absl::Status CheckAndTime(Report& report, const HostMatrix& a, const HostMatrix& b,
                          const std::vector<uint8_t>& c,
                          const std::vector<std::pair<int64_t, int64_t>>& rows,
                          const std::vector<int64_t>& columns, const GroupedProblem& p,
                          double bytes, const LoadedKernel& chosen,
                          const std::vector<KernelArg>& args, const RunOptions& options) {
  double errSq = 0, refSq = 0;
  CheckRows(report, a.values, b.values, c, rows, columns, p.n, p.k, errSq, refSq);
  report.max_error = refSq > 0 ? std::sqrt(errSq / refSq) : std::sqrt(errSq);
  report.tolerance = 5e-3;
  report.correct = report.mismatches == 0 && report.max_error <= report.tolerance;
  int64_t used = std::accumulate(p.rows.begin(), p.rows.end(), int64_t{0});
  report.flops = 2.0 * used * p.n * p.k;
  report.bytes = bytes;
  return TimeIfAsked(chosen, args, options, report);
}

absl::StatusOr<Report> RunContiguous(const LoadedKernel& kernel, const GroupedProblem& p, bool full,
                                     const RunOptions& options) {
  Report report;
  report.target = kernel.spec().target();
  const int64_t groups = p.rows.size(), n = p.n, k = p.k;
  // Each row block's group, then the padding blocks (-1).
  std::vector<int32_t> groupOfBlock;
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t r = 0; r < p.rows[g]; r += kBlockRows) groupOfBlock.push_back(g);
  groupOfBlock.insert(groupOfBlock.end(), p.paddingBlocks, -1);
  const int64_t m = groupOfBlock.size() * kBlockRows;
  Random random(options.seed);
  HostMatrix a(runtime::DTYPE_BF16, m * k, random), b(runtime::DTYPE_BF16, groups * n * k, random);
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer da, Upload(a.bytes));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer db, Upload(b.bytes));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dgroup, Upload(groupOfBlock));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dc, DeviceBuffer::Allocate(m * n * 2));
  std::vector<KernelArg> args = {
      TensorArg{da.ptr(), runtime::DTYPE_BF16, {m, k}},
      TensorArg{db.ptr(), runtime::DTYPE_BF16, {groups, n, k}},
      TensorArg{dgroup.ptr(), runtime::DTYPE_I32, {int64_t(groupOfBlock.size())}},
      TensorArg{dc.ptr(), runtime::DTYPE_BF16, {m, n}}};
  TESSERA_ASSIGN_OR_RETURN(const LoadedKernel* chosen,
                           TuneAndLaunch(kernel, args, options, dc, report));
  TESSERA_RETURN_IF_ERROR(runtime::Synchronize());
  std::vector<uint8_t> c(m * n * 2);
  TESSERA_RETURN_IF_ERROR(dc.CopyToHost(c.data(), c.size()));
  Random pick(options.seed + 17);
  std::vector<int64_t> columns = CheckedColumns(n, full, pick);
  std::vector<std::pair<int64_t, int64_t>> rows;
  for (int64_t blk = 0; blk < int64_t(groupOfBlock.size()); ++blk) {
    for (int64_t r = 0; r < kBlockRows; r += full ? 1 : 37) {
      int64_t row = blk * kBlockRows + r;
      if (groupOfBlock[blk] >= 0) {
        rows.push_back({row, groupOfBlock[blk]});
        continue;
      }
      // A padding row block: zeros.
      for (int64_t j : columns)
        CheckElement(report, row, j, DecodeElement(runtime::DTYPE_BF16, &c[(row * n + j) * 2]), 0.0,
                     0.0);
    }
  }
  TESSERA_RETURN_IF_ERROR(CheckAndTime(report, a, b, c, rows, columns, p,
                                       2.0 * (m * k + groups * n * k + m * n), *chosen, args,
                                       options));
  return report;
}

absl::StatusOr<Report> RunMasked(const LoadedKernel& kernel, const GroupedProblem& p, bool full,
                                 const RunOptions& options) {
  Report report;
  report.target = kernel.spec().target();
  const int64_t groups = p.rows.size(), maxRows = p.maxRows, n = p.n, k = p.k;
  std::vector<int32_t> counts(p.rows.begin(), p.rows.end());
  Random random(options.seed);
  HostMatrix a(runtime::DTYPE_BF16, groups * maxRows * k, random),
      b(runtime::DTYPE_BF16, groups * n * k, random);
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer da, Upload(a.bytes));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer db, Upload(b.bytes));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dcount, Upload(counts));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dc, DeviceBuffer::Allocate(groups * maxRows * n * 2));
  std::vector<KernelArg> args = {TensorArg{da.ptr(), runtime::DTYPE_BF16, {groups, maxRows, k}},
                                 TensorArg{db.ptr(), runtime::DTYPE_BF16, {groups, n, k}},
                                 TensorArg{dcount.ptr(), runtime::DTYPE_I32, {groups}},
                                 TensorArg{dc.ptr(), runtime::DTYPE_BF16, {groups, maxRows, n}}};
  TESSERA_ASSIGN_OR_RETURN(const LoadedKernel* chosen,
                           TuneAndLaunch(kernel, args, options, dc, report));
  TESSERA_RETURN_IF_ERROR(runtime::Synchronize());
  std::vector<uint8_t> c(groups * maxRows * n * 2);
  TESSERA_RETURN_IF_ERROR(dc.CopyToHost(c.data(), c.size()));
  Random pick(options.seed + 17);
  std::vector<int64_t> columns = CheckedColumns(n, full, pick);
  // Rows are numbered across groups (group g's row r is g * maxRows + r),
  // as A and C lay them out.
  std::vector<std::pair<int64_t, int64_t>> rows;
  for (int64_t g = 0; g < groups; ++g) {
    for (int64_t r = 0; r < maxRows; r += full ? 1 : 29) {
      int64_t row = g * maxRows + r;
      if (r < counts[g]) {
        rows.push_back({row, g});
        continue;
      }
      // Past the count: never written (the poison, a NaN, is still there).
      for (int64_t j : columns) {
        double got = DecodeElement(runtime::DTYPE_BF16, &c[(row * n + j) * 2]);
        if (!std::isnan(got)) CheckElement(report, row, j, got, NAN, 0.0);
      }
    }
    if (counts[g] > 0) rows.push_back({g * maxRows + counts[g] - 1, g});
  }
  int64_t used = std::accumulate(p.rows.begin(), p.rows.end(), int64_t{0});
  TESSERA_RETURN_IF_ERROR(CheckAndTime(report, a, b, c, rows, columns, p,
                                       2.0 * (used * k + groups * n * k + used * n), *chosen, args,
                                       options));
  return report;
}

/// The pointer-array form: per group its m, n and k. `kernel` is
/// grouped_gemm_ptr (16-byte rows and addresses) or grouped_gemm_ptr_any
/// (any sizes; its A and B then start 2 bytes into their allocations, so no
/// address is 4-byte aligned).
struct PointerProblem {
  std::vector<std::array<int64_t, 3>> sizes;
  std::string kernel = "grouped_gemm_ptr";
  bool Misaligned() const { return kernel != "grouped_gemm_ptr"; }
  /// The kernel's square tiles, which TileEnd counts (kPointerAnyTile and
  /// kGroupedBlockRows in examples/grouped_gemm.h).
  int64_t Tile() const { return Misaligned() ? 64 : 128; }
};

/// Poisoned elements after each group's C (one allocation for all groups):
/// a write past a group's end shows there. A multiple of 8 keeps the next
/// group's rows 16-byte aligned.
constexpr int64_t kPointerGap = 64;

/// Group g's inputs: A (m x k) and B (n x k), each in its own allocation
/// (none, and a null pointer, when empty).
struct PointerGroup {
  HostMatrix a, b;
  std::optional<DeviceBuffer> da, db;
  int64_t cOffset = 0;
};

absl::StatusOr<Report> RunPointers(const LoadedKernel& kernel, const PointerProblem& p, bool full,
                                   const RunOptions& options) {
  Report report;
  report.target = kernel.spec().target();
  const int64_t groups = p.sizes.size();
  Random random(options.seed);
  std::vector<PointerGroup> group;
  std::vector<int64_t> ptrA, ptrB, ptrC;
  std::vector<int32_t> sizes, tileEnd;
  int64_t tiles = 0, cElements = 0;
  double flops = 0, bytes = 0;
  for (auto [m, n, k] : p.sizes) {
    group.push_back({HostMatrix(runtime::DTYPE_BF16, m * k, random),
                     HostMatrix(runtime::DTYPE_BF16, n * k, random)});
    PointerGroup& g = group.back();
    const int64_t shift = p.Misaligned() ? 2 : 0;
    auto upload = [&](const HostMatrix& x, std::optional<DeviceBuffer>& to) -> absl::Status {
      if (x.bytes.empty()) return absl::OkStatus();
      std::vector<uint8_t> shifted(shift, 0);
      shifted.insert(shifted.end(), x.bytes.begin(), x.bytes.end());
      TESSERA_ASSIGN_OR_RETURN(to, Upload(shifted));
      return absl::OkStatus();
    };
    TESSERA_RETURN_IF_ERROR(upload(g.a, g.da));
    TESSERA_RETURN_IF_ERROR(upload(g.b, g.db));
    ptrA.push_back(g.da ? int64_t(g.da->ptr()) + shift : 0);
    ptrB.push_back(g.db ? int64_t(g.db->ptr()) + shift : 0);
    g.cOffset = cElements;
    cElements += m * n + kPointerGap;
    sizes.insert(sizes.end(), {int32_t(m), int32_t(n), int32_t(k)});
    const int64_t tile = p.Tile();
    tiles += (m + tile - 1) / tile * ((n + tile - 1) / tile);
    tileEnd.push_back(int32_t(tiles));
    flops += 2.0 * m * n * k;
    bytes += 2.0 * (m * k + n * k + m * n);
  }
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dc, DeviceBuffer::Allocate(cElements * 2));
  for (int64_t g = 0; g < groups; ++g)
    ptrC.push_back(p.sizes[g][0] * p.sizes[g][1] > 0 ? int64_t(dc.ptr()) + 2 * group[g].cOffset
                                                     : 0);
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dptrA, Upload(ptrA));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dptrB, Upload(ptrB));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dptrC, Upload(ptrC));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dsizes, Upload(sizes));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dtileEnd, Upload(tileEnd));
  std::vector<KernelArg> args = {TensorArg{dptrA.ptr(), runtime::DTYPE_I64, {groups}},
                                 TensorArg{dptrB.ptr(), runtime::DTYPE_I64, {groups}},
                                 TensorArg{dptrC.ptr(), runtime::DTYPE_I64, {groups}},
                                 TensorArg{dsizes.ptr(), runtime::DTYPE_I32, {groups, 3}},
                                 TensorArg{dtileEnd.ptr(), runtime::DTYPE_I32, {groups}},
                                 ScalarArg::I32(int32_t(tiles))};
  TESSERA_ASSIGN_OR_RETURN(const LoadedKernel* chosen,
                           TuneAndLaunch(kernel, args, options, dc, report));
  TESSERA_RETURN_IF_ERROR(runtime::Synchronize());
  std::vector<uint8_t> c(cElements * 2);
  TESSERA_RETURN_IF_ERROR(dc.CopyToHost(c.data(), c.size()));
  Random pick(options.seed + 17);
  double errSq = 0, refSq = 0;
  for (int64_t g = 0; g < groups; ++g) {
    auto [m, n, k] = p.sizes[g];
    const uint8_t* cg = &c[2 * group[g].cOffset];
    std::vector<int64_t> columns = n > 0 ? CheckedColumns(n, full, pick) : std::vector<int64_t>{};
    std::vector<int64_t> rows;
    for (int64_t r = 0; r < m; r += full ? 1 : 31) rows.push_back(r);
    if (m > 0 && rows.back() != m - 1) rows.push_back(m - 1);
    for (int64_t r : rows) {
      for (int64_t j : columns) {
        double ref = 0;
        for (int64_t q = 0; q < k; ++q)
          ref += double(group[g].a.values[r * k + q]) * double(group[g].b.values[j * k + q]);
        double got = DecodeElement(runtime::DTYPE_BF16, &cg[(r * n + j) * 2]);
        double err = CheckElement(report, r, j, got, ref, Bound(ref, k));
        errSq += err * err;
        refSq += ref * ref;
      }
    }
    // The gap after the group's C: never written (the poison, a NaN).
    for (int64_t e = 0; e < kPointerGap; ++e) {
      double got = DecodeElement(runtime::DTYPE_BF16, &cg[(m * n + e) * 2]);
      if (!std::isnan(got)) CheckElement(report, g, m * n + e, got, NAN, 0.0);
    }
  }
  report.max_error = refSq > 0 ? std::sqrt(errSq / refSq) : std::sqrt(errSq);
  report.tolerance = 5e-3;
  report.correct = report.mismatches == 0 && report.max_error <= report.tolerance;
  report.flops = flops;
  report.bytes = bytes;
  TESSERA_RETURN_IF_ERROR(TimeIfAsked(*chosen, args, options, report));
  return report;
}

Workload Pointers(const PointerProblem& p, bool conformance) {
  std::vector<std::string> shapes;
  for (auto [m, n, k] : p.sizes) shapes.push_back(absl::StrCat(m, "x", n, "x", k));
  std::string name = absl::StrCat(p.kernel, "/", absl::StrJoin(shapes, "_"));
  return MakeWorkload(name, p.kernel, conformance, !conformance,
                      [=](const LoadedKernel& loaded, const RunOptions& options) {
                        return RunPointers(loaded, p, conformance, options);
                      });
}

Workload Contiguous(const GroupedProblem& p, bool conformance) {
  std::string name = absl::StrCat("grouped_gemm/rows", absl::StrJoin(p.rows, "_"), "_pad",
                                  p.paddingBlocks, "_n", p.n, "_k", p.k);
  return MakeWorkload(name, "grouped_gemm", conformance, !conformance,
                      [=](const LoadedKernel& loaded, const RunOptions& options) {
                        return RunContiguous(loaded, p, conformance, options);
                      });
}

Workload Masked(const GroupedProblem& p, bool conformance) {
  std::string name = absl::StrCat("grouped_gemm_masked/counts", absl::StrJoin(p.rows, "_"), "_max",
                                  p.maxRows, "_n", p.n, "_k", p.k);
  return MakeWorkload(name, "grouped_gemm_masked", conformance, !conformance,
                      [=](const LoadedKernel& loaded, const RunOptions& options) {
                        return RunMasked(loaded, p, conformance, options);
                      });
}

}  // namespace

std::vector<Workload> GroupedGemmWorkloads() {
  return {
      // Uneven groups with an empty one and a padding row block; N and K
      // off the tiles.
      Contiguous({{256, 0, 128, 384}, 1, 0, 200, 136}, true),
      // One group with every row.
      Contiguous({{0, 384, 0}, 0, 0, 136, 264}, true),
      // Counts of 0, odd, the maximum; a maximum off the tile.
      Masked({{0, 200, 77, 1}, 0, 200, 136, 264}, true),
      // Groups of their own shapes: tails in every dimension, an empty
      // group, one with k = 0 (C is zeros), one row, one tile exactly.
      Pointers({{{{200, 136, 264}},
                 {{0, 64, 64}},
                 {{1, 8, 40}},
                 {{77, 264, 0}},
                 {{128, 128, 128}},
                 {{300, 40, 520}}}},
               true),
      // Any sizes and addresses 2 bytes off: odd n and k, an empty group.
      Pointers({{{{37, 50, 77}}, {{0, 5, 3}}, {{130, 129, 1}}, {{3, 201, 131}}, {{1, 1, 1}}},
                "grouped_gemm_ptr_any"},
               true),
      // The benchmark: 8 experts of 1024 rows, hidden 4096, ffn 14336
      // (Mixtral's up projection, 8192 tokens at top 2 spread evenly).
      Contiguous({std::vector<int64_t>(8, 1024), 0, 0, 14336, 4096}, false),
      Masked({std::vector<int64_t>(8, 1024), 0, 1024, 14336, 4096}, false),
      // The same total in the pointer-array form, and uneven experts.
      Pointers({std::vector<std::array<int64_t, 3>>(8, {1024, 14336, 4096})}, false),
      Pointers({{{{2048, 14336, 4096}},
                 {{512, 14336, 4096}},
                 {{1536, 14336, 4096}},
                 {{0, 14336, 4096}},
                 {{1024, 14336, 4096}},
                 {{768, 14336, 4096}},
                 {{1280, 14336, 4096}},
                 {{1024, 14336, 4096}}}},
               false),
      // What element-wise copies cost: odd N and K, addresses 2 bytes off.
      Pointers({{{{2000, 4097, 4095}}, {{1000, 4097, 4095}}}, "grouped_gemm_ptr_any"}, false),
  };
}

}  // namespace tessera::workloads::internal
