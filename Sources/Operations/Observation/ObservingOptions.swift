/// Which values an observer receives, mirroring Foundation's `NSKeyValueObservingOptions`.
public struct ObservingOptions: OptionSet, Sendable, Hashable {
    /// The bits of the set.
    public let rawValue: UInt8

    /// Creates a set of options from its raw value.
    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// The change carries the value after the change in ``ObservedChange/newValue``.
    public static let new = ObservingOptions(rawValue: 1 << 0)
    /// The change carries the value before the change in ``ObservedChange/oldValue``.
    public static let old = ObservingOptions(rawValue: 1 << 1)
    /// The handler is called once with the current value as soon as the observation starts.
    public static let initial = ObservingOptions(rawValue: 1 << 2)
    /// The handler also gets a prior notification for each change, with ``ObservedChange/isPrior``
    /// set and (with ``old``) the value before the change, immediately before the regular one.
    ///
    /// Unlike Foundation's `willChangeValue`, it is not sent before the change is made: the library
    /// never calls a handler while it holds its lock, so when the prior notification arrives the
    /// property already reads the new value. Use ``ObservedChange/oldValue`` for the value before.
    public static let prior = ObservingOptions(rawValue: 1 << 3)
}
