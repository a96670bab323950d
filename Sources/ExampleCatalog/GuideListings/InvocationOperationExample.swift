import Operations

/// Listing 2-1, *Creating an NSInvocationOperation object*: a method that already does the work
/// becomes an operation without a subclass, as an ``InvocationOp``.
///
/// In the Objective-C listing, `taskWithData:` hands `-[NSInvocationOperation
/// initWithTarget:selector:object:]` the object itself, the selector of `myTaskMethod:` and the
/// data. Swift has no selectors: `task(with:)` below passes the target, an unapplied method
/// reference (`TextStatistics.countWords(in:)`) and the argument, and the compiler checks that
/// the method takes a `String` and returns an `Int`. The method can still be chosen at run time,
/// as the guide suggests for selectors picked from user input: any method of the same shape fits.
///
/// Like `NSInvocationOperation`, the operation keeps what the method returned in `result`. Where
/// Foundation raises an exception when there is nothing to read, `result` throws an
/// ``InvocationOpError``: before the operation has finished, or when it was cancelled.
enum InvocationOperationExample {
    /// The guide's `MyCustomClass`: an existing object whose methods do the work, and
    /// `task(with:)`, which packages a call of one of them as an operation.
    ///
    /// It is `Sendable` (immutable), so the operation may call it from a worker thread.
    final class TextStatistics: Sendable {
        /// What separates words.
        let separator: Character

        init(separator: Character = " ") {
            self.separator = separator
        }

        /// The listing's `taskWithData:`: an operation that calls `countWords(in:)` with `text`.
        func task(with text: String) -> InvocationOp<Int> {
            InvocationOp(target: self, invoking: TextStatistics.countWords(in:), with: text)
        }

        /// The listing's `myTaskMethod:`, the method that does the actual work.
        func countWords(in text: String) -> Int {
            text.split(separator: separator).count
        }

        /// Another method of the same shape, to pick at run time instead of `countWords(in:)`.
        func countLetters(in text: String) -> Int {
            text.filter(\.isLetter).count
        }
    }

    static let example = Example(
        name: "invocation-operation",
        title: "Calling an existing method",
        source: "Listing 2-1",
        expected: [
            "result before the operation ran: not finished",
            "words: 9",
            "letters: 35",
            "result of a cancelled operation: cancelled",
        ]
    ) { output in
        let statistics = TextStatistics()
        let sentence = "the quick brown fox jumps over the lazy dog"

        let words = statistics.task(with: sentence)
        // Nothing to read yet: Foundation would raise, `result` throws.
        do {
            _ = try words.result
        } catch InvocationOpError.notFinished {
            output.line("result before the operation ran: not finished")
        } catch {
            output.line("result before the operation ran: \(error)")
        }

        // The method to invoke, chosen at run time, as a selector could be.
        let request = "letters"   // as if the user had picked it
        let method: @Sendable (TextStatistics) -> @Sendable (String) -> Int =
            request == "letters" ? TextStatistics.countLetters(in:) : TextStatistics.countWords(in:)
        let letters = InvocationOp(target: statistics, invoking: method, with: sentence)

        let queue = OpQueue()
        queue.addOperations([words, letters], waitUntilFinished: true)
        output.line("words: \(try words.result)")
        output.line("letters: \(try letters.result)")

        // A cancelled invocation has no result to use, even if its method could have run.
        let abandoned = statistics.task(with: sentence)
        abandoned.cancel()
        queue.addOperation(abandoned)
        abandoned.waitUntilFinished()
        do {
            output.line("result of a cancelled operation: \(try abandoned.result)")
        } catch InvocationOpError.cancelled {
            output.line("result of a cancelled operation: cancelled")
        } catch {
            output.line("result of a cancelled operation: \(error)")
        }
    }
}
