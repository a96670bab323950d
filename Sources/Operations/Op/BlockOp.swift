/// An operation that runs one or more closures concurrently, the counterpart of Foundation's
/// `BlockOperation`.
///
/// ```swift
/// let thumbnails = BlockOp { makeThumbnail(of: first) }
/// thumbnails.addExecutionBlock { makeThumbnail(of: second) }
/// queue.addOperation(thumbnails)
/// ```
///
/// When the operation runs, its blocks run side by side: the first on the thread that started
/// the operation, the others on worker threads (which the pool adds promptly if the blocks block;
/// if the pool has no thread to spare, the starting thread runs the remaining blocks itself).
/// The operation finishes when the last block returns, so it can join a group of concurrent
/// pieces of work like a thread join, while other threads carry on. (Foundation on Linux runs
/// the blocks one after another.) To run closures one after another, add them as separate
/// operations to a queue with ``OpQueue/maxConcurrentOperationCount`` 1.
open class BlockOp: Op, @unchecked Sendable {
    // @unchecked Sendable: `firstBlock` and `otherBlocks` are written with the operation's stripe
    // lock held, and only while it is pending; `main()` reads them after the start transition,
    // which took the same lock, so it sees every block and none can be added any more.
    // Unchecked exclusivity on the hot path, checked in the checked build (see `Lock.swift`).
    #if OPERATIONS_INTERNAL_CHECKS
    private final var firstBlock: (@Sendable () -> Void)?
    private final var otherBlocks: [@Sendable () -> Void] = []
    #else
    @exclusivity(unchecked) private final var firstBlock: (@Sendable () -> Void)?
    @exclusivity(unchecked) private final var otherBlocks: [@Sendable () -> Void] = []
    #endif

    /// Creates an operation with no blocks yet; add them with ``addExecutionBlock(_:)``.
    public override init() {
        super.init()
    }

    /// Creates an operation that runs `block`.
    public init(block: @escaping @Sendable () -> Void) {
        firstBlock = block
        super.init()
    }

    /// Adds a closure to run, concurrently with the others, when the operation runs.
    ///
    /// - Important: Adding a block once the operation has started (or finished) is a programmer
    ///   error and traps: it could never run. Add every block before adding the operation to a
    ///   queue.
    public final func addExecutionBlock(_ block: @escaping @Sendable () -> Void) {
        let accepted = withState { machine -> Bool in
            guard machine.lifecycle == .pending else { return false }
            if firstBlock == nil {
                firstBlock = block
            } else {
                otherBlocks.append(block)
            }
            return true
        }
        if !accepted {
            misuse("addExecutionBlock(_:) was called on \(self) after it started executing or finished; the block could never run. Add every block before the operation starts, or run the closure in a new BlockOp.")
        }
    }

    /// The closures the operation runs, in the order they were added.
    public final var executionBlocks: [@Sendable () -> Void] {
        withState { _ in allBlocks }
    }

    private final var allBlocks: [@Sendable () -> Void] {
        guard let firstBlock else { return [] }
        return [firstBlock] + otherBlocks
    }

    /// Runs every block, concurrently, and returns when the last one has returned.
    open override func main() {
        // No lock needed: see the note on Sendable above.
        guard let firstBlock else { return }
        if otherBlocks.isEmpty {
            firstBlock()
            return
        }
        let blocks = allBlocks
        let group = ConcurrentBlocks(blocks)
        let queue = ThreadContext.queue
        for _ in 1..<blocks.count {
            // The other blocks see the same context as the first: this operation, its queue.
            WorkerPool.shared.submit { [self] in
                ThreadContext.withOperation(self) {
                    ThreadContext.withQueue(queue) {
                        _ = group.runNext()
                    }
                }
            }
        }
        group.runNext()
        group.waitForAll()
    }
}
