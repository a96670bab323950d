/// The thread an instrument event happened on: its number in traces (1, 2, …, in the order
/// threads first appear) and whether it is one of the library's worker threads.
struct TraceThread: Sendable {
    let number: Int
    let isWorker: Bool

    /// How traces name it: "worker thread 3", or "thread 1" for a thread of the program's.
    var name: String {
        isWorker ? "worker thread \(number)" : "thread \(number)"
    }
}
