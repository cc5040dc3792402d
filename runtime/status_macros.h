//===- status_macros.h - Early-return helpers for absl::Status ---*- C++ -*-===//
//
// This file defines TESSERA_RETURN_IF_ERROR and TESSERA_ASSIGN_OR_RETURN, the
// two early-return helpers the runtime uses (Abseil 20220623 does not ship
// public ones).
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_RUNTIME_STATUS_MACROS_H_
#define TESSERA_RUNTIME_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

/// Returns `expr` (an absl::Status) from the enclosing function unless it is OK.
#define TESSERA_RETURN_IF_ERROR(expr)                      \
  do {                                                      \
    absl::Status tessera_status_ = (expr);                  \
    if (!tessera_status_.ok()) return tessera_status_;      \
  } while (false)

#define TESSERA_STATUS_CONCAT_INNER_(a, b) a##b
#define TESSERA_STATUS_CONCAT_(a, b) TESSERA_STATUS_CONCAT_INNER_(a, b)

/// Evaluates `rexpr` (an absl::StatusOr<T>); returns its status on error,
/// otherwise moves its value into `lhs` (which may be a declaration).
#define TESSERA_ASSIGN_OR_RETURN(lhs, rexpr)                                 \
  TESSERA_ASSIGN_OR_RETURN_IMPL_(                                           \
      TESSERA_STATUS_CONCAT_(tessera_statusor_, __LINE__), lhs, rexpr)
#define TESSERA_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                    \
  if (!statusor.ok()) return std::move(statusor).status();    \
  lhs = std::move(statusor).value()

#endif  // TESSERA_RUNTIME_STATUS_MACROS_H_
