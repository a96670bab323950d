import Foundation
@testable import Operations
import Testing

@Suite("OpTrace.chromeTraceJSON")
struct ChromeTraceJSONTests {
    /// Records `operations` run on a queue and returns the parsed events of their trace alone.
    private func events(of operations: [Op], queue: OpQueue = OpQueue()) throws -> (trace: OpTrace, events: [[String: Any]]) {
        let trace = OpTrace.record {
            queue.addOperations(operations, waitUntilFinished: true)
        }
        return try parsedEvents(of: trace, only: operations)
    }

    /// The same for operations with `async` bodies, awaited rather than waited for: a blocking
    /// wait here would hold a thread of the cooperative pool that their bodies need.
    private func eventsAwaiting(_ operations: [Op], queue: OpQueue = OpQueue()) async throws -> (trace: OpTrace, events: [[String: Any]]) {
        let trace = await OpTrace.record {
            await queue.addOperations(operations, waitUntilFinished: true)
        }
        return try parsedEvents(of: trace, only: operations)
    }

    /// The trace of `operations` alone, and its parsed events.
    private func parsedEvents(of recorded: OpTrace, only operations: [Op]) throws -> (trace: OpTrace, events: [[String: Any]]) {
        let ids = Set(operations.map(\.serial))
        let trace = recorded.filter { ids.contains($0.id) }
        let data = Data(trace.chromeTraceJSON.utf8)
        let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(root["displayTimeUnit"] as? String == "ms")
        return (trace, try #require(root["traceEvents"] as? [[String: Any]]))
    }

    @Test func eachOperationIsASliceOnItsThreadWithItsDetails() throws {
        let queue = OpQueue()
        queue.name = "json \"queue\""
        let first = BlockOp { blockThread(milliseconds: 2) }
        first.name = "first\nline"
        let second = BlockOp {}
        second.name = "second"
        let (trace, events) = try events(of: [first, second], queue: queue)
        let slices = events.filter { $0["ph"] as? String == "X" }
        #expect(slices.count == 2)
        let firstSlice = try #require(slices.first { $0["name"] as? String == "first\nline" })
        let arguments = try #require(firstSlice["args"] as? [String: Any])
        #expect(arguments["type"] as? String == "BlockOp")
        #expect(arguments["queue"] as? String == "json \"queue\"")
        #expect(arguments["outcome"] as? String == "succeeded")
        #expect(arguments["id"] as? Int == Int(first.serial))
        #expect((firstSlice["dur"] as? Double).map { $0 >= 2_000 } == true)
        #expect(firstSlice["tid"] as? Int == trace[first]?.thread)
        // Every thread that a slice is on is named.
        let namedThreads = Set(events.filter { $0["name"] as? String == "thread_name" }.compactMap { $0["tid"] as? Int })
        #expect(Set(slices.compactMap { $0["tid"] as? Int }).isSubset(of: namedThreads))
    }

    @Test func dependenciesAreFlowArrowsFromTheDependencyToTheDependent() throws {
        let a = BlockOp {}
        let b = BlockOp {}
        let c = BlockOp {}
        c.addDependency(a)
        c.addDependency(b)
        let (_, events) = try events(of: [a, b, c])
        let starts = events.filter { $0["ph"] as? String == "s" }
        let ends = events.filter { $0["ph"] as? String == "f" }
        #expect(starts.count == 2 && ends.count == 2)
        #expect(Set(starts.compactMap { $0["id"] as? Int }) == Set(ends.compactMap { $0["id"] as? Int }))
        #expect(ends.allSatisfy { $0["bp"] as? String == "e" })
        // Each arrow starts before it ends.
        for start in starts {
            let end = try #require(ends.first { $0["id"] as? Int == start["id"] as? Int })
            #expect((start["ts"] as! Double) <= (end["ts"] as! Double))
        }
    }

    @Test func asynchronousOperationsAreAsyncSlicesAndCancelledOnesAreMarks() async throws {
        let asynchronous = AsyncBlockOp { try await Task.sleep(for: .milliseconds(2)) }
        asynchronous.name = "async"
        let cancelled = BlockOp {}
        cancelled.name = "cancelled"
        cancelled.cancel()
        let (_, events) = try await eventsAwaiting([asynchronous, cancelled])
        let begin = try #require(events.first { $0["ph"] as? String == "b" })
        let end = try #require(events.first { $0["ph"] as? String == "e" })
        #expect(begin["name"] as? String == "async" && end["name"] as? String == "async")
        #expect(begin["id"] as? String == end["id"] as? String)
        #expect((end["ts"] as! Double) - (begin["ts"] as! Double) >= 2_000)
        let mark = try #require(events.first { $0["ph"] as? String == "i" })
        #expect(mark["name"] as? String == "cancelled")
        #expect((mark["args"] as? [String: Any])?["outcome"] as? String == "cancelled")
        #expect(!events.contains { $0["ph"] as? String == "X" })
    }
}
