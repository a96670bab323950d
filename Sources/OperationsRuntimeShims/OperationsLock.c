// The library's lock (see `operations_lock` in the header).
#define _GNU_SOURCE 1
#include "OperationsRuntimeShims.h"
#include <errno.h>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

// The futex lock is the three-state mutex of Ulrich Drepper's "Futexes Are Tricky": a thread
// that finds the lock held marks it 2 before it sleeps, so that only an unlock that sees 2 makes
// the system call that wakes a sleeper; an uncontended lock and unlock never enter the kernel.
// The acquiring operations are acquire, the releasing exchange is release: everything written
// while the lock was held is visible to the next holder (and ThreadSanitizer sees the same
// ordering, through the atomics).

enum { FREE = 0, HELD = 1, CONTENDED = 2 };

/// How many times a thread that finds the lock held looks again before it sleeps: about as long
/// as glibc's adaptive mutex spins (its holder usually runs a state transition, well under a
/// microsecond).
enum { SPINS = 100 };

static inline void relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
    __asm__ __volatile__("yield");
#endif
}

#if defined(DEBUG)
/// A per-thread address: the identity of the calling thread, without a system call.
static __thread char thread_identity;

static inline unsigned long current_thread(void) {
    return (unsigned long)&thread_identity;
}
#endif

void operations_lock_init(operations_lock *lock) {
    __atomic_store_n(&lock->state, FREE, __ATOMIC_RELAXED);
    lock->owner = 0;
}

int operations_lock_destroy(operations_lock *lock) {
    return __atomic_load_n(&lock->state, __ATOMIC_RELAXED) == FREE ? 0 : EBUSY;
}

unsigned int operations_lock_state(const operations_lock *lock) {
    return __atomic_load_n(&lock->state, __ATOMIC_RELAXED);
}

static inline int try_take(operations_lock *lock) {
    unsigned int expected = FREE;
    return __atomic_compare_exchange_n(&lock->state, &expected, HELD, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

static void wait_for(operations_lock *lock) {
    for (int spin = 0; spin < SPINS; spin++) {
        relax();
        if (__atomic_load_n(&lock->state, __ATOMIC_RELAXED) == FREE && try_take(lock)) {
            return;
        }
    }
    // Marked contended before sleeping; a thread that takes the lock this way keeps the mark
    // (another may still sleep), which costs at most one needless wake-up.
    while (__atomic_exchange_n(&lock->state, CONTENDED, __ATOMIC_ACQUIRE) != FREE) {
        syscall(SYS_futex, &lock->state, FUTEX_WAIT_PRIVATE, CONTENDED, NULL, NULL, 0);
    }
}

int operations_lock_lock(operations_lock *lock) {
#if defined(DEBUG)
    if (__atomic_load_n(&lock->owner, __ATOMIC_RELAXED) == current_thread()) {
        return EDEADLK;
    }
#endif
    if (!try_take(lock)) {
        wait_for(lock);
    }
#if defined(DEBUG)
    __atomic_store_n(&lock->owner, current_thread(), __ATOMIC_RELAXED);
#endif
    return 0;
}

int operations_lock_trylock(operations_lock *lock) {
    if (!try_take(lock)) {
        return EBUSY;
    }
#if defined(DEBUG)
    __atomic_store_n(&lock->owner, current_thread(), __ATOMIC_RELAXED);
#endif
    return 0;
}

int operations_lock_unlock(operations_lock *lock) {
#if defined(DEBUG)
    if (__atomic_load_n(&lock->owner, __ATOMIC_RELAXED) != current_thread()) {
        return EPERM;
    }
    __atomic_store_n(&lock->owner, 0, __ATOMIC_RELAXED);
#endif
    if (__atomic_exchange_n(&lock->state, FREE, __ATOMIC_RELEASE) == CONTENDED) {
        syscall(SYS_futex, &lock->state, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    }
    return 0;
}

#else

void operations_lock_init(operations_lock *lock) {
    pthread_mutexattr_t attributes;
    pthread_mutexattr_init(&attributes);
#if defined(DEBUG)
    pthread_mutexattr_settype(&attributes, PTHREAD_MUTEX_ERRORCHECK);
#endif
    pthread_mutex_init(&lock->mutex, &attributes);
    pthread_mutexattr_destroy(&attributes);
}

int operations_lock_destroy(operations_lock *lock) {
    return pthread_mutex_destroy(&lock->mutex);
}

int operations_lock_lock(operations_lock *lock) {
    return pthread_mutex_lock(&lock->mutex);
}

int operations_lock_trylock(operations_lock *lock) {
    return pthread_mutex_trylock(&lock->mutex);
}

int operations_lock_unlock(operations_lock *lock) {
    return pthread_mutex_unlock(&lock->mutex);
}

#endif
