/// The fields of a header or trailer section: ordered, duplicates kept.
///
/// A proxy must forward what it received: folding duplicates into a dictionary loses
/// `Set-Cookie` lines and hides the duplicate `Content-Length` or `Host` lines that request
/// smuggling relies on. Lookups match names ASCII case-insensitively (RFC 9110 §5.1) by
/// comparing bytes, never by building lowercased strings.
public struct HTTPFields: Sendable, Equatable, Hashable {
    @usableFromInline var storage: [HTTPField]

    public init() {
        storage = []
    }

    public init(_ fields: some Sequence<HTTPField>) {
        storage = Array(fields)
    }

    public mutating func reserveCapacity(_ minimumCapacity: Int) {
        storage.reserveCapacity(minimumCapacity)
    }

    public mutating func append(name: String, value: String) {
        storage.append(HTTPField(name: name, value: value))
    }

    public mutating func append(_ field: HTTPField) {
        storage.append(field)
    }

    /// The first value of the field `name`, or nil.
    public subscript(name: String) -> String? {
        firstIndex(named: name).map { storage[$0].value }
    }

    /// Every value of the field `name`, in order of arrival.
    public func values(named name: String) -> [String] {
        storage.compactMap { ASCII.equalsCaseInsensitive($0.name, name) ? $0.value : nil }
    }

    public func contains(_ name: String) -> Bool {
        firstIndex(named: name) != nil
    }

    /// The position of the first field `name`. Reads each name in place: `for field in
    /// storage` (and `contains`/`firstIndex(where:)`) copy every field, retaining and
    /// releasing both of its strings, which was a measurable part of a proxied request.
    @inline(__always)
    func firstIndex(named name: String, from start: Int = 0) -> Int? {
        var index = start
        while index < storage.count {
            if ASCII.equalsCaseInsensitive(storage[index].name, name) { return index }
            index += 1
        }
        return nil
    }

    public mutating func removeAll(named name: String) {
        // Nothing to remove (the usual case): no pass that may copy the storage.
        guard firstIndex(named: name) != nil else { return }
        storage.removeAll { ASCII.equalsCaseInsensitive($0.name, name) }
    }

    public mutating func removeAll(where shouldBeRemoved: (HTTPField) throws -> Bool) rethrows {
        try storage.removeAll(where: shouldBeRemoved)
    }

    /// Replaces every `name` line with one `name: value` line, kept where the first one was
    /// (appended when there was none), so the order of the other fields does not change.
    public mutating func set(name: String, value: String) {
        guard let first = firstIndex(named: name) else {
            storage.append(HTTPField(name: name, value: value))
            return
        }
        storage[first] = HTTPField(name: name, value: value)
        var next = first + 1
        while let index = firstIndex(named: name, from: next) {
            storage.remove(at: index)
            next = index
        }
    }
}

extension HTTPFields: RandomAccessCollection, MutableCollection {
    public typealias Index = Int
    public typealias Element = HTTPField

    public var startIndex: Int { storage.startIndex }
    public var endIndex: Int { storage.endIndex }

    public subscript(position: Int) -> HTTPField {
        get { storage[position] }
        set { storage[position] = newValue }
    }
}

extension HTTPFields: ExpressibleByArrayLiteral {
    public init(arrayLiteral elements: HTTPField...) {
        storage = elements
    }
}

/// `["Host": "example.com", "Accept": "*/*"]`: a dictionary literal keeps its order and its
/// duplicates, which is what a field section is.
extension HTTPFields: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, String)...) {
        storage = elements.map { HTTPField(name: $0.0, value: $0.1) }
    }
}

extension HTTPFields: CustomStringConvertible {
    /// Names only, like `HTTPField.description`: values may be credentials.
    public var description: String {
        "[" + storage.map(\.name).joined(separator: ", ") + "]"
    }
}
