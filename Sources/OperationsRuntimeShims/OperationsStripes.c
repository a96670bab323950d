// The stripe locks of `LockTable` (see the header), initialized by the loader rather than by code.
#define _GNU_SOURCE 1
#include "OperationsRuntimeShims.h"

#if defined(DEBUG) && defined(PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP)
// Debug builds: a lock taken twice by one thread, or released by another, fails loudly.
#define OPERATIONS_STRIPE_INITIALIZER PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP
#elif defined(DEBUG) && defined(PTHREAD_ERRORCHECK_MUTEX_INITIALIZER)
#define OPERATIONS_STRIPE_INITIALIZER PTHREAD_ERRORCHECK_MUTEX_INITIALIZER
#elif defined(__GLIBC__)
// glibc's adaptive mutex spins briefly before sleeping, which suits the short critical sections
// it guards (a state transition) better than sleeping at once.
#define OPERATIONS_STRIPE_INITIALIZER PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP
#else
#define OPERATIONS_STRIPE_INITIALIZER PTHREAD_MUTEX_INITIALIZER
#endif

operations_stripe operations_stripes[OPERATIONS_STRIPE_COUNT] = {
    [0 ... OPERATIONS_STRIPE_COUNT - 1] = { OPERATIONS_STRIPE_INITIALIZER },
};
