/// Runs callbacks on an actor, one at a time, in the order they were sent: a task that iterates
/// a stream of them, for as long as the channel lives (see ``OpObserver/delivered(to:)``).
final class ActorChannel<Target: Actor>: Sendable {
    private let continuation: AsyncStream<@Sendable () -> Void>.Continuation

    init(_ target: Target) {
        let (stream, continuation) = AsyncStream.makeStream(of: (@Sendable () -> Void).self)
        self.continuation = continuation
        Task {
            for await callback in stream {
                await Self.run(callback, on: target)
            }
        }
    }

    deinit {
        // The callbacks sent so far still run; then the task ends.
        continuation.finish()
    }

    /// Sends `callback`, to run on the actor after those sent before.
    func send(_ callback: @escaping @Sendable () -> Void) {
        continuation.yield(callback)
    }

    private static func run(_ callback: @Sendable () -> Void, on target: isolated Target) {
        callback()
    }
}
