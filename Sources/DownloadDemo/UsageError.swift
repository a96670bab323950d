/// A command line the demo does not understand.
enum UsageError: Error, Equatable, CustomStringConvertible {
    /// An argument starting with `-` that is not one of the demo's options.
    case unknownOption(String)
    /// An argument that is not an option; the demo takes none.
    case unexpectedArgument(String)
    /// An option that takes a value came last, without it.
    case missingValue(option: String)
    /// An option's value is not one it accepts; `expected` says what it accepts.
    case invalidValue(option: String, value: String, expected: String)

    /// A sentence naming the argument at fault.
    var description: String {
        switch self {
        case .unknownOption(let option):
            "unknown option '\(option)'"
        case .unexpectedArgument(let argument):
            "unexpected argument '\(argument)'"
        case .missingValue(let option):
            "option '\(option)' needs a value"
        case .invalidValue(let option, let value, let expected):
            "option '\(option)' needs \(expected), not '\(value)'"
        }
    }
}
