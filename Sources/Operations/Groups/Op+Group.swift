extension Op {
    /// The ``GroupOp`` this operation is a child of, if any.
    ///
    /// From inside a child, `Op.current?.group` reaches the group, for example to cancel it.
    public final var group: GroupOp? {
        withState { $0.group }
    }

    /// The groups this operation is nested in, nearest first.
    final var ancestors: [GroupOp] {
        var ancestors: [GroupOp] = []
        var next = group
        while let current = next {
            ancestors.append(current)
            next = current.group
        }
        return ancestors
    }
}
