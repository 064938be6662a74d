// The project's two status macros. Abseil 20220623 ships none, so they live
// here, once, and every library uses these.
#ifndef SCHEDCACHE_COMMON_STATUS_MACROS_H_
#define SCHEDCACHE_COMMON_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// RETURN_IF_ERROR(expr) returns the absl::Status of `expr` from the current
// function when it is not OK.
#define RETURN_IF_ERROR(expr)                                  \
  do {                                                         \
    if (::absl::Status schedcache_status_ = (expr);            \
        !schedcache_status_.ok()) {                            \
      return schedcache_status_;                               \
    }                                                          \
  } while (false)

#define SCHEDCACHE_STATUS_CONCAT_INNER_(a, b) a##b
#define SCHEDCACHE_STATUS_CONCAT_(a, b) SCHEDCACHE_STATUS_CONCAT_INNER_(a, b)

// ASSIGN_OR_RETURN(lhs, expr) evaluates `expr` (an absl::StatusOr<T>); on
// error returns its status, otherwise moves the value into `lhs`, which may
// be a declaration (`auto x`) or an existing variable.
#define ASSIGN_OR_RETURN(lhs, expr) \
  SCHEDCACHE_ASSIGN_OR_RETURN_IMPL_( \
      SCHEDCACHE_STATUS_CONCAT_(schedcache_statusor_, __LINE__), lhs, expr)

#define SCHEDCACHE_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                      \
  if (!statusor.ok()) {                                        \
    return std::move(statusor).status();                       \
  }                                                            \
  lhs = *std::move(statusor)

#endif  // SCHEDCACHE_COMMON_STATUS_MACROS_H_
