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

#include <cmath>
#include <cstring>
#include <numeric>

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
      // The benchmark: 8 experts of 1024 rows, hidden 4096, ffn 14336
      // (Mixtral's up projection, 8192 tokens at top 2 spread evenly).
      Contiguous({std::vector<int64_t>(8, 1024), 0, 0, 14336, 4096}, false),
      Masked({std::vector<int64_t>(8, 1024), 0, 1024, 14336, 4096}, false),
  };
}

}  // namespace tessera::workloads::internal
