import Testing
import Dispatch
import Synchronization
@testable import Operations

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A queue that is never empty (a server's queue), run for a long time: its memory must stay
/// flat, whatever the number of operations that went through it (issue 22, defect 3).
///
/// By default 200,000 operations go through (a few seconds in a debug build); for the soak, set
/// `OPERATIONS_NEVER_EMPTY_OPERATIONS`, in a release build:
///
/// ```sh
/// OPERATIONS_NEVER_EMPTY_OPERATIONS=20000000 swift test -c release \
///     --filter aNeverEmptyQueueKeepsItsMemoryFlat
/// ```
///
/// The assertion counts the queue's own storage (``OpQueueStateMachine/Footprint``: member slots,
/// ready-list capacity, held entries, epochs), which is deterministic; the resident memory of the
/// process is printed at the start and the end too, for the record.
@Suite struct NeverEmptyQueueSoakTests {
    /// How many operations are in the queue at once: each one, as it runs, adds the next.
    private static let inFlight = 256

    @Test func aNeverEmptyQueueKeepsItsMemoryFlatOverMillionsOfOperations() async {
        let total = Self.operationCount
        let report = await onOwnThread { Self.run(total: total) }
        print("never-empty soak: \(total) operations in \(report.seconds) s; "
              + "resident \(report.residentStart / 1_048_576) MiB at the start, \(report.residentEnd / 1_048_576) MiB at the end; "
              + "queue storage \(report.start.totalCapacity) entries at the start, \(report.end.totalCapacity) at the end "
              + "(largest \(report.largest.totalCapacity)): \(report.largest)")
        #expect(report.ran == total + report.barriers)
        #expect(report.start.members > 0 && report.end.members > 0)
        // Bounds that depend on how much the queue holds at once, not on how many went through:
        // the operations in flight, a barrier, and operations that spawned their successor but
        // have not left yet.
        let members = Self.inFlight + 8
        let slots = 2 * max(members + 1, NarrowedCounters.memberListSlack) + 1
        #expect(report.largest.members <= members, "\(report.largest)")
        #expect(report.largest.memberSlots <= slots, "\(report.largest)")
        #expect(report.largest.memberCapacity <= 2 * slots + 16, "\(report.largest)")
        #expect(report.largest.readyCapacity <= 8 * members + 64, "\(report.largest)")
        #expect(report.largest.heldEntries <= 3 * members + 16, "\(report.largest)")
        #expect(report.largest.epochCapacity <= 2 * members + 2 * NarrowedCounters.epochCountsSlack + 16, "\(report.largest)")
        #expect(report.largest.totalCapacity <= 16 * members + 256, "\(report.largest)")
    }

    /// `OPERATIONS_NEVER_EMPTY_OPERATIONS`, or 200,000 (50,000 in the checked build, where the
    /// scheduler checks its invariants, O(members), after every event).
    private static var operationCount: Int {
        #if OPERATIONS_INTERNAL_CHECKS
        let standard = 50_000
        #else
        let standard = 200_000
        #endif
        return getenv("OPERATIONS_NEVER_EMPTY_OPERATIONS").flatMap { Int(String(cString: $0)) }.flatMap { $0 > 0 ? $0 : nil } ?? standard
    }

    private struct Report: Sendable {
        var seconds = 0.0
        var ran = 0
        var barriers = 0
        var residentStart = 0
        var residentEnd = 0
        var start = OpQueueStateMachine.Footprint()
        var end = OpQueueStateMachine.Footprint()
        var largest = OpQueueStateMachine.Footprint()
    }

    /// Pushes `total` operations through a queue that is never empty and has no long-lived member:
    /// ``inFlight`` operations are added, and each one, as it runs, adds the next (so the queue
    /// holds its successor before it leaves), and they leave about in the order they came, as on
    /// a server. Now and then an operation changes priority while it waits (stale ready-list
    /// entries), depends on the one added before it, or a barrier joins (epochs, held entries).
    /// The sizes are sampled a hundred times, from inside the operations, while the queue is full.
    private static func run(total: Int) -> Report {
        let queue = OpQueue()
        queue.name = "never-empty soak"
        queue.maxConcurrentOperationCount = 2
        let added = Atomic<Int>(0)
        let ran = Atomic<Int>(0)
        let previous = LockedBox<Op?>(nil)
        let report = LockedBox(Report())
        let done = DispatchSemaphore(value: 0)
        let barriers = total / 5_003
        let sampleEvery = max(1, total / 100)

        /// Adds the next operation (the `n`th), unless all have been added; an operation that
        /// runs calls it before it leaves.
        @Sendable func spawn() {
            let n = added.add(1, ordering: .relaxed).newValue
            guard n <= total else { return }
            if n.isMultiple(of: sampleEvery) || n == total / 10 || n == total - inFlight {
                let footprint = queue.withLock { queue.machine.footprint }
                let resident = n == total / 10 || n == total - inFlight ? residentBytes() : 0
                report.withLockedValue { report in
                    report.largest = report.largest.max(footprint)
                    if n == total / 10 { (report.start, report.residentStart) = (footprint, resident) }
                    if n == total - inFlight { (report.end, report.residentEnd) = (footprint, resident) }
                }
            }
            let operation = BlockOp {
                spawn()
                if ran.add(1, ordering: .relaxed).newValue == total + barriers { done.signal() }
            }
            // An operation already in the queue (so in this one's epoch or an earlier one: a
            // dependency on one held behind a later barrier would close a cycle).
            if n % 97 == 0, let before = previous.withLockedValue({ $0 }) {
                operation.addDependency(before)
            }
            queue.addOperation(operation)
            previous.withLockedValue { $0 = operation }
            if n % 13 == 0 {
                operation.queuePriority = n.isMultiple(of: 2) ? .high : .low
                operation.queuePriority = .normal
            }
            if n % 5_003 == 0 {
                queue.addBarrierBlock {
                    if ran.add(1, ordering: .relaxed).newValue == total + barriers { done.signal() }
                }
            }
        }

        let began = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<inFlight { spawn() }
        done.wait()
        queue.waitUntilAllOperationsAreFinished()
        var result = report.withLockedValue { $0 }
        result.seconds = Double(DispatchTime.now().uptimeNanoseconds - began) / 1e9
        result.ran = ran.load(ordering: .relaxed)
        result.barriers = barriers
        return result
    }

    /// The resident memory of the process in bytes (Linux: `/proc/self/statm`), 0 elsewhere.
    private static func residentBytes() -> Int {
        #if os(Linux)
        guard let file = fopen("/proc/self/statm", "r") else { return 0 }
        defer { fclose(file) }
        var size = 0
        var resident = 0
        guard readStatm(file, &size, &resident) else { return 0 }
        return resident * Int(sysconf(Int32(_SC_PAGESIZE)))
        #else
        return 0
        #endif
    }

    #if os(Linux)
    /// Reads the first two numbers of `/proc/self/statm` (total and resident pages).
    private static func readStatm(_ file: UnsafeMutablePointer<FILE>, _ size: inout Int, _ resident: inout Int) -> Bool {
        var buffer = [CChar](repeating: 0, count: 128)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { return false }
        let fields = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).split(separator: " ")
        guard fields.count >= 2, let total = Int(fields[0]), let pages = Int(fields[1]) else { return false }
        size = total
        resident = pages
        return true
    }
    #endif
}
