/// An operation that finished for good inside a drainer, whose departure from the queue the
/// drainer performs together with taking the next operation (one lock acquisition for both).
struct OpQueueCompletion {
    /// The operation that leaves the queue; its waiters are released once it has left.
    let operation: Op
}
