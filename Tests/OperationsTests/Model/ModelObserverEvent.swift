/// One `OpObserver` callback, as recorded and as predicted.
enum ModelObserverEvent: Codable, Hashable, Sendable, CustomStringConvertible {
    case attach
    case willExecute
    case didCancel
    case didProduce(Int)
    case willFinish
    case didFinish

    var description: String {
        switch self {
        case .attach: "didAttach"
        case .willExecute: "willExecute"
        case .didCancel: "didCancel"
        case .didProduce(let op): "didProduce(op\(op))"
        case .willFinish: "willFinish"
        case .didFinish: "didFinish"
        }
    }
}
