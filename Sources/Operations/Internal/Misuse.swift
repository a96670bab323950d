/// Stops the program because the library was used in a way it does not allow.
///
/// Programmer errors (starting an operation that is not ready, adding one to two queues, ...) are
/// not recoverable conditions of the work, so they trap, like an out-of-bounds index. The message
/// names the object and says what to do instead. `fatalError` is used rather than `precondition`
/// so that the message is printed in optimized builds too.
@inline(never)
func misuse(_ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) -> Never {
    fatalError("Operations: " + message(), file: file, line: line)
}
