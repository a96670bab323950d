// The stripe locks of `LockTable` (see the header), initialized by the loader rather than by code.
#include "OperationsRuntimeShims.h"

#if defined(__linux__)
// A free futex lock is all zero.
operations_stripe operations_stripes[OPERATIONS_STRIPE_COUNT];
#else
#if defined(DEBUG) && defined(PTHREAD_ERRORCHECK_MUTEX_INITIALIZER)
// Debug builds: a lock taken twice by one thread, or released by another, fails loudly.
#define OPERATIONS_STRIPE_INITIALIZER PTHREAD_ERRORCHECK_MUTEX_INITIALIZER
#else
#define OPERATIONS_STRIPE_INITIALIZER PTHREAD_MUTEX_INITIALIZER
#endif

operations_stripe operations_stripes[OPERATIONS_STRIPE_COUNT] = {
    [0 ... OPERATIONS_STRIPE_COUNT - 1] = { { OPERATIONS_STRIPE_INITIALIZER } },
};
#endif
