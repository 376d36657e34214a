/// A request's wish to switch protocols (RFC 9110 §7.8): what a proxy that relays the switch
/// must read before it strips `Upgrade` and `Connection` as hop-by-hop fields.
public struct RequestedUpgrade: Sendable, Equatable {
    /// The first protocol the client offers, lower-cased, without its version: `websocket`.
    public let protocolName: String
    /// The client's `Upgrade` field, forwarded on the handshake as it was sent.
    public let value: String

    public init(protocolName: String, value: String) {
        self.protocolName = protocolName
        self.value = value
    }
}

extension RequestHead {
    /// The upgrade an HTTP/1.1 request asks for: an `Upgrade` field, and `upgrade` among the
    /// options of its `Connection` field (RFC 9110 §7.6.1: without it, `Upgrade` is a
    /// hop-by-hop field of a hop that did not mean it). Nil otherwise, and for HTTP/1.0,
    /// which has no Upgrade.
    public var requestedUpgrade: RequestedUpgrade? {
        guard asksUpgrade else { return nil }
        let value = fields.values(named: .upgrade).joined(separator: ", ")
        guard let first = Self.listElements(value).first else { return nil }
        let name = first.split(separator: "/", maxSplits: 1).first.map(String.init) ?? first
        return RequestedUpgrade(protocolName: name.lowercased(), value: value)
    }

    static func listContains(_ values: [String], _ element: String) -> Bool {
        values.contains { value in listElements(value).contains { ASCII.equalsCaseInsensitive($0, element) } }
    }

    /// The elements of a comma-separated list (RFC 9110 §5.6.1), trimmed, empty ones skipped.
    static func listElements(_ value: String) -> [String] {
        var value = value
        return value.withUTF8 { buffer in
            let bytes = UnsafeRawBufferPointer(buffer)
            var elements: [String] = []
            ASCII.forEachListElement(bytes, 0..<bytes.count) { elements.append(ASCII.string(bytes, $0)) }
            return elements
        }
    }
}
