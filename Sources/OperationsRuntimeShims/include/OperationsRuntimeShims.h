#ifndef OPERATIONS_RUNTIME_SHIMS_H
#define OPERATIONS_RUNTIME_SHIMS_H

#include <stddef.h>
#include <pthread.h>

/// The Swift runtime's conditional retain: retains `object` and returns it, unless the object's
/// deinitialization has begun (then it returns NULL and changes nothing). Part of the Swift
/// runtime's exported interface on every platform; declared here, with the C calling convention
/// the runtime defines it with, because Swift code may not name runtime symbols itself. Used by `DependentLink` in the `Operations` module.
extern void *_Nullable swift_tryRetain(void *_Nonnull object);

/// An address on the calling thread's stack, in the function `depth` calls above the caller of
/// this function (0: in the caller, where it calls this; 1: where the caller was called from;
/// and so on), read with the C library's
/// `backtrace`, which unwinds without frame pointers. NULL where the C library has no
/// `backtrace` (musl) or the stack is not that deep. Used by `SynchronousWaitsInTasks` in the
/// `Operations` module to tell call sites apart.
void *_Nullable operations_return_address(unsigned depth);

/// Writes `address` as `image+0xoffset` (the file name of the loaded image that holds it and
/// the offset from where it is loaded, which `addr2line -e image offset` or `atos` turn into a
/// line) into `buffer`, NUL-terminated; returns 0 if no image holds it (or the platform cannot
/// tell), and writes nothing then.
int operations_describe_address(const void *_Nullable address, char *_Nonnull buffer, size_t size);

/// How many CPUs the calling thread may run on (its affinity mask: a container's cpuset,
/// `taskset`), or 0 where the platform cannot tell (then every core online counts).
int operations_allowed_cpu_count(void);

/// The calling thread's context (`ThreadContext` in the `Operations` module), or NULL before the
/// thread first needs one; used on Linux. A C thread-local variable: reading it is a load where
/// the library is linked into the program (a call to the C library's lookup from a shared
/// library), where `pthread_getspecific` is a call and its key a lazily created Swift global.
/// The context is still registered with a pthread key too, whose destructor frees it when the
/// thread exits and clears this variable first.
extern __thread void *_Nullable operations_thread_context_storage;

static inline void *_Nullable operations_thread_context(void) {
    return operations_thread_context_storage;
}

static inline void operations_set_thread_context(void *_Nullable context) {
    operations_thread_context_storage = context;
}

/// How many stripe locks guard the state of operations (see `LockTable` in the `Operations`
/// module); a power of two.
#define OPERATIONS_STRIPE_COUNT 1024

/// One stripe lock, alone on its cache line, so that neighbouring stripes do not share a line.
typedef struct operations_stripe {
    _Alignas(64) pthread_mutex_t mutex;
} operations_stripe;

/// The stripe locks, initialized statically (glibc's adaptive mutex, or an error-checking one in
/// debug builds; a default mutex elsewhere). Static, so that reaching one is an address
/// computation: a table created by Swift code on first use costs a `swift_once` check at every
/// lock and unlock.
extern operations_stripe operations_stripes[OPERATIONS_STRIPE_COUNT];

/// The bytes between two stripes (Swift does not import the over-aligned struct itself).
static inline size_t operations_stripe_stride(void) {
    return sizeof(operations_stripe);
}

/// The mutex of stripe `index` (0 ≤ `index` < `OPERATIONS_STRIPE_COUNT`).
static inline pthread_mutex_t *_Nonnull operations_stripe_mutex(long index) {
    return &operations_stripes[index].mutex;
}

#endif
