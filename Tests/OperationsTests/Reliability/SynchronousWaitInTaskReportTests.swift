import Testing
import Dispatch
@testable import Operations

// Distinct call sites of the synchronous waits, outside any test function so that each is one
// place in the code whatever calls it.
@inline(never) private func waitHere(_ operation: Op) { operation.waitUntilFinished() }
@inline(never) private func waitThere(_ operation: Op) { operation.waitUntilFinished() }
@inline(never) private func waitOnAPlainThread(_ operation: Op) { operation.waitUntilFinished() }
@inline(never) private func waitInABody(_ operation: Op) { operation.waitUntilFinished() }
@inline(never) private func waitForTheQueue(_ queue: OpQueue) { queue.waitUntilAllOperationsAreFinished() }
@inline(never) private func addAndWait(_ queue: OpQueue) { queue.addOperations([BlockOp {}], waitUntilFinished: true) }

/// Issue 23: a synchronous wait called inside a task is reported through ``OpDiagnostics``, once
/// per call site, naming the wait and the `async` form to use; the wait itself is unchanged. The
/// operations waited for have finished already, so no test blocks a thread.
@Suite struct SynchronousWaitInTaskReportTests {
    private let recorder = DiagnosticsRecorder.shared

    /// An operation named `token` that has finished.
    private func finishedOperation(_ token: String) async -> Op {
        let operation = BlockOp {}
        operation.name = token
        await OpQueue().addOperations([operation], waitUntilFinished: true)
        return operation
    }

    @Test func aWaitInsideATaskIsReportedOncePerCallSite() async {
        let (first, second, third) = (uniqueToken("wait"), uniqueToken("wait"), uniqueToken("wait"))
        let operations = [await finishedOperation(first), await finishedOperation(second), await finishedOperation(third)]
        await Task.detached {
            waitHere(operations[0])
            waitHere(operations[1])   // the same place: not reported again
            waitThere(operations[2])  // another place
        }.value
        let reports = recorder.reports(mentioning: first)
        #expect(reports.count == 1)
        #expect(recorder.reports(mentioning: second).isEmpty)
        #expect(recorder.reports(mentioning: third).count == 1)
        let report = reports.first ?? ""
        #expect(report.contains("waitUntilFinished() was called on"), "\(report)")
        #expect(report.contains("inside a task"), "\(report)")
        #expect(report.contains("await op.waitUntilFinished()"), "\(report)")
        #if os(Linux) || canImport(Darwin)
        #expect(report.contains("+0x"), "the call site: \(report)")
        #endif
    }

    @Test func aWaitOutsideAnyTaskIsNotReported() async {
        let token = uniqueToken("wait")
        let operation = await finishedOperation(token)
        await onOwnThread { waitOnAPlainThread(operation) }
        #expect(recorder.reports(mentioning: token).isEmpty)
    }

    @Test func aWaitInTheBodyOfAnAsyncOpOnTheLibrarysThreadsIsNotReported() async {
        let token = uniqueToken("wait")
        let operation = await finishedOperation(token)
        let body = AsyncOp { waitInABody(operation) }
        await OpQueue().addOperations([body], waitUntilFinished: true)
        #expect(body.isFinished)
        #expect(recorder.reports(mentioning: token).isEmpty)
    }

    @Test func theQueuesWaitsAreReportedNamingTheQueueAndTheirAsyncForm() async {
        let (waiting, adding) = (OpQueue(), OpQueue())
        waiting.name = uniqueToken("queue")
        adding.name = uniqueToken("queue")
        await Task.detached {
            waitForTheQueue(waiting)
            addAndWait(adding)
        }.value
        let waitReports = recorder.reports(mentioning: waiting.name!)
        #expect(waitReports.count == 1)
        #expect(waitReports.first?.contains("await queue.waitUntilAllOperationsAreFinished()") == true, "\(waitReports)")
        let addReports = recorder.reports(mentioning: adding.name!)
        #expect(addReports.count == 1)
        #expect(addReports.first?.contains("addOperations(_:waitUntilFinished: true) was called on") == true, "\(addReports)")
    }
}
