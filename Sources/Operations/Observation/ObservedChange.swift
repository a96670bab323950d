/// One change of an observed property, mirroring Foundation's `NSKeyValueObservedChange`.
///
/// Which values are set depends on the ``ObservingOptions`` the observation was made with.
public struct ObservedChange<Value> {
    /// The value before the change, when the observation asked for ``ObservingOptions/old``.
    public let oldValue: Value?
    /// The value after the change, when the observation asked for ``ObservingOptions/new``.
    /// Always `nil` for a prior notification.
    public let newValue: Value?
    /// `true` for the notification sent before a change (``ObservingOptions/prior``).
    public let isPrior: Bool

    /// Creates a change record.
    public init(oldValue: Value?, newValue: Value?, isPrior: Bool = false) {
        self.oldValue = oldValue
        self.newValue = newValue
        self.isPrior = isPrior
    }
}

extension ObservedChange: Sendable where Value: Sendable {}
