import Synchronization

/// An active observation, returned by `observe(_:options:changeHandler:)`.
///
/// The observation lasts until ``invalidate()`` is called or the token is released, like
/// Foundation's `NSKeyValueObservation`. Keep the token for as long as you want changes.
public final class ObservationToken: Sendable {
    private let registry: ObserverRegistry
    private let entry: ObserverRegistry.Entry

    init(registry: ObserverRegistry, entry: ObserverRegistry.Entry) {
        self.registry = registry
        self.entry = entry
    }

    /// Whether the observation still delivers changes.
    public var isValid: Bool {
        entry.isActive.load(ordering: .acquiring)
    }

    /// Stops the observation. Calling it again has no effect.
    ///
    /// A change that another thread is delivering at this very moment may still reach the
    /// handler once; no change made after `invalidate()` returns does.
    public func invalidate() {
        registry.remove(entry)
    }

    deinit {
        registry.remove(entry)
    }
}
