//===- autotune.cc - Choosing the fastest of interchangeable kernels ------===//
//
// This file implements Autotune (TimeIt over each candidate on one set of
// arguments), the text-file TuneCache and SelectTuned.
//
//===----------------------------------------------------------------------===//

#include "runtime/autotune.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "runtime/bundle.h"
#include "runtime/device.h"
#include "runtime/expr.h"
#include "runtime/status_macros.h"

namespace tessera::runtime {

TimingOptions DefaultTuneTiming() {
  TimingOptions options;
  options.warmup = 3;
  options.iterations = 8;
  return options;
}

std::string TuneResult::Summary() const {
  std::vector<int> order(trials.size());
  std::iota(order.begin(), order.end(), 0);
  // The final's trials by median, then the other timed ones by median, then
  // the ones that did not run, in their order.
  auto group = [&](int i) { return trials[i].final_round ? 0 : trials[i].timing ? 1 : 2; };
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    if (group(a) != group(b)) return group(a) < group(b);
    return group(a) < 2 && trials[a].timing->median_ms < trials[b].timing->median_ms;
  });
  double bestMs = best >= 0 ? trials[best].timing->median_ms : 0;
  std::vector<std::string> finals, others;
  for (int i : order) {
    const TuneTrial& t = trials[i];
    std::vector<std::string>& parts = t.final_round ? finals : others;
    if (!t.timing) {
      parts.push_back(absl::StrCat(t.entry, ": ", t.status.ToString()));
    } else if (i == best) {
      parts.push_back(absl::StrFormat("%s %.4f ms", t.entry, t.timing->median_ms));
    } else {
      parts.push_back(absl::StrFormat("%s %.4f ms (%+.1f%%)", t.entry, t.timing->median_ms,
                                      100.0 * (t.timing->median_ms / bestMs - 1)));
    }
  }
  if (finals.empty()) return absl::StrJoin(others, ", ");
  if (others.empty()) return absl::StrJoin(finals, ", ");
  return absl::StrCat(absl::StrJoin(finals, ", "), " | ", absl::StrJoin(others, ", "));
}

