// Observers whose callbacks run on a queue or an actor of your choice.

extension OpObserver {
    /// This observer, with its `did` callbacks (``didAttach(to:)``, ``didExecute(_:)``,
    /// ``didCancel(_:error:)``, ``didFinish(_:error:)``, ``didAdd(_:operation:)``,
    /// ``didProduce(_:operation:)``) run as operations of `queue` rather than on the thread that
    /// delivers them. Give `queue` a width of 1 to keep them in the order of the events.
    ///
    /// ```swift
    /// let ui = OpQueue()
    /// ui.underlyingQueue = .main
    /// ui.maxConcurrentOperationCount = 1
    /// upload.addObserver(ProgressView.Updater(view).delivered(on: ui))
    /// ```
    ///
    /// The `will` callbacks (``willExecute(_:)``, ``willFinish(_:error:)``,
    /// ``willAdd(_:operation:)``) still run where they are delivered: the operation waits for
    /// them, and waiting for another queue there could hold a thread, or never return.
    public func delivered(on queue: OpQueue) -> some OpObserver {
        RedeliveredObserver(base: self) { callback in queue.addOperation(BlockOp(block: callback)) }
    }

    /// This observer, with its `did` callbacks run on `target`, one at a time, in the order of
    /// the events (see ``delivered(on:)`` for which callbacks move). A callback runs on the
    /// actor's executor: `MainActor.assumeIsolated` inside it reaches the main actor's state.
    ///
    /// ```swift
    /// upload.addObserver(BlockObserver(didFinish: { _, error in
    ///     MainActor.assumeIsolated { status.text = error == nil ? "Uploaded" : "Failed" }
    /// }).delivered(to: MainActor.shared))
    /// ```
    public func delivered<Target: Actor>(to target: Target) -> some OpObserver {
        let channel = ActorChannel(target)
        return RedeliveredObserver(base: self) { callback in channel.send(callback) }
    }
}
