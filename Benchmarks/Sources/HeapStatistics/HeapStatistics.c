#include "HeapStatistics.h"

#if defined(__linux__)
#include <malloc.h>
#endif

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))

size_t heap_bytes_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}

#elif defined(__GLIBC__)

// Before glibc 2.33: the same figures in `int`s, which wrap beyond 2 GiB.
size_t heap_bytes_in_use(void) {
    struct mallinfo info = mallinfo();
    return (size_t)(unsigned)info.uordblks + (size_t)(unsigned)info.hblkhd;
}

#elif defined(__APPLE__)
#include <malloc/malloc.h>

size_t heap_bytes_in_use(void) {
    malloc_statistics_t statistics;
    malloc_zone_statistics(NULL, &statistics);
    return statistics.size_in_use;
}

#else

size_t heap_bytes_in_use(void) {
    return 0;
}

#endif