absl::StatusOr<TuneResult> Autotune(absl::Span<const LoadedKernel* const> candidates,
                                    absl::Span<const KernelArg> args,
                                    const TimingOptions& options, int rounds) {
  if (rounds < 1) return absl::InvalidArgumentError("Autotune: rounds must be at least 1");
  if (candidates.empty()) return absl::InvalidArgumentError("Autotune: no candidate kernels");
  TuneResult result;
  std::vector<std::optional<PackedLaunch>> packed(candidates.size());
  for (size_t i = 0; i < candidates.size(); ++i) {
    TuneTrial& trial = result.trials.emplace_back();
    trial.entry = candidates[i]->entry();
    absl::StatusOr<PackedLaunch> prepared = PrepareLaunch(candidates[i]->spec(), args);
    if (prepared.ok())
      packed[i] = *std::move(prepared);
    else
      trial.status = prepared.status();
  }
  // Times the candidates `who` in `count` rounds, each timing every one of
  // them in turn, round r starting r/count of the way into the list (so
  // that each candidate runs early in one round and late in another: a
  // drift of the GPU's clocks while tuning moves every candidate alike
  // instead of favouring the ones timed while it was fast), and returns
  // each one's runs of all rounds (empty for one that did not run).
  auto timeRounds = [&](const std::vector<size_t>& who,
                        int count) -> absl::StatusOr<std::vector<std::vector<double>>> {
    std::vector<std::vector<double>> samples(candidates.size());
    for (int round = 0; round < count; ++round) {
      for (size_t j = 0; j < who.size(); ++j) {
        size_t i = who[(j + round * who.size() / count) % who.size()];
        TuneTrial& trial = result.trials[i];
        if (!packed[i] || !trial.status.ok()) continue;
        const LoadedKernel& kernel = *candidates[i];
        absl::StatusOr<TimingResult> timing =
            TimeIt([&] { return Launch(kernel, *packed[i], options.stream); }, options);
        if (!timing.ok()) {
          trial.status = timing.status();
          samples[i].clear();
          // A fault (an illegal address, say) leaves the context unusable:
          // no later candidate could run, so stop here and name this one.
          if (absl::Status context = Synchronize(); !context.ok()) {
            return absl::Status(context.code(),
                                absl::StrCat("Autotune: candidate ", trial.entry,
                                             " left the CUDA context unusable: ",
                                             context.message()));
          }
          continue;
        }
        samples[i].insert(samples[i].end(), timing->samples_ms.begin(),
                          timing->samples_ms.end());
      }
    }
    return samples;
  };
  auto rank = [&](const std::vector<size_t>& who, std::vector<std::vector<double>> samples) {
    int best = -1;
    for (size_t i : who) {
      if (samples[i].empty() || !result.trials[i].status.ok()) {
        result.trials[i].timing.reset();
        continue;
      }
      result.trials[i].timing = SummarizeTimes(std::move(samples[i]));
      if (best < 0 ||
          result.trials[i].timing->median_ms < result.trials[best].timing->median_ms)
        best = static_cast<int>(i);
    }
    return best;
  };
  std::vector<size_t> all(candidates.size());
  std::iota(all.begin(), all.end(), 0);
  TESSERA_ASSIGN_OR_RETURN(std::vector<std::vector<double>> samples, timeRounds(all, rounds));
  auto noneRan = [&] {
    std::vector<std::string> why;
    for (const TuneTrial& t : result.trials)
      why.push_back(absl::StrCat(t.entry, ": ", t.status.ToString()));
    return absl::FailedPreconditionError(
        absl::StrCat("Autotune: no candidate ran (", absl::StrJoin(why, "; "), ")"));
  };
  result.best = rank(all, std::move(samples));
  if (result.best < 0) return noneRan();
  // The final: the fastest, the others within kFinalMargin of it (at most
  // kFinalists in all) and the first candidate (the family's own kernel, what
  // an untuned run gets) are timed again in `rounds` rounds among
  // themselves and ranked on those runs alone. A close call or a first pass
  // that ran one candidate under slower clocks than another (a kernel can
  // time 4-10% slower while tuning than when paired with its rival) is
  // decided side by side.
  constexpr double kFinalMargin = 0.03;
  constexpr size_t kFinalists = 4;
  std::vector<size_t> order;
  for (size_t i : all)
    if (result.trials[i].timing) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return result.trials[a].timing->median_ms < result.trials[b].timing->median_ms;
  });
  const double limit = result.trials[result.best].timing->median_ms * (1 + kFinalMargin);
  std::vector<size_t> finalists;
  for (size_t i : order)
    if (finalists.size() < kFinalists && result.trials[i].timing->median_ms <= limit)
      finalists.push_back(i);
  if (result.trials[0].timing && std::find(finalists.begin(), finalists.end(), size_t{0}) ==
                                     finalists.end())
    finalists.push_back(0);
  if (finalists.size() > 1) {
    TESSERA_ASSIGN_OR_RETURN(samples, timeRounds(finalists, rounds));
    for (size_t i : finalists) result.trials[i].final_round = true;
    result.best = rank(finalists, std::move(samples));
    if (result.best < 0) return noneRan();
  }
  return result;
}

std::vector<int64_t> TuneSizes(const CompiledKernel& spec, const PackedLaunch& packed,
                               absl::Span<const KernelArg> args) {
  // One size per dimension group (M, N, K rather than each tensor's copy).
  std::vector<int64_t> sizes;
  for (int d = 0; d < static_cast<int>(packed.dynamic_dims.size()); ++d) {
    bool repeat = false;
    for (const DimGroup& group : spec.dim_groups())
      for (int i = 1; i < group.dims_size(); ++i) repeat |= group.dims(i) == d;
    if (!repeat) sizes.push_back(packed.dynamic_dims[d]);
  }
  // Then the size arguments the grid reads (a packed batch's longest
  // sequence), in order of appearance.
  std::vector<int64_t> params;
  for (const Expr& extent : spec.grid())
    for (int64_t p : ExprParams(extent))
      if (std::find(params.begin(), params.end(), p) == params.end()) params.push_back(p);
  for (int64_t p : params) {
    if (p < 0 || p >= static_cast<int64_t>(args.size())) continue;
    const auto* scalar = std::get_if<ScalarArg>(&args[p]);
    const auto* value = scalar ? std::get_if<int64_t>(&scalar->value) : nullptr;
    if (value) sizes.push_back(*value);
  }
  return sizes;
}

std::string TuneKey(absl::string_view family, absl::string_view target,
                    absl::string_view device, absl::Span<const int64_t> sizes) {
  return absl::StrCat(family, "|", target, "|", device, "|", absl::StrJoin(sizes, ","));
}

