#ifndef HEAP_STATISTICS_H
#define HEAP_STATISTICS_H

#include <stddef.h>

/// The bytes allocated with malloc and not freed, from the allocator's own statistics
/// (glibc's mallinfo2, summed over every arena, mmapped blocks included; on Darwin the default
/// zones' size in use). 0 where neither is available.
size_t heap_bytes_in_use(void);

#endif
