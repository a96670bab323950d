import Testing
@testable import Operations

@Suite struct SmokeExitTests {
    @Test func startingANotReadyOpTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let a = BlockOp {}
            let b = BlockOp {}
            b.name = "needs-a"
            b.addDependency(a)
            b.start()
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text.contains("needs-a"))
        #expect(text.contains("not ready"))
    }
}