std::string CodeFingerprint(absl::Span<const LoadedKernel* const> candidates) {
  // FNV-1a over the entries and their code, in entry order: stable across
  // processes, so a rebuilt or added candidate misses the old choice.
  std::vector<const CompiledKernel*> specs;
  for (const LoadedKernel* kernel : candidates) specs.push_back(&kernel->spec());
  std::sort(specs.begin(), specs.end(), [](const CompiledKernel* a, const CompiledKernel* b) {
    return a->entry() < b->entry();
  });
  uint64_t hash = 14695981039346656037ull;
  auto mix = [&](absl::string_view bytes) {
    for (unsigned char c : bytes) hash = (hash ^ c) * 1099511628211ull;
    hash = (hash ^ 0xff) * 1099511628211ull;  // a separator
  };
  for (const CompiledKernel* spec : specs) {
    mix(spec->entry());
    mix(spec->ptx());
    mix(spec->cubin());
  }
  return absl::StrFormat("%016x", hash);
}

std::string TuneFamily(absl::string_view entry) {
  return std::string(entry.substr(0, entry.find("__")));
}

absl::StatusOr<TuneCache> TuneCache::Load(absl::string_view path) {
  TuneCache cache;
  absl::StatusOr<std::string> text = ReadFile(path);
  if (absl::IsNotFound(text.status())) return cache;
  if (!text.ok()) return text.status();
  int number = 0;
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    ++number;
    line = absl::StripSuffix(line, "\r");
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields = absl::StrSplit(line, '\t');
    if (fields.size() != 2 || fields[0].empty() || fields[1].empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tuning cache ", path, " line ", number, ": expected 'key<TAB>entry', got '", line, "'"));
    }
    cache.choices_[fields[0]] = fields[1];
  }
  return cache;
}

absl::Status TuneCache::Save(absl::string_view path) const {
  std::string text = "# Tessera tuning choices: family|target|device|sizes|code<TAB>entry\n";
  for (const auto& [key, entry] : choices_) absl::StrAppend(&text, key, "\t", entry, "\n");
  absl::Status written = WriteFile(path, text);
  if (!written.ok()) {
    return absl::Status(written.code(), absl::StrCat("cannot write tuning cache ", path, " (",
                                                     written.message(), ")"));
  }
  return absl::OkStatus();
}

std::optional<std::string> TuneCache::Lookup(absl::string_view key) const {
  auto it = choices_.find(key);
  if (it == choices_.end()) return std::nullopt;
  return it->second;
}

absl::Status TuneCache::Insert(absl::string_view key, absl::string_view entry) {
  for (absl::string_view field : {key, entry}) {
    if (field.empty() || field.find_first_of("\t\r\n") != absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("tuning cache: key and entry must be non-empty single-line text without "
                       "tabs, got '", key, "' -> '", entry, "'"));
    }
  }
  choices_[std::string(key)] = std::string(entry);
  return absl::OkStatus();
}

absl::StatusOr<const LoadedKernel*> SelectTuned(absl::Span<const LoadedKernel* const> candidates,
                                                absl::Span<const KernelArg> args,
                                                absl::string_view device, TuneCache& cache,
                                                const TimingOptions& options,
                                                TuneResult* result) {
  if (candidates.empty()) return absl::InvalidArgumentError("SelectTuned: no candidate kernels");
  // The sizes from the first candidate that takes the arguments.
  const LoadedKernel* first = nullptr;
  absl::StatusOr<PackedLaunch> prepared = absl::UnknownError("");
  for (const LoadedKernel* kernel : candidates) {
    prepared = PrepareLaunch(kernel->spec(), args);
    if (prepared.ok()) {
      first = kernel;
      break;
    }
  }
  if (first == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "SelectTuned: no candidate takes these arguments (", prepared.status().message(), ")"));
  }
  const CompiledKernel& spec = first->spec();
  const std::vector<int64_t> sizes = TuneSizes(spec, *prepared, args);
  std::string key = absl::StrCat(TuneKey(TuneFamily(spec.entry()), spec.target(), device, sizes),
                                 "|", CodeFingerprint(candidates));
  if (std::optional<std::string> chosen = cache.Lookup(key)) {
    for (const LoadedKernel* kernel : candidates)
      if (kernel->entry() == *chosen) {
        if (result) *result = {};
        return kernel;
      }
  }
  TESSERA_ASSIGN_OR_RETURN(TuneResult tuned, Autotune(candidates, args, options));
  const LoadedKernel* best = candidates[tuned.best];
  TESSERA_RETURN_IF_ERROR(cache.Insert(key, best->entry()));
  if (result) *result = std::move(tuned);
  return best;
}

}  // namespace tessera::runtime
