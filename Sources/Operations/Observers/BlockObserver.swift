/// An ``OpObserver`` made of closures, one per callback, each optional.
///
/// ```swift
/// fetch.addObserver(BlockObserver(
///     willExecute: { operation in log("started \(operation)") },
///     didFinish: { operation, error in log("finished \(operation)", error) }
/// ))
/// ```
public struct BlockObserver: OpObserver {
    private let attach: (@Sendable (Op) -> Void)?
    private let execute: (@Sendable (Op) -> Void)?
    private let executed: (@Sendable (Op) -> Void)?
    private let cancel: (@Sendable (Op, (any Error)?) -> Void)?
    private let finishing: (@Sendable (Op, (any Error)?) -> Void)?
    private let finished: (@Sendable (Op, (any Error)?) -> Void)?
    private let produce: (@Sendable (Op, Op) -> Void)?
    private let adding: (@Sendable (Op, Op) -> Void)?
    private let added: (@Sendable (Op, Op) -> Void)?

    /// Creates an observer that calls the given closures; each takes the same arguments as the
    /// ``OpObserver`` method of the same name.
    public init(
        didAttach: (@Sendable (Op) -> Void)? = nil,
        willExecute: (@Sendable (Op) -> Void)? = nil,
        didExecute: (@Sendable (Op) -> Void)? = nil,
        didCancel: (@Sendable (Op, (any Error)?) -> Void)? = nil,
        willFinish: (@Sendable (Op, (any Error)?) -> Void)? = nil,
        didFinish: (@Sendable (Op, (any Error)?) -> Void)? = nil,
        didProduce: (@Sendable (Op, Op) -> Void)? = nil,
        willAdd: (@Sendable (Op, Op) -> Void)? = nil,
        didAdd: (@Sendable (Op, Op) -> Void)? = nil
    ) {
        attach = didAttach
        execute = willExecute
        executed = didExecute
        cancel = didCancel
        finishing = willFinish
        finished = didFinish
        produce = didProduce
        adding = willAdd
        added = didAdd
    }

    /// Calls the `didAttach` closure.
    public func didAttach(to operation: Op) { attach?(operation) }
    /// Calls the `willExecute` closure.
    public func willExecute(_ operation: Op) { execute?(operation) }
    /// Calls the `didExecute` closure.
    public func didExecute(_ operation: Op) { executed?(operation) }
    /// Calls the `didCancel` closure.
    public func didCancel(_ operation: Op, error: (any Error)?) { cancel?(operation, error) }
    /// Calls the `willFinish` closure.
    public func willFinish(_ operation: Op, error: (any Error)?) { finishing?(operation, error) }
    /// Calls the `didFinish` closure.
    public func didFinish(_ operation: Op, error: (any Error)?) { finished?(operation, error) }
    /// Calls the `didProduce` closure.
    public func didProduce(_ operation: Op, operation produced: Op) { produce?(operation, produced) }
    /// Calls the `willAdd` closure.
    public func willAdd(_ operation: Op, operation added: Op) { adding?(operation, added) }
    /// Calls the `didAdd` closure.
    public func didAdd(_ operation: Op, operation added: Op) { self.added?(operation, added) }
}
