import Foundation
@testable import Operations
import Testing

// A recording sees every operation in the process, and other tests run alongside: each test
// looks only at its own operations (`trace[operation]`, or a trace filtered to them).

@Suite("OpTrace")
struct OpTraceTests {
    /// The trace restricted to `operations`.
    private func only(_ operations: [Op], of trace: OpTrace) -> OpTrace {
        let ids = Set(operations.map(\.serial))
        return trace.filter { ids.contains($0.id) }
    }

    @Test func aChainIsRecordedWithItsTimesThreadsAndDependencies() throws {
        let queue = OpQueue()
        queue.name = "chain"
        let a = BlockOp { blockThread(milliseconds: 5) }
        a.name = "a"
        let b = BlockOp { blockThread(milliseconds: 20) }
        b.name = "b"
        let c = BlockOp { blockThread(milliseconds: 5) }
        c.name = "c"
        b.addDependency(a)
        c.addDependency(b)
        let trace = OpTrace.record {
            queue.addOperations([c, b, a], waitUntilFinished: true)
        }
        for operation in [a, b, c] {
            let record = try #require(trace[operation])
            #expect(record.name == operation.name)
            #expect(record.typeName == "BlockOp")
            #expect(record.queueName == "chain")
            #expect(record.outcome == .succeeded)
            #expect(record.thread != nil)
            #expect(record.finishThread == record.thread)
            let enqueuedAt = try #require(record.enqueuedAt)
            let startedAt = try #require(record.startedAt)
            let finishedAt = try #require(record.finishedAt)
            #expect(enqueuedAt <= startedAt && startedAt <= finishedAt && finishedAt <= trace.duration)
        }
        #expect(trace[b]?.dependencyIDs == [a.serial])
        #expect(trace[c]?.dependencyIDs == [b.serial])
        // Each waited for its dependency: it started after the dependency finished.
        #expect(trace[b]!.startedAt! >= trace[a]!.finishedAt!)
        #expect(trace[c]!.startedAt! >= trace[b]!.finishedAt!)
        #expect(trace[b]!.runningTime! >= .milliseconds(20))
        #expect(only([a, b, c], of: trace).criticalPath.map(\.id) == [a.serial, b.serial, c.serial])
    }

    @Test func theCriticalPathFollowsTheDependencyThatFinishedLast() {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 2
        // `slow` finishes after `quick` however the threads are scheduled: it waits for quick's
        // completion block, which runs once quick has finished (a fixed delay alone lost to a
        // loaded machine, where quick started more than 30 ms late).
        let quickFinished = Gate()
        let quick = BlockOp {}
        quick.name = "quick"
        quick.completionBlock = { quickFinished.open() }
        let slow = BlockOp {
            #expect(quickFinished.wait())
            blockThread(milliseconds: 5)
        }
        slow.name = "slow"
        let join = BlockOp {}
        join.name = "join"
        let unrelated = BlockOp {}
        join.addDependency(quick)
        join.addDependency(slow)
        let operations: [Op] = [quick, slow, join, unrelated]
        let trace = OpTrace.record {
            queue.addOperations(operations, waitUntilFinished: true)
        }
        #expect(only(operations, of: trace).criticalPath.map(\.label) == ["slow", "join"])
    }

    @Test func theCriticalPathGoesThroughAGroupToWhatHeldTheGroup() {
        let manifest = BlockOp { blockThread(milliseconds: 2) }
        manifest.name = "manifest"
        let quick = BlockOp {}
        quick.name = "quick child"
        let slow = BlockOp { blockThread(milliseconds: 20) }
        slow.name = "slow child"
        let group = GroupOp(operations: [quick, slow])
        group.name = "downloads"
        group.addDependency(manifest)
        let summary = BlockOp {}
        summary.name = "summary"
        summary.addDependency(group)
        let operations: [Op] = [manifest, group, summary]
        let trace = OpTrace.record {
            OpQueue().addOperations(operations, waitUntilFinished: true)
        }
        let path = only(operations + [quick, slow], of: trace).criticalPath.map(\.label)
        #expect(path == ["manifest", "slow child", "downloads", "summary"])
    }

