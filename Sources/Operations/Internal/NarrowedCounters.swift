/// The widths of the library's narrowed counters and the thresholds of its compact
/// representations, in one place, so that a checked build can make them all tiny.
///
/// A counter narrowed to save space wraps, and a representation that changes form past a
/// threshold (an inline list that spills into an array, a list that gains an index, a buffer that
/// compacts) has a second code path that ordinary tests seldom reach. In the checked build
/// (`-D OPERATIONS_INTERNAL_CHECKS`, which CI runs over the whole suite; or
/// `-D OPERATIONS_TINY_COUNTERS` on its own) every width here is a few bits and every threshold a
/// few entries, so that wrap-around, compaction and spilling happen within every test, as
/// swift-collections runs its ring buffers at tiny capacities.
///
/// Every narrowed counter and threshold of the library reads its value here; a new one belongs
/// here too, with a test that drives it through wrap-around or exhaustion in the checked build
/// (see `NarrowedCountersTests`).
///
/// What is deliberately not narrowed, and why nothing can exhaust it:
/// - ``Op/QueueMembership/slot`` (32 bits): a slot number is below twice the number of members of
///   the queue (plus ``memberListSlack``), whatever the queue's age; 2^31 slots would take a
///   billion operations in one queue at once (over 90 GB).
/// - The unfinished-dependency count (32 bits) counts dependencies that exist now, each an object.
/// - Barrier epochs, serial numbers, progress generations and record sequences are 64 bits, and
///   count at most one per operation or event: centuries at a billion a second.
///
/// The values are computed properties with constant bodies, so that the optimizer folds them
/// (a stored `static let` would be read through a lazy-initialization check).
enum NarrowedCounters {
    #if OPERATIONS_INTERNAL_CHECKS || OPERATIONS_TINY_COUNTERS
    /// Whether this is the build with tiny counters.
    @inline(__always) static var areTiny: Bool { true }
    /// The width of ``Op/Ticket`` in bits (it is stored in 16): 8 tickets, wrapped every 8
    /// priority changes.
    @inline(__always) static var ticketBits: Int { 3 }
    /// The width of an operation's dependency-list version (stored in 32 bits): 16 versions. A
    /// cycle check compares two looks taken back to back; the version only has to differ unless
    /// the list changed a multiple of 16 times in between.
    @inline(__always) static var dependencyVersionBits: Int { 4 }
    /// How many vacant slots a ``MemberList`` tolerates before it compacts, however few members
    /// it has.
    @inline(__always) static var memberListSlack: Int { 2 }
    /// How many past epochs ``EpochCounts`` keeps before it cuts them.
    @inline(__always) static var epochCountsSlack: Int { 1 }
    /// How many stale entries a held list of a queue tolerates beyond twice its epoch's members.
    @inline(__always) static var heldListSlack: Int { 1 }
    /// The smallest capacity of a ``RingBuffer``'s storage, and the capacity below which it does
    /// not shrink.
    @inline(__always) static var ringBufferMinimumCapacity: Int { 1 }
    /// From this many dependents on, a ``DependentList`` keeps a set of them.
    @inline(__always) static var dependentListIndexThreshold: Int { 2 }
    /// From this many dependencies on, an operation keeps a set of them.
    @inline(__always) static var dependencySetThreshold: Int { 2 }
    /// The smallest capacity of a ``SlotIndex`` (a power of two).
    @inline(__always) static var slotIndexMinimumCapacity: Int { 2 }
    #else
    /// Whether this is the build with tiny counters.
    @inline(__always) static var areTiny: Bool { false }
    /// The width of ``Op/Ticket`` in bits.
    @inline(__always) static var ticketBits: Int { 16 }
    /// The width of an operation's dependency-list version.
    @inline(__always) static var dependencyVersionBits: Int { 32 }
    /// How many vacant slots a ``MemberList`` tolerates before it compacts, however few members
    /// it has.
    @inline(__always) static var memberListSlack: Int { 64 }
    /// How many past epochs ``EpochCounts`` keeps before it cuts them.
    @inline(__always) static var epochCountsSlack: Int { 32 }
    /// How many stale entries a held list of a queue tolerates beyond twice its epoch's members.
    @inline(__always) static var heldListSlack: Int { 16 }
    /// The smallest capacity of a ``RingBuffer``'s storage, and the capacity below which it does
    /// not shrink.
    @inline(__always) static var ringBufferMinimumCapacity: Int { 8 }
    /// From this many dependents on, a ``DependentList`` keeps a set of them.
    @inline(__always) static var dependentListIndexThreshold: Int { 16 }
    /// From this many dependencies on, an operation keeps a set of them.
    @inline(__always) static var dependencySetThreshold: Int { 16 }
    /// The smallest capacity of a ``SlotIndex`` (a power of two): room for 32 keys, a list of
    /// 16 that becomes long and grows a little.
    @inline(__always) static var slotIndexMinimumCapacity: Int { 64 }
    #endif

    /// The dependency-list version that follows `version` (see
    /// `OpStateMachine.dependencyVersion`): wraps after 2^``dependencyVersionBits`` changes.
    @inline(__always)
    static func nextDependencyVersion(after version: UInt32) -> UInt32 {
        let next = version &+ 1
        return dependencyVersionBits >= 32 ? next : next & (1 << UInt32(dependencyVersionBits) - 1)
    }
}
