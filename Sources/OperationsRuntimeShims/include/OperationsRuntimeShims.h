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

/// A mutual-exclusion lock for the library's short critical sections (a state transition).
///
/// On Linux, a word and the kernel's futex: taking a free lock is a call and one
/// compare-and-swap, giving it back a call and one exchange, where a glibc mutex also goes through
/// the C library's PLT and dispatches on the mutex's kind. A contended lock spins briefly (its
/// holder runs a few hundred instructions), then sleeps in the kernel. Elsewhere, a pthread mutex.
///
/// Debug builds check its use: taking a lock the calling thread holds already, or giving back one
/// it does not hold, returns an error code instead of deadlocking or corrupting the lock.
typedef struct operations_lock {
#if defined(__linux__)
    /// 0: free; 1: held; 2: held, and a thread may be asleep waiting for it.
    unsigned int state;
    /// Debug builds: the holder (the address of a thread-local variable of the holding thread),
    /// or 0.
    unsigned long owner;
#else
    pthread_mutex_t mutex;
#endif
} operations_lock;

/// Prepares a lock in memory of its own (the stripes are initialized statically).
void operations_lock_init(operations_lock *_Nonnull lock);

/// Releases what `operations_lock_init` set up; the lock must be free.
/// Returns 0, or EBUSY if the lock is held.
int operations_lock_destroy(operations_lock *_Nonnull lock);

/// Takes the lock, waiting while another thread holds it. Returns 0; in a debug build, EDEADLK if
/// the calling thread holds it already.
int operations_lock_lock(operations_lock *_Nonnull lock);

/// Takes the lock if it is free: returns 0 then, EBUSY if it is held.
int operations_lock_trylock(operations_lock *_Nonnull lock);

/// Gives the lock back. Returns 0; in a debug build, EPERM if the calling thread does not hold it.
int operations_lock_unlock(operations_lock *_Nonnull lock);

#if defined(__linux__)
/// The state word of a futex lock (0: free, 1: held, 2: held and contended), for tests.
unsigned int operations_lock_state(const operations_lock *_Nonnull lock);
#endif

/// How many stripe locks guard the state of operations (see `LockTable` in the `Operations`
/// module); a power of two.
#define OPERATIONS_STRIPE_COUNT 1024

/// One stripe lock, alone on its cache line, so that neighbouring stripes do not share a line.
typedef struct operations_stripe {
    _Alignas(64) operations_lock lock;
} operations_stripe;

/// The stripe locks, initialized statically (all zero on Linux: free; a pthread mutex elsewhere).
/// Static, so that reaching one is an address computation: a table created by Swift code on
/// first use costs a `swift_once` check at every lock and unlock.
extern operations_stripe operations_stripes[OPERATIONS_STRIPE_COUNT];

/// The bytes between two stripes (Swift does not import the over-aligned struct itself).
static inline size_t operations_stripe_stride(void) {
    return sizeof(operations_stripe);
}

/// The lock of stripe `index` (0 ≤ `index` < `OPERATIONS_STRIPE_COUNT`).
static inline operations_lock *_Nonnull operations_stripe_lock(long index) {
    return &operations_stripes[index].lock;
}

#endif
