/* Internal: how much the library checks itself.
 *
 * assert() states the cheap invariants of a data structure (O(1) where it
 * stands). Every build CMake makes keeps them: the release flags are
 * "-O2 -g", without NDEBUG, and their cost was measured as nil on the
 * exact tools' throughput (docs/architecture.md, "Assertions").
 * LP_DEBUG_CHECKS guards the whole-structure checks (a tree's balance and
 * sums, a hash table's probe chains: O(n) each), which would change the
 * complexity: on in the sanitizer build (which the test suite runs) and
 * with -DLP_DEBUG=1, off otherwise. */
#ifndef LP_COMMON_DEBUG_H
#define LP_COMMON_DEBUG_H

#include <assert.h>

#if defined(LP_DEBUG)
#define LP_DEBUG_CHECKS LP_DEBUG
#elif defined(__SANITIZE_ADDRESS__)
#define LP_DEBUG_CHECKS 1
#else
#define LP_DEBUG_CHECKS 0
#endif

#endif
