// Most shims are declarations of Swift runtime functions (see the header); the functions below
// wrap the C library's stack, image and CPU-affinity functions, which need _GNU_SOURCE and which
// Swift's Glibc module does not export.
#define _GNU_SOURCE 1
#include "OperationsRuntimeShims.h"
#include <stdio.h>
#include <string.h>

#if defined(__linux__) && __has_include(<sched.h>)
#include <sched.h>
#define OPERATIONS_HAS_AFFINITY 1
#endif

#if __has_include(<execinfo.h>) && __has_include(<dlfcn.h>)
#include <execinfo.h>
#include <dlfcn.h>
#define OPERATIONS_HAS_BACKTRACE 1
#endif

// Not inlined, so that its return address is in its caller.
__attribute__((noinline))
void *operations_return_address(unsigned depth) {
#ifdef OPERATIONS_HAS_BACKTRACE
    enum { capacity = 24 };
    void *frames[capacity];
    // The caller's frame is found by this function's own return address, not by its position:
    // a sanitizer's interceptor of `backtrace` adds frames of its own in front.
    void *caller = __builtin_return_address(0);
    int count = backtrace(frames, capacity);
    for (int index = 0; index < count; index++) {
        if (frames[index] == caller) {
            long wanted = (long)index + (long)depth;
            return wanted < count ? frames[wanted] : NULL;
        }
    }
    return NULL;
#else
    (void)depth;
    return NULL;
#endif
}

int operations_describe_address(const void *address, char *buffer, size_t size) {
#ifdef OPERATIONS_HAS_BACKTRACE
    Dl_info info;
    if (address == NULL || size == 0 || dladdr(address, &info) == 0 || info.dli_fname == NULL) return 0;
    const char *name = strrchr(info.dli_fname, '/');
    name = name ? name + 1 : info.dli_fname;
    unsigned long offset = (unsigned long)((const char *)address - (const char *)info.dli_fbase);
    snprintf(buffer, size, "%s+0x%lx", name, offset);
    return 1;
#else
    (void)address; (void)buffer; (void)size;
    return 0;
#endif
}

int operations_allowed_cpu_count(void) {
#if defined(OPERATIONS_HAS_AFFINITY) && defined(CPU_COUNT)
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
    return CPU_COUNT(&set);
#else
    return 0;
#endif
}
