/// Something with a place in an order of sequence numbers (unique; smaller is older), served by a
/// ``SequenceLine``.
protocol SequenceOrdered: AnyObject {
    var sequenceNumber: UInt64 { get }
}