    @Test func anOperationRunningWhenTheRecordingStartsIsRecorded() throws {
        let gate = Gate()
        let entered = Gate()
        let running = BlockOp {
            entered.open()
            _ = gate.wait()
        }
        running.name = "already running"
        let queue = OpQueue()
        queue.addOperation(running)
        // In its body, not only executing: a recording started between the two would see it start.
        #expect(entered.wait())
        let recording = OpTrace.startRecording()
        gate.open()
        running.waitUntilFinished()
        let trace = recording.stop()
        let record = try #require(trace[running])
        #expect(record.startedBeforeRecording)
        #expect(record.startedAt == nil && record.finishedAt != nil)
        #expect(record.outcome == .succeeded)
        // Drawn as a slice from the start of the recording, not as a mark.
        let json = trace.filter { $0.id == running.serial }.chromeTraceJSON
        #expect(json.contains(#""ph":"X","pid":1,"tid":\#(record.finishThread!),"ts":0.000,"#))
    }

    @Test func outcomesTellSuccessFailureCancellationAndUnfinishedWork() throws {
        let queue = OpQueue()
        let succeeds = BlockOp {}
        struct Broken: Error {}
        let failsWithError = ResultOp<Int> { throw Broken() }
        let cancelled = BlockOp {}
        cancelled.cancel()
        let gate = Gate()
        let entered = Gate()
        let hangs = BlockOp {
            entered.open()
            _ = gate.wait()
        }
        let recording = OpTrace.startRecording()
        queue.addOperations([succeeds, failsWithError, cancelled], waitUntilFinished: true)
        queue.addOperation(hangs)
        // In its body, not only executing: the trace records a start just after the operation's
        // state says executing, before the body runs (a recording stopped in between has no start).
        #expect(entered.wait())
        let trace = recording.stop()
        gate.open()
        queue.waitUntilAllOperationsAreFinished()

        #expect(trace[succeeds]?.outcome == .succeeded)
        #expect(trace[failsWithError]?.outcome == .failed)
        #expect(trace[failsWithError]?.error is Broken)
        let cancelledRecord = try #require(trace[cancelled])
        #expect(cancelledRecord.outcome == .cancelled)
        #expect(cancelledRecord.startedAt == nil)
        #expect(cancelledRecord.finishedAt != nil)
        let hanging = try #require(trace[hangs])
        #expect(hanging.outcome == .unfinished)
        #expect(hanging.startedAt != nil && hanging.finishedAt == nil && hanging.runningTime == nil)
    }

    @Test func aGroupsChildrenNameTheirGroupAndTheGroupIsAsynchronous() throws {
        let first = BlockOp {}
        first.name = "first child"
        let second = BlockOp {}
        second.name = "second child"
        second.addDependency(first)
        let group = GroupOp(operations: [first, second])
        group.name = "the group"
        let queue = OpQueue()
        queue.name = "outer"
        let trace = OpTrace.record {
            queue.addOperations([group], waitUntilFinished: true)
        }
        let groupRecord = try #require(trace[group])
        #expect(groupRecord.isAsynchronous)
        #expect(groupRecord.queueName == "outer")
        for child in [first, second] {
            let record = try #require(trace[child])
            #expect(record.groupID == group.serial)
            #expect(record.groupName == "the group")
            #expect(record.queueName == nil)
        }
        // The group finished after its children; the critical path ends with it.
        #expect(only([group, first, second], of: trace).criticalPath.map(\.label) == ["first child", "second child", "the group"])
    }

    @Test func anOperationStartedByHandHasNoQueueAndNoEnqueueTime() throws {
        let operation = BlockOp {}
        let trace = OpTrace.record { operation.start() }
        let record = try #require(trace[operation])
        #expect(record.enqueuedAt == nil && record.queueName == nil)
        #expect(record.startedAt != nil && record.finishedAt != nil)
        #expect(trace.threadNames[record.thread!] == "thread \(record.thread!)")
    }

    @Test func nothingIsRecordedAfterTheRecordingStops() {
        let queue = OpQueue()
        let before = BlockOp {}
        let recording = OpTrace.startRecording()
        #expect(recording.isRecording)
        queue.addOperations([before], waitUntilFinished: true)
        let trace = recording.stop()
        #expect(!recording.isRecording)
        let after = BlockOp {}
        queue.addOperations([after], waitUntilFinished: true)
        #expect(trace[before] != nil)
        #expect(trace[after] == nil)
        #expect(recording.stop()[after] == nil)
    }

