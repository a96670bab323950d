import Operations
import Dispatch

let queue = OpQueue()
queue.maxConcurrentOperationCount = 3
let start = DispatchTime.now()
var ops: [Op] = []
for i in 0..<30 {
    ops.append(BlockOp { usleepMs(30); _ = i })
}
queue.addOperations(ops, waitUntilFinished: true)
print("30 x 30ms on width 3:", Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e6, "ms")

// chain
let n = 10_000
var chain: [Op] = []
for i in 0..<n {
    let op = BlockOp {}
    if i > 0 { op.addDependency(chain[i-1]) }
    chain.append(op)
}
let q2 = OpQueue()
let t0 = DispatchTime.now()
q2.addOperations(chain, waitUntilFinished: false)
q2.waitUntilAllOperationsAreFinished()
print("chain 10k:", Double(DispatchTime.now().uptimeNanoseconds - t0.uptimeNanoseconds) / 1e6, "ms")

let q3 = OpQueue()
let t1 = DispatchTime.now()
for _ in 0..<100_000 { q3.addOperation {} }
q3.waitUntilAllOperationsAreFinished()
print("100k independent:", Double(DispatchTime.now().uptimeNanoseconds - t1.uptimeNanoseconds) / 1e6, "ms")

let b = BlockOp()
for _ in 0..<8 { b.addExecutionBlock { usleepMs(50) } }
let t2 = DispatchTime.now()
b.start()
print("blockop 8x50:", Double(DispatchTime.now().uptimeNanoseconds - t2.uptimeNanoseconds) / 1e6, "ms")

let q4 = OpQueue()
let t3 = DispatchTime.now()
for _ in 0..<200 { q4.addOperation { usleepMs(20) } }
q4.waitUntilAllOperationsAreFinished()
print("200x20ms:", Double(DispatchTime.now().uptimeNanoseconds - t3.uptimeNanoseconds) / 1e6, "ms")

func usleepMs(_ ms: Int) {
    let sem = DispatchSemaphore(value: 0)
    _ = sem.wait(timeout: .now() + .milliseconds(ms))
}
