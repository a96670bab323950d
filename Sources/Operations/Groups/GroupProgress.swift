/// How far a ``GroupOp`` has come: its children, counted with nested groups rolled up.
public struct GroupProgress: Sendable, Equatable, CustomStringConvertible {
    /// The children added so far.
    public let totalChildCount: Int
    /// The children that finished.
    public let finishedChildCount: Int
    /// The share of the work done, from 0 to 1: each child counts equally, a finished one as 1
    /// and a nested group as its own fraction. An empty group counts as 0 until it finishes.
    public let fractionCompleted: Double

    /// "finished of total (percent)".
    public var description: String {
        "\(finishedChildCount) of \(totalChildCount) (\(Int((fractionCompleted * 100).rounded())) %)"
    }
}
