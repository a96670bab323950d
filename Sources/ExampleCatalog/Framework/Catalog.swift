/// Every example, in the order the guide and the README present them: the guide's listings, the
/// queue's features, a downloader operation, then GCD idioms next to their `Operations`
/// counterparts.
public enum Catalog {
    /// All the examples.
    public static let all: [Example] = [
        InvocationOperationExample.example,
        BlockOperationExample.example,
        NonConcurrentOperationExample.example,
        CancellationExample.example,
        ConcurrentOperationExample.example,
        ManualStartExample.example,
        DependenciesAcrossQueuesExample.example,
        PrioritiesExample.example,
        CompletionBlockExample.example,
        ObservingStateExample.example,
        SerialQueueExample.example,
        SuspendingExample.example,
        CancelAllExample.example,
        BarrierExample.example,
        WaitingExample.example,
        DownloaderExample.example,
        ServerQueueExample.example,
        RateLimitedClientExample.example,
        SerialQueueComparison.example,
        ConcurrentQueueComparison.example,
        SyncAsyncComparison.example,
        GroupComparison.example,
        BarrierComparison.example,
        ConcurrentPerformComparison.example,
        SemaphoreComparison.example,
    ]

    /// The example called `name`, if there is one.
    public static func example(named name: String) -> Example? {
        all.first { $0.name == name }
    }
}
