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
    // @unchecked Sendable: `body` and the block list are written with the operation's stripe
    // lock held, and only while it is pending; `main()` reads them after the start transition,
    // which took the same lock, so it sees every block and none can be added any more.
    // Unchecked exclusivity on the hot path, checked in the checked build (see `Lock.swift`).
    //
    // One stored closure keeps a pending operation small: the only block, or, once there are
    // several, a closure that runs the list (kept in the operation's extras) concurrently.
    #if OPERATIONS_INTERNAL_CHECKS
    private final var body: (@Sendable () -> Void)?
    #else
    @exclusivity(unchecked) private final var body: (@Sendable () -> Void)?
    #endif

    /// The blocks of an operation that has more than one, in the order they were added.
    final class BlockList: @unchecked Sendable {
        // @unchecked Sendable: appended to with the operation's lock held while it is pending,
        // read once it started (see `BlockOp`).
        var blocks: [@Sendable () -> Void]

        init(_ blocks: [@Sendable () -> Void]) {
            self.blocks = blocks
        }
    }

    /// Creates an operation with no blocks yet; add them with ``addExecutionBlock(_:)``.
    public override init() {
        super.init()
    }

    /// Creates an operation that runs `block`.
    public init(block: @escaping @Sendable () -> Void) {
        body = block
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
            guard let only = body else {
                body = block
                return true
            }
            let extras = machine.ensureExtras()
            if let list = extras.blockList {
                list.blocks.append(block)
            } else {
                let list = BlockList([only, block])
                extras.blockList = list
                // Unretained: the closure is stored in, and only called by, this operation.
                body = { [unowned(unsafe) self] in self.runConcurrently(list.blocks) }
            }
            return true
        }
        if !accepted {
            misuse("addExecutionBlock(_:) was called on \(self) after it started executing or finished; the block could never run. Add every block before the operation starts, or run the closure in a new BlockOp.")
        }
    }

    /// The closures the operation runs, in the order they were added.
    public final var executionBlocks: [@Sendable () -> Void] {
        withState { machine in
            if let list = machine.extras?.blockList { return list.blocks }
            return body.map { [$0] } ?? []
        }
    }

    /// Runs every block, concurrently, and returns when the last one has returned.
    open override func main() {
        // No lock needed: see the note on Sendable above.
        body?()
    }

    /// Runs `blocks` side by side: the first on this thread, the others on worker threads.
    private final func runConcurrently(_ blocks: [@Sendable () -> Void]) {
        let group = ConcurrentBlocks(blocks)
        let queue = ThreadContext.queue
        let qualityOfService = qualityOfService
        for _ in 1..<blocks.count {
            // The other blocks see the same context as the first: this operation, its queue.
            WorkerPool.shared.submit(qualityOfService: qualityOfService) { [self] in
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
