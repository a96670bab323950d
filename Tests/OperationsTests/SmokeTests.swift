import Testing
@testable import Operations

@Suite struct SmokeTests {
    @Test func blockOpRunsOnAQueue() {
        let queue = OpQueue()
        let ran = Gate()
        queue.addOperation { ran.open() }
        #expect(ran.wait())
        queue.waitUntilAllOperationsAreFinished()
        #expect(queue.operationCount == 0)
    }
}
