import Operations

/// An operation's `error`, reduced to what the reference model predicts.
enum ModelErrorKind: Codable, Hashable, Sendable, CustomStringConvertible {
    case none
    /// A `ConditionFailedError`; the condition's name, or `nil` when the name is not predicted.
    case conditionFailed(String?)
    /// ``ModelWorkError/thrown``.
    case thrown
    /// ``ModelWorkError/cancelled`` (from `cancel(with:)`).
    case cancelledWithError
    /// A `GroupError` listing this many errors.
    case group(Int)
    /// Something the model never predicts.
    case other(String)

    init(_ error: (any Error)?) {
        switch error {
        case nil: self = .none
        case let failed as ConditionFailedError: self = .conditionFailed(failed.condition)
        case let group as GroupError: self = .group(group.errors.count)
        case let model as ModelWorkError: self = model == .thrown ? .thrown : .cancelledWithError
        case let other?: self = .other(String(describing: other))
        }
    }

    var isNone: Bool { self == .none }

    /// Whether an observed error matches this prediction.
    func admits(_ observed: ModelErrorKind) -> Bool {
        switch (self, observed) {
        case (.conditionFailed(nil), .conditionFailed): true
        default: self == observed
        }
    }

    var description: String {
        switch self {
        case .none: "nil"
        case .conditionFailed(let name): "ConditionFailedError(\(name ?? "_"))"
        case .thrown: "ModelWorkError.thrown"
        case .cancelledWithError: "ModelWorkError.cancelled"
        case .group(let count): "GroupError(\(count) errors)"
        case .other(let text): "other(\(text))"
        }
    }
}
