/// Which values an observer receives, mirroring Foundation's `NSKeyValueObservingOptions`.
public struct ObservingOptions: OptionSet, Sendable, Hashable {
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
    /// The handler is also called just before each change, with ``ObservedChange/isPrior`` set.
    public static let prior = ObservingOptions(rawValue: 1 << 3)
}
