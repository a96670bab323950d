import Foundation
import Operations
import Synchronization

/// The soak of a queue that is never empty, as a server's is: tens of millions of operations
/// through one queue that always holds about ``Growth/inside`` of them, with the heap in use
/// noted at eleven checkpoints. The heap is flat if, after the first tenth of the run (threads
/// started, buffers at their working size), it never rises more than ``allowance`` above where
/// it was: a queue that kept one byte per operation ever added would gain 18 MB over 20 million.
///
///     swift run -c release complexity --soak 20000000
enum Soak {
    /// How far the heap may rise over the run after its first tenth, whatever the run's length.
    static let allowance = 1 << 20

    /// Runs `n` operations through a queue of width 1 (operations leave in the order they came,
    /// the shape in which what a queue keeps of departed members piles up) and then through one
    /// of default width; prints the checkpoints and returns whether both stayed flat.
    static func run(operations n: Int) -> Bool {
        var flat = true
        for (label, width) in [("width 1", 1), ("default width", OpQueue.defaultMaxConcurrentOperationCount)] {
            let started = Date()
            let heap = checkpoints(n, width: width)
            let baseline = heap[1]
            let rise = heap[1...].max()! - baseline
            let passes = rise <= allowance
            flat = flat && passes
            let seconds = Date().timeIntervalSince(started)
            print("soak, \(label): \(n) operations in \(String(format: "%.1f", seconds)) s, "
                + "\(String(format: "%.0f", Double(n) / seconds)) per second")
            print("  heap in use at each tenth (KiB): " + heap.map { String($0 / 1024) }.joined(separator: " "))
            print("  resident size at the end: \(residentKiB()) KiB")
            print("  rise after the first tenth: \(rise / 1024) KiB (limit \(allowance / 1024) KiB): "
                + (passes ? "flat" : "GROWS"))
            fflush(nil)
        }
        return flat
    }

    /// The heap in use when the operations numbered 0, n/10, 2n/10 ... n−1 ran.
    private static func checkpoints(_ n: Int, width: Int) -> [Int] {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = width
        let first = min(Growth.inside, n)
        let done = Countdown(n)
        let marks = Checkpoints()
        let ticket = Ticket(startingAt: first)
        let step = max(1, n / 10)
        @Sendable func next() -> Op {
            BlockOp {
                let number = ticket.take()
                if number < n {
                    if number % step == 0, number / step <= 10 {
                        marks.note(number / step)
                    }
                    if number == n - 1 { marks.note(10) }
                    queue.addOperation(next())
                }
                done.tick()
            }
        }
        marks.note(0)
        queue.addOperations((0..<first).map { _ in next() }, waitUntilFinished: false)
        done.wait()
        return marks.heap
    }

    /// The heap in use at each checkpoint, noted by whichever thread reaches it.
    private final class Checkpoints: Sendable {
        private let noted = Mutex<[Int]>(Array(repeating: 0, count: 11))

        func note(_ index: Int) {
            let bytes = Heap.bytesInUse
            noted.withLock { $0[index] = bytes }
        }

        var heap: [Int] { noted.withLock { $0 } }
    }

    /// The process's resident size, from `/proc/self/statm` (0 where there is none).
    private static func residentKiB() -> Int {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = statm.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE))) / 1024
    }
}
