import HeapStatistics

/// The bytes the process has allocated and not freed, from the allocator's own statistics.
///
/// Not the resident size: memory freed by an earlier run stays resident and is reused, so the
/// resident size says nothing about what a structure keeps now. The allocator's count of bytes in
/// use does (glibc counts every arena, and the blocks too large for one).
enum Heap {
    static var bytesInUse: Int {
        Int(heap_bytes_in_use())
    }
}
