import Operations

/// Listing 2-3, *Defining a simple operation object*: a subclass of ``Op`` that keeps its input
/// from its initializer, does its work in ``Op/main()`` and exposes the result.
///
/// The Objective-C `MyNonConcurrentOperation` stores `myData` in `initWithData:` and works on it
/// in `main`, inside `@try`/`@catch` so that no exception escapes. Here the input is a constant set
/// by the initializer, `main()` works on it, and errors are caught with `do`/`catch` and kept in
/// the operation, where whoever reads the result finds them: `main()` cannot throw, just as the
/// listing must not rethrow. The queue gives the operation its thread; nothing else is needed,
/// since a non-concurrent operation leaves the rest (executing and finished states, their
/// notifications, dependencies) to the library.
enum NonConcurrentOperationExample {
    /// Why a sum could not be made.
    enum SumError: Error {
        case notANumber(String)
    }

    /// The guide's `MyNonConcurrentOperation`: sums the whole numbers of a line of text.
    final class SumOperation: Op, @unchecked Sendable {
        // @unchecked Sendable (restated from Op, as a subclass must): `text` is a constant of a
        // Sendable type. `total` and `failure` are written only by main(), on the thread the
        // queue runs it on, and read only once the operation has finished: the queue publishes
        // what main() wrote to the threads its waits release (and to dependents and the
        // completion block), so they need no lock. Reading them while the operation runs would
        // be a data race.

        /// The data to work on (the listing's `myData`), given to the initializer.
        let text: String
        /// The sum, once the operation has finished, if every word was a number.
        private(set) var total: Int?
        /// Why there is no sum, once the operation has finished, if a word was not a number.
        private(set) var failure: SumError?

        /// The listing's `initWithData:`.
        init(text: String) {
            self.text = text
            super.init()
        }

        override func main() {
            guard !isCancelled else { return }
            // The listing's @try/@catch: the error is kept, not thrown on.
            do {
                total = try Self.sum(of: text)
            } catch {
                failure = error
            }
        }

        /// The work itself: the sum of the words of `text`, each a whole number.
        static func sum(of text: String) throws(SumError) -> Int {
            var total = 0
            for word in text.split(separator: " ") {
                guard let number = Int(word) else { throw .notANumber(String(word)) }
                total += number
            }
            return total
        }
    }

    static let example = Example(
        name: "non-concurrent-operation",
        title: "Subclassing Op with main()",
        source: "Listing 2-3",
        expected: [
            "\"4 8 15 16 23 42\": sum 108",
            "\"4 8 fifteen 16\": failed, not a number: fifteen",
        ]
    ) { output in
        let operations = [SumOperation(text: "4 8 15 16 23 42"), SumOperation(text: "4 8 fifteen 16")]
        let queue = OpQueue()
        queue.addOperations(operations, waitUntilFinished: true)
        // Finished: their results can be read.
        for operation in operations {
            if let total = operation.total {
                output.line("\"\(operation.text)\": sum \(total)")
            } else if case .notANumber(let word)? = operation.failure {
                output.line("\"\(operation.text)\": failed, not a number: \(word)")
            }
        }
    }
}
