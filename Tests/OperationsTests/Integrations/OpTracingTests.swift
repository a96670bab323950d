#if Tracing
import InMemoryTracing
@testable import Operations
import Testing
import Tracing

/// One tracer for the suite: ``OpTracing/tracer`` is global, and tests in other suites add
/// operations too, so each test finds its own spans by their unique names.
private let tracer: InMemoryTracer = {
    let tracer = InMemoryTracer()
    OpTracing.tracer = tracer
    return tracer
}()

@Suite("OpTracing (Tracing trait)", .serialized)
struct OpTracingTests {
    /// Installs the suite's tracer before each test: a test that first touched it only after its
    /// operation had started (run alone, or first) looked for the span in a tracer that never had it.
    init() {
        _ = tracer
    }

    /// The finished span named `name`, once it has ended.
    private func finishedSpan(named name: String) -> FinishedInMemorySpan? {
        var found: FinishedInMemorySpan?
        _ = eventually {
            found = tracer.finishedSpans.first { $0.operationName == name }
            return found != nil
        }
        return found
    }

    @Test func isOnWhenTheTraitIsEnabled() {
        #expect(OpTracing.isEnabled)
    }

    @Test func anOperationsSpanIsAChildOfTheContextWhereItWasAdded() throws {
        let token = uniqueToken("traced")
        let queue = OpQueue()
        queue.name = "tracing queue"
        let operation = BlockOp {}
        operation.name = token
        let request = tracer.startSpan("request \(token)", context: .topLevel)
        ServiceContext.$current.withValue(request.context) {
            queue.addOperation(operation)
        }
        // Added inside the request's context, it runs outside it, on a worker thread.
        queue.waitUntilAllOperationsAreFinished()
        request.end()
        let span = try #require(finishedSpan(named: token))
        let requestSpan = try #require(finishedSpan(named: "request \(token)"))
        #expect(span.parentSpanID == requestSpan.spanID)
        #expect(span.traceID == requestSpan.traceID)
        #expect(span.attributes["operations.type"]?.toSpanAttribute() == .string("BlockOp"))
        #expect(span.attributes["operations.queue"]?.toSpanAttribute() == .string("tracing queue"))
        #expect(span.attributes["operations.outcome"]?.toSpanAttribute() == .string("succeeded"))
        #expect(span.errors.isEmpty && span.status == nil)
    }

    @Test func aFailedOperationRecordsItsError() throws {
        struct Broken: Error {}
        let token = uniqueToken("failing")
        let operation = ResultOp<Int> { throw Broken() }
        operation.name = token
        OpQueue().addOperations([operation], waitUntilFinished: true)
        let span = try #require(finishedSpan(named: token))
        #expect(span.attributes["operations.outcome"]?.toSpanAttribute() == .string("failed"))
        #expect(span.errors.count == 1 && span.errors.first?.error is Broken)
        #expect(span.status?.code == .error)
    }

    @Test func aGroupsChildrenAreChildrenOfTheGroupsSpan() throws {
        let token = uniqueToken("group")
        let child = BlockOp {}
        child.name = "\(token) child"
        let group = GroupOp(operations: [child])
        group.name = token
        OpQueue().addOperations([group], waitUntilFinished: true)
        let groupSpan = try #require(finishedSpan(named: token))
        let childSpan = try #require(finishedSpan(named: "\(token) child"))
        #expect(childSpan.parentSpanID == groupSpan.spanID)
        #expect(childSpan.attributes["operations.group"]?.toSpanAttribute() == .string(token))
    }

    @Test func anOperationCancelledBeforeItStartedGetsAnEmptySpan() throws {
        let token = uniqueToken("cancelled")
        let operation = BlockOp {}
        operation.name = token
        operation.cancel()
        OpQueue().addOperations([operation], waitUntilFinished: true)
        let span = try #require(finishedSpan(named: token))
        #expect(span.attributes["operations.outcome"]?.toSpanAttribute() == .string("cancelled"))
    }

    @Test func anOperationStartedByHandTakesTheCurrentContext() throws {
        let token = uniqueToken("manual")
        let operation = BlockOp {}
        operation.name = token
        let parent = tracer.startSpan("parent \(token)", context: .topLevel)
        ServiceContext.$current.withValue(parent.context) {
            operation.start()
        }
        parent.end()
        let span = try #require(finishedSpan(named: token))
        #expect(span.parentSpanID == finishedSpan(named: "parent \(token)")?.spanID)
    }

    @Test func theBodyRunsInItsSpansContext() throws {
        let token = uniqueToken("context")
        let seen = LockedBox<String?>(nil)
        let operation = BlockOp {
            seen.withLockedValue { $0 = ServiceContext.current?.inMemorySpanContext?.spanID }
        }
        operation.name = token
        OpQueue().addOperations([operation], waitUntilFinished: true)
        let span = try #require(finishedSpan(named: token))
        #expect(seen.withLockedValue { $0 } == span.spanID)
    }

    @Test func disablingEndsTheSpansStillOpen() throws {
        let token = uniqueToken("open")
        let gate = Gate()
        let entered = Gate()
        let operation = BlockOp {
            entered.open()
            _ = gate.wait()
        }
        operation.name = token
        let queue = OpQueue()
        queue.addOperation(operation)
        // In its body, not only executing: its span starts just after its state says executing.
        #expect(entered.wait())
        OpTracing.isEnabled = false
        let span = try #require(finishedSpan(named: token))
        #expect(span.attributes["operations.outcome"]?.toSpanAttribute() == .string("unfinished"))
        OpTracing.isEnabled = true
        OpTracing.isEnabled = true   // twice: still installed once
        gate.open()
        queue.waitUntilAllOperationsAreFinished()
        #expect(tracer.finishedSpans.count { $0.operationName == token } == 1)
    }

    /// An operation heard starting just before tracing was turned off stores its span after the
    /// open spans were ended: its span is ended at once, as unfinished, instead of staying open.
    @Test func aSpanStartedAsTracingIsTurnedOffIsEndedAsUnfinished() throws {
        let token = uniqueToken("straggler")
        let operation = BlockOp {}
        operation.name = token
        OpTracing.isEnabled = false
        DistributedTracingInstrument.shared.operationStarted(operation, at: 0, thread: Instruments.currentThread)
        OpTracing.isEnabled = true
        let span = try #require(finishedSpan(named: token))
        #expect(span.attributes["operations.outcome"]?.toSpanAttribute() == .string("unfinished"))
    }

    @Test func disablingStopsTheSpans() throws {
        let token = uniqueToken("untraced")
        OpTracing.isEnabled = false
        defer { OpTracing.isEnabled = true }
        let operation = BlockOp {}
        operation.name = token
        OpQueue().addOperations([operation], waitUntilFinished: true)
        #expect(!OpTracing.isEnabled)
        #expect(!tracer.finishedSpans.contains { $0.operationName == token })
    }
}
#endif