    @Test func aRecordingKeepsNoQueueOrOperationAlive() {
        let recording = OpTrace.startRecording()
        defer { _ = recording.stop() }
        weak var weakQueue: OpQueue?
        weak var weakOperation: BlockOp?
        do {
            let queue = OpQueue()
            let operation = BlockOp {}
            queue.addOperations([operation], waitUntilFinished: true)
            weakQueue = queue
            weakOperation = operation
        }
        #expect(eventually { weakQueue == nil && weakOperation == nil })
    }

    @Test func recordingsRunningTogetherEachSeeEveryOperation() {
        let queue = OpQueue()
        let outer = OpTrace.startRecording()
        let early = BlockOp {}
        queue.addOperations([early], waitUntilFinished: true)
        let inner = OpTrace.startRecording()
        let late = BlockOp {}
        queue.addOperations([late], waitUntilFinished: true)
        let innerTrace = inner.stop()
        let outerTrace = outer.stop()
        #expect(outerTrace[early] != nil && outerTrace[late] != nil)
        #expect(innerTrace[early] == nil && innerTrace[late] != nil)
    }

    @Test func asyncBodiesCanBeRecorded() async throws {
        let queue = OpQueue()
        let operation = AsyncBlockOp { try await Task.sleep(for: .milliseconds(5)) }
        let trace = await OpTrace.record {
            queue.addOperation(operation)
            await queue.waitUntilAllOperationsAreFinished()
        }
        let record = try #require(trace[operation])
        #expect(record.isAsynchronous)
        #expect(record.outcome == .succeeded)
        #expect(record.runningTime! >= .milliseconds(5))
    }

    @Test func everyOperationOfALargeBatchIsRecorded() {
        #if OPERATIONS_INTERNAL_CHECKS
        let count = 1_000
        #else
        let count = 10_000
        #endif
        let queue = OpQueue()
        let operations = (0..<count).map { _ in BlockOp {} }
        let trace = OpTrace.record {
            queue.addOperations(operations, waitUntilFinished: true)
        }
        let recorded = only(operations, of: trace)
        #expect(recorded.operations.count == count)
        #expect(recorded.operations.allSatisfy { $0.outcome == .succeeded && $0.runningTime != nil })
    }

    @Test func theSummaryNamesTheCriticalPathAndTheLongestOperations() {
        let queue = OpQueue()
        queue.name = "summarized"
        queue.maxConcurrentOperationCount = 1
        let fetch = BlockOp { blockThread(milliseconds: 2) }
        fetch.name = "fetch"
        let parse = BlockOp { blockThread(milliseconds: 60) }   // the longest by far, even on a loaded machine
        parse.name = "parse"
        parse.addDependency(fetch)
        let failing = ResultOp<Int> { struct Failure: Error {}; throw Failure() }
        failing.name = "failing"
        let operations: [Op] = [fetch, parse, failing]
        let summary = only(operations, of: OpTrace.record {
            queue.addOperations(operations, waitUntilFinished: true)
        }).summary
        let lines = summary.split(separator: "\n").map(String.init)
        #expect(lines[0].hasPrefix("OpTrace: 3 operations over "))
        // A width-1 queue runs one at a time, not always on the same thread.
        #expect(lines[0].contains(" on 1 queue and "))
        #expect(lines[0].hasSuffix(" (2 succeeded, 1 failed)"))
        #expect(lines[1].hasPrefix("Time in operations (summed): waiting for dependencies "))
        #expect(summary.contains("Critical path (2 operations, "))
        #expect(summary.contains("  fetch: ran "))
        #expect(summary.contains("  parse: ran "))
        let longest = lines.firstIndex(of: "Longest operations:")
        #expect(longest.map { lines[$0 + 1].hasSuffix("parse (BlockOp, queue \"summarized\")") } == true)
    }

    @Test func durationsAreFormattedForPeople() {
        #expect(OpTrace.format(.nanoseconds(640)) == "640 ns")
        #expect(OpTrace.format(.microseconds(12)) == "12 µs")
        #expect(OpTrace.format(.microseconds(3_449)) == "3.4 ms")
        #expect(OpTrace.format(.milliseconds(1_234)) == "1.23 s")
        #expect(OpTrace.format(.seconds(-1)) == "0 ns")
    }

    @Test func anEmptyTraceSaysSo() {
        let trace = OpTrace.record {}.filter { _ in false }
        #expect(trace.operations.isEmpty)
        #expect(trace.criticalPath.isEmpty)
        #expect(trace.summary.hasPrefix("OpTrace: 0 operations over "))
    }
}
